"""Runs CPython's regression test runner (what `python3 -m test` runs) and records every test's
outcome as JSON lines in a side file, so that the harness does not have to parse the interleaved
verbose output.

Usage: python3 regrtest_driver.py EVENTS_FILE PER_TEST_TIMEOUT [regrtest arguments...]

Events, one JSON object per line:
  {"ev": "start", "id": ID, "t": monotonic, "off": log offset}
  {"ev": "outcome", "id": ID, "outcome": OUTCOME, "detail": text}  (ID may be a setUpClass
      holder, or "ID (subtest params)" with "sub": true for a failed or skipped subtest)
  {"ev": "stop", "id": ID, "t": monotonic, "off": log offset}
OUTCOME is one of ok, FAIL, ERROR, skipped, expected failure, unexpected success.

A test that runs longer than PER_TEST_TIMEOUT seconds makes faulthandler dump every thread's
traceback and end the process (its watchdog is a C thread, invisible to the tests); the harness
sees a "start" without a "stop", records a timeout and carries on after that test.
Nothing here changes what the tests see apart from one more open file descriptor.
"""

import faulthandler
import json
import os
import sys
import time


def main():
    events_path = sys.argv[1]
    per_test_timeout = float(sys.argv[2])
    regrtest_args = sys.argv[3:]

    events_fd = os.open(events_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
    main_pid = os.getpid()

    def emit(**record):
        # Forked children running test code must not write events (they have their own copy of
        # the result object when a test forks without exec'ing).
        if os.getpid() != main_pid:
            return
        os.write(events_fd, (json.dumps(record) + "\n").encode())

    def log_offset():
        for f in (sys.__stdout__, sys.__stderr__):
            try:
                f.flush()
            except Exception:
                pass
        try:
            return os.fstat(1).st_size
        except OSError:
            return -1

    def test_id(test):
        try:
            return test.id()
        except Exception:
            return str(test)

    def err_text(result, test, err):
        try:
            return result._exc_info_to_string(err, test)
        except Exception as e:  # pragma: no cover - defensive
            return f"<could not format the exception: {e!r}>"

    try:
        from test.libregrtest import testresult  # CPython 3.11.5+ and 3.12+
    except ImportError:
        from test.support import testresult  # earlier 3.11 (Debian 12's 3.11.2)

    cls = testresult.RegressionTestResult
    orig = {name: getattr(cls, name) for name in (
        "startTest", "stopTest", "addSuccess", "addFailure", "addError", "addSkip",
        "addExpectedFailure", "addUnexpectedSuccess", "addSubTest")}

    def startTest(self, test):
        emit(ev="start", id=test_id(test), t=time.monotonic(), off=log_offset())
        if per_test_timeout > 0:
            faulthandler.dump_traceback_later(per_test_timeout, exit=True)
        return orig["startTest"](self, test)

    def stopTest(self, test):
        r = orig["stopTest"](self, test)
        if per_test_timeout > 0:
            faulthandler.cancel_dump_traceback_later()
        emit(ev="stop", id=test_id(test), t=time.monotonic(), off=log_offset())
        return r

    def outcome(name, kind, with_err):
        def hook(self, test, *args):
            detail = ""
            if with_err:
                detail = err_text(self, test, args[0])
            elif kind == "skipped":
                detail = str(args[0])
            extra = {}
            parent = getattr(test, "test_case", None)  # a skipped subtest
            if parent is not None:
                extra = {"parent": test_id(parent), "sub": True}
            emit(ev="outcome", id=test_id(test), outcome=kind, detail=detail, **extra)
            return orig[name](self, test, *args)
        return hook

    def addSubTest(self, test, subtest, err):
        if err is not None:
            kind = "FAIL" if issubclass(err[0], test.failureException) else "ERROR"
            emit(ev="outcome", id=test_id(subtest), parent=test_id(test), sub=True,
                 outcome=kind, detail=err_text(self, test, err))
        return orig["addSubTest"](self, test, subtest, err)

    cls.startTest = startTest
    cls.stopTest = stopTest
    cls.addSuccess = outcome("addSuccess", "ok", False)
    cls.addFailure = outcome("addFailure", "FAIL", True)
    cls.addError = outcome("addError", "ERROR", True)
    cls.addSkip = outcome("addSkip", "skipped", False)
    cls.addExpectedFailure = outcome("addExpectedFailure", "expected failure", True)
    cls.addUnexpectedSuccess = outcome("addUnexpectedSuccess", "unexpected success", False)
    cls.addSubTest = addSubTest

    # What test/__main__.py does.
    sys.argv = [sys.argv[0]] + regrtest_args
    import inspect
    from test.libregrtest.main import main as regrtest_main
    if "_add_python_opts" in inspect.signature(regrtest_main).parameters:
        regrtest_main(_add_python_opts=True)
    else:
        regrtest_main()


if __name__ == "__main__":
    main()
