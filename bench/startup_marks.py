#!/usr/bin/env python3
"""Where `nvsentry run -- PROGRAM` spends its start-up and its end.

Runs `nvsentry run --startup-marks` N times (sentry/process/startup_marks.h) and prints, for each
mark, the median of its time in microseconds after nvsentry's main, in the order the marks
first came. Two lines are added: "spawn", when this script started nvsentry (negative: before
main; it includes Python's own fork and exec), and "waited", when nvsentry had ended.

  bench/startup_marks.py [--runs=N] [NVSENTRY [PROGRAM ARGS...]]

Defaults: 40 runs, build/sentry/nvsentry, /bin/true. docs/benchmarks.md ("Start-up, step by
step") has a table made with it.
"""
import argparse
import re
import statistics
import subprocess
import sys
import tempfile
import time


def main(argv):
    parser = argparse.ArgumentParser(
        prog="bench/startup_marks.py",
        description="Where `nvsentry run -- PROGRAM` spends its start-up and its end.")
    parser.add_argument("--runs", type=int, default=40, help="runs to take the medians of")
    parser.add_argument("nvsentry", nargs="?", default="build/sentry/nvsentry")
    parser.add_argument("program", nargs=argparse.REMAINDER, help="default: /bin/true")
    args = parser.parse_args(argv[1:])
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    runs, nvsentry, program = args.runs, args.nvsentry, args.program or ["/bin/true"]
    times = {}
    order = ["spawn"]
    for _ in range(runs):
        # Marks go to a file, not a pipe: "waited" is when nvsentry was gone, not when the last
        # holder of its standard error (the clone that frees its memory after it) let go.
        with tempfile.TemporaryFile(mode="w+") as marks:
            start = time.clock_gettime(time.CLOCK_MONOTONIC) * 1e6
            subprocess.run([nvsentry, "run", "--startup-marks", "--"] + program,
                           stdout=subprocess.DEVNULL, stderr=marks)
            end = time.clock_gettime(time.CLOCK_MONOTONIC) * 1e6
            marks.seek(0)
            stderr = marks.read()
        main_at = None
        for line in stderr.splitlines():
            if not line.startswith("nvsentry-mark "):
                continue
            _, us, _, what = line.split(" ", 3)
            m = re.search(r"CLOCK_MONOTONIC (\d+)", what)
            if m:
                main_at = int(m.group(1))
                what = "main"
            if what not in order:
                order.append(what)
            times.setdefault(what, []).append(float(us))
        if main_at is None:
            sys.exit("no marks: does this nvsentry take --startup-marks "
                     "(sentry/process/startup_marks.h)?")
        times.setdefault("spawn", []).append(start - main_at)
        times.setdefault("waited", []).append(end - main_at)
    order.append("waited")
    print(f"median of {runs} runs, microseconds after nvsentry's main:")
    for what in order:
        print(f"{statistics.median(times[what]):8.0f}  {what}")


if __name__ == "__main__":
    main(sys.argv)
