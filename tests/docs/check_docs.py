#!/usr/bin/env python3
"""The documentation's commands, run and held to what the documentation says they print.

ctest `docs` (label docs) runs this on README.md and docs/*.md; `docs.selftest` runs it on the
planted pages in tests/docs/selftest/ and expects each planted stale line to be reported.

What it checks:
  * A fenced block whose info string is `sh doc-test` is run, as one bash script
    (`set -eo pipefail`), from the repository's root as the documentation writes it: the
    commands run in a fresh workspace directory that holds a symbolic link to each top-level
    entry of the source tree and `build`, a link to the build directory under test. So
    `build/sentry/nvsentry ...` and `docs/policy-example.toml` resolve as they do for a reader
    in a checkout built the documented way, while whatever a command writes (`--frames=out`,
    `p.toml`) lands in the workspace, which is removed at the end (nothing is left in /tmp:
    TMPDIR points into the workspace). The blocks of one page run in order in one workspace,
    so a later block may use what an earlier one wrote. `sh doc-test exit=N` expects status N
    (default 0).
  * A fenced block whose info string is `text doc-output`, directly after a doc-test block
    (blank lines between are allowed), is what that command prints. Each of its non-blank
    lines must appear as a whole line of the command's output, in the order given (standard
    output and standard error are each read in order; a line may come from either). In an
    expected line `...` stands for any text; a time in angle brackets (`<0.000021>`) matches
    any time, and `[pid N]` any pid, so traces can be shown as they print.
  * Every `ctest` command in the pages (inline code or a code block) that selects tests with
    -R, -E, -L or -LE must say where it runs (`ctest --test-dir build ...` or
    `cd build && ctest ...`; from the repository's root a bare `ctest` finds no tests and
    passes), and must select at least one test of the build (`ctest -N`).

Usage: check_docs.py SOURCE_DIR BUILD_DIR [PAGE...]   (pages default to README.md, docs/*.md)
"""
import glob
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile

FENCE = re.compile(r"^(`{3,})(.*)$")
INLINE = re.compile(r"`([^`\n]+)`")
CTEST = re.compile(r"(?:^|[\s:;(])((?:cd \S+ && )?ctest(?: [^#\n]*)?)")
SELECTORS = {"-R", "-E", "-L", "-LE", "--tests-regex", "--exclude-regex", "--label-regex",
             "--label-exclude"}
BLOCK_TIMEOUT = 60


class Page:
    def __init__(self, path, shown):
        self.path = path
        self.shown = shown  # the name in messages (relative to the source root)
        with open(path, encoding="utf-8") as f:
            self.lines = f.read().split("\n")

    def blocks(self):
        """(first line number, info string, body lines, line after it) of each fenced block."""
        out, i = [], 0
        while i < len(self.lines):
            m = FENCE.match(self.lines[i])
            if not m:
                i += 1
                continue
            fence, info, start = m.group(1), m.group(2).strip(), i + 1
            j = start
            while j < len(self.lines) and not self.lines[j].startswith(fence):
                j += 1
            out.append((start, info, self.lines[start:j], j + 1))
            i = j + 1
        return out


def expected_matches(expected, actual):
    """An expected line (with its wildcards) against one line of output."""
    parts = []
    for piece in re.split(r"(\.\.\.|<\d+\.\d+>|\[pid \d+\])", expected):
        if piece == "...":
            parts.append(".*")
        elif piece.startswith("<") and piece.endswith(">"):
            parts.append(r"<\d+\.\d+>")
        elif piece.startswith("[pid "):
            parts.append(r"\[pid (\d+|-)\]")
        else:
            parts.append(re.escape(piece))
    return re.fullmatch("".join(parts), actual) is not None


def check_output(expected_lines, out, err):
    """The expected lines missing from the output (each stream read in order), as messages."""
    streams = {"stdout": [out.split("\n"), 0], "stderr": [err.split("\n"), 0]}
    missing = []
    for want in expected_lines:
        if not want.strip():
            continue
        found = False
        for stream in streams.values():
            lines, at = stream
            for k in range(at, len(lines)):
                if expected_matches(want, lines[k]):
                    stream[1] = k + 1
                    found = True
                    break
            if found:
                break
        if not found:
            missing.append(want)
    return missing


def make_workspace(source, build, parent):
    ws = tempfile.mkdtemp(prefix="docs-", dir=parent)
    # The guest of `nvsentry run` started as root is nobody (docs/security.md): it must be able
    # to enter and write the directory it is started in, as a reader's checkout would let it.
    os.chmod(ws, 0o777)
    for entry in os.listdir(source):
        if entry in ("build", ".git") or entry.startswith("build-"):
            continue
        os.symlink(os.path.join(source, entry), os.path.join(ws, entry))
    os.symlink(build, os.path.join(ws, "build"))
    tmp = os.path.join(ws, "tmp")
    os.mkdir(tmp)
    os.chmod(tmp, 0o1777)
    return ws


def doc_tests(page):
    """(line, body, expected exit status, expected output lines or None) of each doc-test."""
    blocks = page.blocks()
    for n, (start, info, body, end) in enumerate(blocks):
        words = info.split()
        if words[:1] != ["sh"] or "doc-test" not in words[1:]:
            continue
        status = 0
        for w in words[1:]:
            if w.startswith("exit="):
                status = int(w[5:])
        expected = None
        if n + 1 < len(blocks):
            nstart, ninfo, nbody, _ = blocks[n + 1]
            between = page.lines[end:nstart - 1]
            if ninfo.split()[:2] == ["text", "doc-output"] and not any(l.strip() for l in between):
                expected = nbody
        yield start, body, status, expected


def run_script(body, ws, env):
    """(status, stdout, stderr) of the block run by bash in `ws`; None when it took too long (all
    it started is killed then: it runs in a session of its own)."""
    p = subprocess.Popen(["bash", "-c", "set -eo pipefail\n" + "\n".join(body) + "\n"], cwd=ws,
                         env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, errors="replace",
                         start_new_session=True)
    try:
        out, err = p.communicate(timeout=BLOCK_TIMEOUT)
        return p.returncode, out, err
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        return None


def run_blocks(page, ws, env):
    failures = []
    for start, body, want_status, expected in doc_tests(page):
        where = f"{page.shown}:{start}"
        result = run_script(body, ws, env)
        if result is None:
            failures.append(f"{where}: did not finish within {BLOCK_TIMEOUT} s:\n  " +
                            "\n  ".join(body))
            continue
        status, out, err = result
        problems = []
        if status != want_status:
            problems.append(f"exit status {status}, the page expects {want_status}")
        for line in check_output(expected or [], out, err):
            problems.append(f"the page shows a line it did not print: {line}")
        if problems:
            failures.append(f"{where}: " + "\n  ".join(
                ["\n  ".join(body)] + problems + ["its standard output:"] +
                ["  | " + l for l in out.rstrip("\n").split("\n")] +
                ["its standard error:"] + ["  | " + l for l in err.rstrip("\n").split("\n")]))
        else:
            print(f"ok   {where}: {body[0].strip()}{' ...' if len(body) > 1 else ''}")
    return failures


def ctest_commands(page):
    """(line number, command text) of every ctest command in the page."""
    found = []
    in_block = None
    for i, line in enumerate(page.lines, 1):
        m = FENCE.match(line)
        if m:
            in_block = None if in_block else m.group(1)
            continue
        # In a block, a command may also sit in a comment ("... # or: ctest ...").
        spans = [line] if in_block else INLINE.findall(line)
        for span in spans:
            for m in CTEST.finditer(span):
                found.append((i, m.group(1).strip()))
    return found


def check_ctest(page, ws, ctest):
    failures = []
    for line, command in ctest_commands(page):
        where = f"{page.shown}:{line}"
        try:
            words = shlex.split(command)
        except ValueError:
            failures.append(f"{where}: cannot read `{command}`")
            continue
        directory = None
        if words[0] == "cd":
            directory, words = words[1], words[3:]
        args = words[1:]
        selecting = [a for a in args if a in SELECTORS]
        if not selecting:
            continue
        if "--test-dir" in args:
            directory = args[args.index("--test-dir") + 1]
        if directory is None:
            failures.append(f"{where}: `{command}` from the repository's root finds no tests and "
                            "passes: write `ctest --test-dir build ...` or `cd build && ctest ...`")
            continue
        keep = []
        k = 0
        while k < len(args):
            if args[k] in SELECTORS and k + 1 < len(args):
                keep += args[k:k + 2]
                k += 2
            else:
                k += 1
        r = subprocess.run([ctest, "--test-dir", os.path.join(ws, directory), "-N"] + keep,
                           capture_output=True, text=True)
        m = re.search(r"Total Tests: (\d+)", r.stdout)
        if r.returncode != 0 or not m or int(m.group(1)) == 0:
            failures.append(f"{where}: `{command}` selects no test of the build "
                            f"({m.group(0) if m else r.stdout.strip() or r.stderr.strip()})")
        else:
            print(f"ok   {where}: `{command}` selects {m.group(1)} tests")
    return failures


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__.strip().split("\n")[-1])
    source, build = os.path.realpath(sys.argv[1]), os.path.realpath(sys.argv[2])
    pages = sys.argv[3:] or [os.path.join(source, "README.md")] + sorted(
        glob.glob(os.path.join(source, "docs", "*.md")))
    ctest = os.environ.get("CTEST_COMMAND") or shutil.which("ctest") or "ctest"
    parent = os.path.join(build, "tests", "docs")
    os.makedirs(parent, exist_ok=True)
    failures = []
    for path in pages:
        page = Page(path, os.path.relpath(path, source))
        ws = make_workspace(source, build, parent)
        try:
            # The C locale: sorted lists and messages read as the pages show them.
            env = dict(os.environ, TMPDIR=os.path.join(ws, "tmp"), LC_ALL="C")
            failures += run_blocks(page, ws, env)
            failures += check_ctest(page, ws, ctest)
        finally:
            shutil.rmtree(ws, ignore_errors=True)
    if failures:
        print(f"\n{len(failures)} stale place(s) in the documentation:\n", file=sys.stderr)
        for f in failures:
            print("FAIL " + f + "\n", file=sys.stderr)
        sys.exit(1)
    print("the documentation's commands print what it says")


if __name__ == "__main__":
    main()
