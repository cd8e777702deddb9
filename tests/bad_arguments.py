#!/usr/bin/env python3
"""ctest "CliUsage.*": a program the project builds, given a bad argument, says so.

It must exit with STATUS (2, or 125 for a wrapper whose 2 could be its program's), print nothing
on standard output, and print its usage ("usage: ...") on standard error.

  tests/bad_arguments.py STATUS PROGRAM [ARGS...]
"""
import subprocess
import sys


def main(argv):
    if len(argv) < 3 or not argv[1].isdigit():
        print(__doc__, file=sys.stderr)
        return 2
    want, command = int(argv[1]), argv[2:]
    r = subprocess.run(command, capture_output=True, text=True, timeout=30,
                       stdin=subprocess.DEVNULL)
    problems = []
    if r.returncode != want:
        problems.append(f"exit status {r.returncode}, not {want}")
    if r.stdout:
        problems.append(f"printed on standard output: {r.stdout!r}")
    if "usage: " not in r.stderr:
        problems.append("no 'usage: ' on standard error")
    print(f"{' '.join(command)}\n--- stderr:\n{r.stderr}---")
    for p in problems:
        print(f"FAIL: {p}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
