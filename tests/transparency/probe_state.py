#!/usr/bin/env python3
"""Investigation aid (not a ctest test): snapshots what a process inherits and can observe about
itself (fds, process group and session, signal state, limits, credentials, terminal...) natively
and under `nvsentry run`, and prints what differs.

  probe_state.py --nvsentry build/sentry/nvsentry [--tty] [--log-file]
  probe_state.py --snapshot        (prints this process's snapshot as JSON)

Values that differ by design (pid numbers, seccomp mode, namespaces) are normalised or listed
separately. Exit status 1 when something else differs.
"""

import argparse
import errno
import fcntl
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import termios

BY_DESIGN = {"seccomp", "no_new_privs", "mknod char device"}  # the filter denies device mknod


def status_fields():
    out = {}
    with open("/proc/self/status") as f:
        for line in f:
            k, _, v = line.partition(":")
            out[k] = v.strip()
    return out


def snapshot():
    s = {}
    pid = os.getpid()
    pgrp, sid, ppid = os.getpgrp(), os.getsid(0), os.getppid()
    s["pgrp"] = "own pid" if pgrp == pid else ("0 (invisible)" if pgrp == 0 else "another process's")
    s["sid"] = "own pid" if sid == pid else ("0 (invisible)" if sid == 0 else "another process's")
    s["pgrp == parent's pgrp"] = ppid != 0 and pgrp != 0 and os.getpgid(ppid) == pgrp
    s["ppid is 1"] = ppid == 1
    fds = {}
    for fd in sorted(int(x) for x in os.listdir("/proc/self/fd")):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target == f"/proc/{pid}/fd":
            continue  # listdir's own
        if fd > 2:
            fl = fcntl.fcntl(fd, fcntl.F_GETFL)
            fds[str(fd)] = f"{target.split(':')[0]} flags={fl:#o}"
    s["inherited fds above 2"] = fds
    st = status_fields()
    for k in ("SigBlk", "SigIgn", "SigCgt", "SigPnd", "ShdPnd", "CapInh", "CapPrm", "CapEff",
              "CapBnd", "CapAmb", "Cpus_allowed_list", "Mems_allowed_list"):
        s[k] = st.get(k)
    s["seccomp"] = st.get("Seccomp")
    s["no_new_privs"] = st.get("NoNewPrivs")
    s["rlimits"] = {n: resource.getrlimit(getattr(resource, n)) for n in dir(resource)
                    if n.startswith("RLIMIT_")}
    old = os.umask(0)
    os.umask(old)
    s["umask"] = oct(old)
    s["cwd"] = os.getcwd()
    s["uid/gid/groups"] = [os.getresuid(), os.getresgid(), sorted(os.getgroups())]
    s["nice"] = os.getpriority(os.PRIO_PROCESS, 0)
    s["sched"] = [os.sched_getscheduler(0)]
    with open("/proc/self/oom_score_adj") as f:
        s["oom_score_adj"] = f.read().strip()
    with open("/proc/self/cgroup") as f:
        s["cgroup"] = f.read().strip()
    s["environ keys"] = sorted(os.environ)
    s["stdin isatty"] = os.isatty(0)
    try:
        with open("/dev/tty", "rb") as t:
            fg = os.tcgetpgrp(t.fileno())
            s["/dev/tty"] = "opens"
            s["tty foreground pgrp"] = ("own pgrp" if fg == pgrp and fg != 0 else
                                        "0 (invisible)" if fg == 0 else "another group")
    except OSError as e:
        s["/dev/tty"] = errno.errorcode.get(e.errno, str(e.errno))
    # Operations a root process may do natively.
    with tempfile.TemporaryDirectory() as d:
        for name, fn in (
            ("mknod char device", lambda: os.mknod(os.path.join(d, "c"), 0o600 | 0o020000, os.makedev(1, 3))),
            ("mkfifo", lambda: os.mkfifo(os.path.join(d, "p"))),
        ):
            try:
                fn()
                s[name] = "ok"
            except OSError as e:
                s[name] = errno.errorcode.get(e.errno, str(e.errno))
    # Who a signal to our own process group reaches, seen from outside: the harness checks that
    # the run survives it. (SIGWINCH: ignored by default, so harmless natively.)
    return s


def run(cmd, tty):
    kw = {}
    if tty:
        master, slave = os.openpty()
        kw = dict(stdin=slave, start_new_session=True,
                  preexec_fn=lambda: fcntl.ioctl(0, termios.TIOCSCTTY, 0))
    else:
        kw = dict(stdin=subprocess.DEVNULL, start_new_session=True)
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)
    if tty:
        os.close(slave)
        os.close(master)
    if p.returncode != 0:
        raise SystemExit(f"{cmd}: exit status {p.returncode}\n{p.stderr}")
    return json.loads(p.stdout)


def killpg_survival(nvsentry, python):
    """Does a signal the program sends to its own process group stay inside the program?"""
    code = ("import os, signal, time\n"
            "got = []\n"
            "for s in (signal.SIGUSR1, signal.SIGINT):\n"
            "    signal.signal(s, lambda n, f: got.append(n))\n"
            "os.killpg(os.getpgrp(), signal.SIGUSR1)\n"
            "os.kill(0, signal.SIGINT)\n"
            "time.sleep(0.5)\n"
            "print(sorted(got))\n")
    return run_both(nvsentry, python, code)


def tstp_survival(nvsentry, python):
    """A program that handles SIGTSTP and sends it to its own process group, then opens a file."""
    code = ("import os, signal, time\n"
            "signal.signal(signal.SIGTSTP, lambda n, f: None)\n"
            "os.kill(0, signal.SIGTSTP)\n"
            "time.sleep(0.2)\n"
            "open('/etc/hostname').close()\n"
            "print('opened a file afterwards')\n")
    # In a process group of our session, as a shell's job is: the kernel drops stop signals
    # sent to an orphaned group (which a new session's only group is).
    return run_both(nvsentry, python, code, new_session=False)


def run_both(nvsentry, python, code, timeout=10, new_session=True):
    out = {}
    for side, prefix in (("native", []), ("sandbox", [nvsentry, "run", "--"])):
        group = dict(start_new_session=True) if new_session else dict(process_group=0)
        p = subprocess.Popen(prefix + [python, "-c", code], stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **group)
        try:
            text, _ = p.communicate(timeout=timeout)
            out[side] = f"exit status {p.returncode}, output {text.strip()!r}"
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)  # the group we made for it
            p.communicate()
            out[side] = f"still running after {timeout}s (killed)"
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--snapshot", action="store_true")
    ap.add_argument("--nvsentry")
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--tty", action="store_true", help="give both a fresh controlling terminal")
    ap.add_argument("--log-file", action="store_true", help="run nvsentry with --log-file")
    a = ap.parse_args()
    if a.snapshot:
        json.dump(snapshot(), sys.stdout, indent=1, sort_keys=True)
        return 0
    if not a.nvsentry:
        ap.error("--nvsentry is required unless --snapshot")
    me = [a.python, os.path.abspath(__file__), "--snapshot"]
    sentry = [a.nvsentry, "run"]
    if a.log_file:
        sentry.append(f"--log-file={tempfile.mktemp(prefix='nvsentry-probe-', suffix='.log')}")
    native = run(me, a.tty)
    sandbox = run(sentry + ["--"] + me, a.tty)
    differ = 0
    for k in sorted(set(native) | set(sandbox)):
        n, s = native.get(k), sandbox.get(k)
        if n == s:
            continue
        tag = "by design" if k in BY_DESIGN else "DIFFERS"
        differ += tag == "DIFFERS"
        print(f"{tag:9} {k}:\n            native : {n}\n            sandbox: {s}")
    for what, fn in (("killpg(getpgrp(), SIGUSR1); kill(0, SIGINT), both handled", killpg_survival),
                     ("kill(0, SIGTSTP) handled, then open()", tstp_survival)):
        k = fn(a.nvsentry, a.python)
        if k["native"] != k["sandbox"]:
            differ += 1
            print(f"DIFFERS   signal to own process group: {what}:\n"
                  f"            native : {k['native']}\n            sandbox: {k['sandbox']}")
    print(f"{differ} difference(s)")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
