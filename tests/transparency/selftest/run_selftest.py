#!/usr/bin/env python3
"""Self-test of the transparency harness: runs it on test_nvs_selftest.py with fake_sandbox.sh in
place of nvsentry and checks that it reports exactly the planted differences."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
HARNESS = os.path.join(os.path.dirname(HERE), "run_transparency.py")
M = "test_nvs_selftest"

EXPECTED = {
    # id: (native, sandboxed)
    f"{M}.Differs.test_fails_sandboxed": ("ok", "FAIL"),
    f"{M}.Differs.test_error_sandboxed": ("ok", "ERROR"),
    f"{M}.Differs.test_skipped_sandboxed": ("ok", "skipped"),
    f"{M}.Differs.test_subtest_sandboxed": ("ok", "FAIL (subtests)"),
    f"{M}.Differs.test_subtest_sandboxed (i=2)": (None, "FAIL"),
    f"{M}.Differs.test_hangs_sandboxed": ("ok", "TIMEOUT"),
    f"{M}.SetUpClassDiffers.test_in_class": ("ok", None),
    f"setUpClass ({M}.SetUpClassDiffers)": (None, "ERROR"),
    "[regrtest result]": (None, None),
}
SAME = {
    f"{M}.Same.test_ok": "ok",
    f"{M}.Same.test_skipped": "skipped",
    f"{M}.Same.test_expected_failure": "expected failure",
    f"{M}.Same.test_fails_everywhere": "FAIL",
    f"{M}.Same.test_subtests_same": "FAIL (subtests)",
    f"{M}.Same.test_subtests_same (i=1)": "FAIL",
    f"{M}.Differs.test_after_the_hang": "ok",
}


def main():
    python = sys.argv[1] if len(sys.argv) > 1 else sys.executable
    with tempfile.TemporaryDirectory(prefix="nvsentry-transparency-selftest-") as tmp:
        report = os.path.join(tmp, "report.json")
        # Imported from a copy, so that no __pycache__ lands in the source tree.
        testdir = os.path.join(tmp, "testdir")
        os.mkdir(testdir)
        shutil.copy(os.path.join(HERE, f"{M}.py"), testdir)
        p = subprocess.run([python, HARNESS, "--nvsentry", os.path.join(HERE, "fake_sandbox.sh"),
                            "--python", python, "--module", M, "--testdir", testdir,
                            "--per-test-timeout", "3", "--workdir", os.path.join(tmp, "w"),
                            "--json-report", report],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        print(p.stdout)
        problems = []
        if p.returncode != 1:
            problems.append(f"harness exit status {p.returncode}, expected 1")
        with open(report) as f:
            r = json.load(f)
        if sorted(r["confirmed"]) != sorted(EXPECTED):
            problems.append(f"confirmed differences {sorted(r['confirmed'])}, expected {sorted(EXPECTED)}")
        nat, sb = r["native"]["outcomes"], r["sandbox"]["outcomes"]
        for tid, (n, s) in EXPECTED.items():
            if tid.startswith("["):
                continue
            if nat.get(tid) != n or sb.get(tid) != s:
                problems.append(f"{tid}: native {nat.get(tid)} sandboxed {sb.get(tid)}, "
                                f"expected {n} / {s}")
        for tid, k in SAME.items():
            if nat.get(tid) != k or sb.get(tid) != k:
                problems.append(f"{tid}: native {nat.get(tid)} sandboxed {sb.get(tid)}, expected {k}")
        for needle in ("AssertionError: True is not false : sandboxed", "OSError: sandboxed",
                       "RuntimeError: setUpClass sandboxed", "Timeout (0:00:03)!"):
            if needle not in p.stdout:
                problems.append(f"report lacks {needle!r}")
    for line in problems:
        print("SELFTEST PROBLEM:", line)
    print("SELFTEST", "FAILED" if problems else "PASSED")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
