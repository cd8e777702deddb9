#!/usr/bin/env python3
"""ctest `docs.selftest`: check_docs.py can fail. On selftest/fresh.md (commands that print what
the page says, with the wildcards, exit statuses, a shared workspace and both ways of saying where
ctest runs) it must pass; on selftest/stale.md it must fail, reporting each planted stale place:
an output line the command no longer prints, a command that fails, a ctest line run from the
repository's root, and one that selects no test.

Usage: selftest.py SOURCE_DIR BUILD_DIR
"""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def check(page, source, build):
    return subprocess.run(
        [sys.executable, os.path.join(HERE, "check_docs.py"), source, build,
         os.path.join(HERE, "selftest", page)], capture_output=True, text=True)


def main():
    source, build = sys.argv[1], sys.argv[2]
    problems = []
    fresh = check("fresh.md", source, build)
    if fresh.returncode != 0:
        problems.append("fresh.md failed:\n" + fresh.stdout + fresh.stderr)
    stale = check("stale.md", source, build)
    report = stale.stderr
    if stale.returncode != 1:
        problems.append(f"stale.md: exit status {stale.returncode}, expected 1")
    planted = {
        3: "the page shows a line it did not print: what it printed once",
        10: "exit status 1, the page expects 0",
        14: "`ctest -R Layering` from the repository's root finds no tests",
        16: "`ctest --test-dir build -R NoSuchTestAnywhere` selects no test of the build",
    }
    for line, what in planted.items():
        if not any(l.startswith(f"FAIL tests/docs/selftest/stale.md:{line}: ") and what in report
                   for l in report.splitlines()):
            problems.append(f"stale.md:{line} not reported as: {what}")
    if "4 stale place(s)" not in report:
        problems.append("stale.md: not exactly 4 places reported")
    if problems:
        print("\n".join(problems) + "\n--- check_docs.py on stale.md said:\n" + stale.stdout +
              report)
        sys.exit(1)
    print("check_docs.py passes the fresh page and reports the stale page's 4 places")


if __name__ == "__main__":
    main()
