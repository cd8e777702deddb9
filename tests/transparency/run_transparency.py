#!/usr/bin/env python3
"""Transparency check: one CPython regression-test module, natively and under `nvsentry run`.

For MODULE, runs `python3 -m test -v MODULE` (through regrtest_driver.py, which records each
test's outcome in a side file) natively, then the same command under `nvsentry run --`, and
compares the per-test outcomes (ok / FAIL / ERROR / skipped / expected failure / unexpected
success, plus TIMEOUT and CRASH when the run itself broke) and regrtest's overall result. The
tests that differ are run once more on both sides (only those); a difference that remains is
reported with both sides' tracebacks and output, and makes the exit status 1.

Exit status: 0 identical, 1 a confirmed difference, 2 the harness could not run.
"""

import argparse
import fcntl
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import termios
import time
from dataclasses import dataclass, field

HERE = os.path.dirname(os.path.abspath(__file__))
DRIVER = os.path.join(HERE, "regrtest_driver.py")

REGRTEST_KEY = "[regrtest result]"
SETUP_HOLDER = re.compile(r"^(setUpClass|tearDownClass|setUpModule|tearDownModule) \((.+)\)$")
SUBTEST = re.compile(r"^(\S+) \((.*)\)$", re.S)

# Grace on top of the driver's own per-test watchdog before the harness kills the whole run.
KILL_GRACE = 30.0
MAX_SEGMENTS = 8  # restarts after a hung or crashed test, per run
MAX_DETAILED = 25  # differences reported with tracebacks and output; the rest by id only
# Run directories (in the work dir, one per segment: n1, n2... ): equal lengths on both sides.
DIR_NAMES = {"native": "n", "sandbox": "s", "native-rerun": "N", "sandbox-rerun": "S"}


@dataclass
class Outcome:
    kind: str
    detail: str = ""
    excerpt: str = ""
    seconds: float = 0.0


@dataclass
class Run:
    side: str
    label: str
    wall: float = 0.0
    outcomes: dict = field(default_factory=dict)   # id -> Outcome
    states: list = field(default_factory=list)     # regrtest "Tests result" per segment
    warnings: list = field(default_factory=list)   # regrtest "Warning -- ..." lines
    module_skip: str = ""
    exit_codes: list = field(default_factory=list)
    dirs: list = field(default_factory=list)

    def kinds(self):
        k = {i: o.kind for i, o in self.outcomes.items()}
        k[REGRTEST_KEY] = " + ".join(self.states) or "no result"
        return KindMap(k)


class KindMap(dict):
    """Outcome kinds by id; get() names what an absent id means."""

    def get(self, tid, default=None):
        if tid in self:
            return self[tid]
        sm = SUBTEST.match(tid)
        if sm and sm.group(1) in self and self[sm.group(1)] not in ("TIMEOUT",) \
                and not self[sm.group(1)].startswith("CRASH"):
            return "passed (subtests report only failures)"
        return "not run"


def read_events(path):
    events = []
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                line = line.strip()
                if not line:
                    continue
                try:
                    events.append(json.loads(line))
                except ValueError:
                    pass  # a line cut short by a kill
    except FileNotFoundError:
        pass
    return events


def log_slice(log_path, start, stop, limit=6000):
    if start is None or start < 0:
        return ""
    try:
        with open(log_path, "rb") as f:
            f.seek(start)
            data = f.read((stop - start) if stop is not None and stop >= start else 1 << 20)
    except OSError:
        return ""
    text = data.decode("utf-8", "replace")
    if len(text) > limit:
        text = text[: limit // 2] + "\n[... output cut ...]\n" + text[-limit // 2:]
    return text


def tail(path, limit=4000):
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - limit))
            return f.read().decode("utf-8", "replace")
    except OSError:
        return ""


class Harness:
    def __init__(self, opts):
        self.o = opts
        # Short, and the same length for every run: some tests depend on the length of their
        # working directory's path (test_socket's AF_UNIX binds below it must fit 108 bytes).
        self.workdir = opts.workdir or tempfile.mkdtemp(prefix="nvs-tr-")
        os.makedirs(self.workdir, exist_ok=True)
        # The host ids both sides run as (nvsentry maps its guest's root to nobody when started by
        # root): their run directories must be theirs.
        self.owner = None
        if opts.native_wrapper and os.geteuid() == 0:
            uid, gid = (int(x) for x in subprocess.check_output(
                [opts.native_wrapper, "--print"], text=True).split())
            if uid != 0:
                self.owner = (uid, gid)
                os.chmod(self.workdir, 0o755)

    # ---- running -------------------------------------------------------------------------------

    def command(self, side, seg_dir, events, tmp, match_file, ignore_file):
        o = self.o
        cmd = [o.python, DRIVER, events, str(o.per_test_timeout), "-v", f"--tempdir={tmp}"]
        if match_file:
            cmd += ["--matchfile", match_file]
        if ignore_file:
            cmd += ["--ignorefile", ignore_file]
        for m in o.match or []:
            cmd += ["-m", m]
        if o.testdir:
            cmd.append(f"--testdir={o.testdir}")
        cmd.append(o.module)
        if side == "sandbox":
            cmd = [o.nvsentry, "run", f"--log-level={o.sentry_log_level}",
                   f"--log-file={os.path.join(seg_dir, 'nvsentry.log')}", "--"] + cmd
        elif o.native_wrapper:
            cmd = [o.native_wrapper, "--"] + cmd
        return cmd

    def run_segment(self, side, seg_dir, match_file, ignore_file):
        """One process: returns (events, log path, exit code, killed by us)."""
        os.makedirs(seg_dir, exist_ok=True)
        if self.owner:
            os.chown(seg_dir, *self.owner)
        events = os.path.join(seg_dir, "events.jsonl")
        log = os.path.join(seg_dir, "output.log")
        tmp = os.path.join(seg_dir, "t")
        cmd = self.command(side, seg_dir, events, tmp, match_file, ignore_file)
        with open(os.path.join(seg_dir, "command"), "w") as f:
            f.write(" ".join(cmd) + "\n")
        logf = open(log, "ab")
        stdin, preexec, master = subprocess.DEVNULL, None, None
        if self.o.tty:
            # A fresh terminal as stdin and controlling terminal of a new session, as when the
            # suite is started from an interactive shell (output still goes to the log).
            master, slave = os.openpty()
            stdin = slave

            def preexec():
                fcntl.ioctl(0, termios.TIOCSCTTY, 0)
        proc = subprocess.Popen(cmd, stdin=stdin, stdout=logf, stderr=subprocess.STDOUT,
                                cwd=seg_dir, start_new_session=True, preexec_fn=preexec)
        logf.close()
        if master is not None:
            os.close(slave)
            os.set_blocking(master, False)
        killed = False
        # Events stop when a test hangs; the driver's own watchdog should end the run first.
        limit = self.o.per_test_timeout + KILL_GRACE
        last_size, last_change = -1, time.monotonic()
        # Waits without reaping, so that the process's id (which is also its group's) stays
        # reserved until the leftovers in its group are killed.
        def exited():
            return os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None

        while not exited():
            time.sleep(0.25)
            if master is not None:
                try:
                    os.read(master, 65536)  # nothing should be written there; don't let it block
                except (BlockingIOError, OSError):
                    pass
            try:
                size = os.path.getsize(events)
            except OSError:
                size = 0
            now = time.monotonic()
            if size != last_size:
                last_size, last_change = size, now
            elif now - last_change > limit:
                killed = True
                os.killpg(proc.pid, signal.SIGKILL)
                while not exited():
                    time.sleep(0.05)
                break
        # Tests may leave processes behind in the group (natively they would outlive the run).
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        rc = proc.wait()
        if master is not None:
            os.close(master)
        return read_events(events), log, rc, killed

    def run(self, side, label, match_ids=None):
        run = Run(side, label)
        match_file = None
        if match_ids:
            match_file = os.path.join(self.workdir, f"{label}.match")
            with open(match_file, "w") as f:
                f.write("\n".join(sorted(match_ids)) + "\n")
        done_ids = set()
        t0 = time.monotonic()
        for seg in range(1, MAX_SEGMENTS + 1):
            seg_dir = os.path.join(self.workdir, f"{DIR_NAMES[label]}{seg}")
            ignore_file = None
            if done_ids:
                ignore_file = os.path.join(seg_dir + ".ignore")
                with open(ignore_file, "w") as f:
                    f.write("\n".join(sorted(done_ids)) + "\n")
            events, log, rc, killed = self.run_segment(side, seg_dir, match_file, ignore_file)
            run.dirs.append(seg_dir)
            run.exit_codes.append(rc)
            open_test = self.collect(run, events, log)
            text = tail(log, 1 << 16)
            m = re.findall(r"^== Tests result: (.+) ==$", text, re.M)
            for line in re.findall(r"^(?:\d+:\d+:\d+ )?(?:load avg: [\d.]+ )?(Warning -- .+)$", text, re.M):
                run.warnings.append(line)
            ms = re.search(r"^(?:\d+:\d+:\d+ )?(?:load avg: [\d.]+ )?%s skipped -- (.+)$" % re.escape(self.o.module),
                           text, re.M)
            if ms:
                run.module_skip = ms.group(1)
            if m:
                state = m[-1]
                if run.module_skip:
                    state += f" (module skipped: {run.module_skip})"
                run.states.append(state)
                break
            # The process ended without regrtest's summary: a test hung or took it down.
            if open_test is None:
                why = (f"killed by the harness after {self.o.per_test_timeout + KILL_GRACE:.0f}s "
                       f"without progress" if killed else f"exit status {rc}")
                run.states.append(f"ended without a result ({why})")
                break
            timed_out = killed or "Timeout (" in tail(log, 1 << 20)
            kind = "TIMEOUT" if timed_out else f"CRASH (exit status {rc})"
            start_ev = open_test
            run.outcomes[start_ev["id"]] = Outcome(
                kind, detail=("killed by the harness" if killed else ""),
                excerpt=log_slice(log, start_ev.get("off"), None),
                seconds=time.monotonic() - t0)
            run.states.append(kind.lower().split(" ")[0])
            done_ids |= {e["id"] for e in events if e.get("ev") == "start"}
            print(f"  [{label}] {start_ev['id']}: {kind}; carrying on after it", flush=True)
        run.wall = time.monotonic() - t0
        return run

    def collect(self, run, events, log):
        """Folds one segment's events into run.outcomes; returns the start event of a test that
        never stopped (the process ended inside it), or None."""
        open_start = None
        starts = {}
        sub_failed = {}
        for e in events:
            ev = e.get("ev")
            if ev == "start":
                starts[e["id"]] = e
                open_start = e
            elif ev == "outcome":
                oid = e["id"]
                if e.get("sub"):
                    sub_failed.setdefault(e.get("parent", oid), []).append(e)
                prev = run.outcomes.get(oid)
                detail = e.get("detail", "")
                kind = e["outcome"]
                # A test can be reported twice (an error in tearDown after a failure): keep the worst.
                if prev is not None and prev.kind not in ("ok",):
                    kind = prev.kind if prev.kind == kind else f"{prev.kind}+{kind}"
                    detail = prev.detail + "\n" + detail
                run.outcomes[oid] = Outcome(kind, detail)
            elif ev == "stop":
                tid = e["id"]
                s = starts.get(tid)
                excerpt = log_slice(log, s.get("off") if s else None, e.get("off"))
                secs = e["t"] - s["t"] if s else 0.0
                o = run.outcomes.get(tid)
                if o is None:
                    subs = sub_failed.get(tid)
                    kind = "FAIL (subtests)" if subs else "no outcome"
                    o = run.outcomes[tid] = Outcome(kind)
                o.excerpt, o.seconds = excerpt, secs
                for se in sub_failed.get(tid, []):
                    so = run.outcomes.get(se["id"])
                    if so is not None:
                        so.excerpt, so.seconds = excerpt, secs
                if open_start is not None and open_start["id"] == tid:
                    open_start = None
        return open_start

    # ---- comparing -----------------------------------------------------------------------------

    @staticmethod
    def differing(a, b):
        ka, kb = a.kinds(), b.kinds()
        return sorted(i for i in set(ka) | set(kb) if ka.get(i) != kb.get(i))

    def rerun_patterns(self, ids):
        """The regrtest --matchfile patterns that re-run `ids`, or None for the whole module."""
        tests = [i for i in ids if i != REGRTEST_KEY]
        if not tests:
            return None  # only the overall result differs (say, ENV_CHANGED): run it all again
        pats = set()
        for i in tests:
            m = SETUP_HOLDER.match(i)
            if m:
                if m.group(1).endswith("Module"):
                    return None
                pats.add(m.group(2) + ".*")
                continue
            # A subtest's id is "parent (params)": re-run the parent.
            sm = SUBTEST.match(i)
            pats.add(sm.group(1) if sm and "." in sm.group(1) else i)
        return pats

    def describe(self, run, tid):
        o = run.outcomes.get(tid)
        if tid == REGRTEST_KEY:
            lines = [f"    regrtest result: {' + '.join(run.states)}"]
            lines += [f"    {w}" for w in run.warnings]
            if run.dirs and any(s.startswith("ended without") for s in run.states):
                lines.append("    -- end of its output --\n" +
                             indent(tail(os.path.join(run.dirs[-1], "output.log"), 3000).rstrip()))
            return "\n".join(lines)
        if o is None:
            return "    (not run)"
        out = []
        if o.detail:
            out.append("    -- detail --\n" + indent(o.detail.rstrip()))
        if o.excerpt.strip():
            out.append("    -- output --\n" + indent(o.excerpt.rstrip()))
        return "\n".join(out)

    def main(self):
        o = self.o
        print(f"== {o.module}: native run", flush=True)
        native = self.run("native", "native")
        if not native.outcomes and not native.module_skip:
            # Nothing ran natively (the interpreter cannot start, the module is missing): a
            # sandboxed run that fails the same way would compare as identical.
            print(f"the native run of {o.module} ran no test ({' + '.join(native.states)}); its "
                  f"output:\n{indent(tail(os.path.join(native.dirs[-1], 'output.log'), 3000))}",
                  flush=True)
            return 2
        print(f"== {o.module}: sandboxed run", flush=True)
        sandbox = self.run("sandbox", "sandbox")
        diff = self.differing(native, sandbox)
        rerun_n = rerun_s = None
        confirmed, flaky = diff, []
        if diff:
            print(f"== {o.module}: {len(diff)} outcome(s) differ; re-running them on both sides",
                  flush=True)
            pats = self.rerun_patterns(diff)
            rerun_n = self.run("native", "native-rerun", pats)
            rerun_s = self.run("sandbox", "sandbox-rerun", pats)
            kn, ks = rerun_n.kinds(), rerun_s.kinds()
            confirmed, flaky = [], []
            for i in diff:
                if i == REGRTEST_KEY and pats is not None:
                    # A partial re-run's overall result only mirrors the tests it ran.
                    if self.differing(rerun_n, rerun_s) and kn.get(i) != ks.get(i):
                        confirmed.append(i)
                    else:
                        flaky.append(i)
                    continue
                (confirmed if kn.get(i) != ks.get(i) else flaky).append(i)

        self.report(native, sandbox, diff, confirmed, flaky, rerun_n, rerun_s)
        if o.json_report:
            with open(o.json_report, "w") as f:
                json.dump(self.summary(native, sandbox, confirmed, flaky), f, indent=1)
        if confirmed:
            print(f"\nlogs kept in {self.workdir} (n1, n2...: native runs, s1...: sandboxed, N1/S1: "
                  f"the re-runs; each has command, output.log, events.jsonl, and nvsentry.log "
                  f"when sandboxed)")
            return 1
        if not o.keep and not o.workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)
        return 0

    def summary(self, native, sandbox, confirmed, flaky):
        def side(r):
            counts = {}
            for v in r.outcomes.values():
                counts[v.kind] = counts.get(v.kind, 0) + 1
            return {"wall": round(r.wall, 2), "counts": counts, "result": r.states,
                    "outcomes": {i: v.kind for i, v in r.outcomes.items()}}
        return {"module": self.o.module, "native": side(native), "sandbox": side(sandbox),
                "confirmed": confirmed, "flaky": flaky}

    def report(self, native, sandbox, diff, confirmed, flaky, rerun_n, rerun_s):
        o = self.o

        def counts(r):
            c = {}
            for v in r.outcomes.values():
                c[v.kind] = c.get(v.kind, 0) + 1
            return ", ".join(f"{n} {k}" for k, n in sorted(c.items(), key=lambda x: -x[1]))

        print()
        print(f"== {o.module}")
        print(f"  native : {native.wall:7.1f}s  {counts(native)}; regrtest: {' + '.join(native.states)}")
        print(f"  sandbox: {sandbox.wall:7.1f}s  {counts(sandbox)}; regrtest: {' + '.join(sandbox.states)}")
        ratio = sandbox.wall / native.wall if native.wall > 0 else 0
        print(f"TIMING {o.module} native={native.wall:.1f}s sandbox={sandbox.wall:.1f}s ratio={ratio:.2f}")
        # Skip reasons are not outcomes, but a different reason is worth a look.
        for i in sorted(set(native.outcomes) & set(sandbox.outcomes)):
            a, b = native.outcomes[i], sandbox.outcomes[i]
            if a.kind == b.kind == "skipped" and a.detail != b.detail:
                print(f"  note: {i} skipped for different reasons: native {a.detail!r}, "
                      f"sandbox {b.detail!r}")
        if flaky:
            print(f"  {len(flaky)} difference(s) did not repeat when re-run (treated as flaky):")
            for i in flaky:
                print(f"    {i}: first native={native.kinds().get(i)} "
                      f"sandbox={sandbox.kinds().get(i)}; re-run native="
                      f"{rerun_n.kinds().get(i)} sandbox={rerun_s.kinds().get(i)}")
                for label, r in (("native", native), ("sandbox", sandbox)):
                    first = r.outcomes.get(i)
                    last = [ln for ln in (first.detail if first else "").splitlines() if ln.strip()]
                    if last and first.kind != "skipped":
                        print(f"      first {label}: {last[-1].strip()[:300]}")
        if not confirmed:
            print(f"RESULT {o.module}: IDENTICAL ({len(native.outcomes)} tests)")
            return
        print(f"RESULT {o.module}: {len(confirmed)} DIFFERENCE(S)")
        kn, ks = native.kinds(), sandbox.kinds()
        rn, rs = rerun_n.kinds(), rerun_s.kinds()
        detailed = 0
        for i in confirmed:
            print(f"\n--- {i}")
            print(f"    native: {kn.get(i)} (re-run: {rn.get(i)})   "
                  f"sandbox: {ks.get(i)} (re-run: {rs.get(i)})")
            if detailed >= MAX_DETAILED:
                continue
            detailed += 1
            # Show the re-run's evidence when it has some, else the first run's; a side whose test
            # passed or did not run has nothing to show.
            for label, first, again in (("sandbox", sandbox, rerun_s), ("native", native, rerun_n)):
                src = again if (i in again.outcomes or i == REGRTEST_KEY) else first
                if i != REGRTEST_KEY and src.outcomes.get(i, Outcome("ok")).kind == "ok":
                    continue
                text = self.describe(src, i)
                if text.strip():
                    print(f"  [{label}{' re-run' if src is again else ''}]")
                    print(text)
        if detailed < len(confirmed):
            print(f"\n({len(confirmed) - detailed} more differences listed without details; "
                  f"the logs are in {self.workdir})")


def indent(text, prefix="    | "):
    return "\n".join(prefix + line for line in text.splitlines())


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--nvsentry", required=True, help="the nvsentry binary")
    p.add_argument("--native-wrapper",
                   help="runs the native side under the guest's identity (same_identity)")
    p.add_argument("--python", default="python3", help="the interpreter whose test package runs")
    p.add_argument("--module", required=True, help="regression test module, e.g. test_os")
    p.add_argument("--per-test-timeout", type=float, default=40.0,
                   help="seconds one test may take before it counts as hung (default 40)")
    p.add_argument("--sentry-log-level", default="info", help="nvsentry --log-level for the runs")
    p.add_argument("--match", action="append", help="regrtest -m pattern (for investigating)")
    p.add_argument("--testdir", help="regrtest --testdir: where MODULE lives (the harness's self-test)")
    p.add_argument("--workdir", help="where runs keep their logs (default: a fresh temp dir)")
    p.add_argument("--keep", action="store_true", help="keep the logs even when identical")
    p.add_argument("--tty", action="store_true",
                   help="give both runs a fresh pseudo-terminal as stdin and controlling terminal")
    p.add_argument("--json-report", help="write a machine-readable summary here")
    return p.parse_args(argv)


if __name__ == "__main__":
    opts = parse_args(sys.argv[1:])
    # The runs start in their own directories: relative paths would not resolve there.
    opts.nvsentry = os.path.abspath(opts.nvsentry)
    if opts.native_wrapper:
        opts.native_wrapper = os.path.abspath(opts.native_wrapper)
    if not os.access(opts.nvsentry, os.X_OK):
        print(f"nvsentry binary {opts.nvsentry} is not executable", file=sys.stderr)
        sys.exit(2)
    sys.exit(Harness(opts).main())
