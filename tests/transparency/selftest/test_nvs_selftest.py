"""A regression-test module for the harness's self-test: under fake_sandbox.sh some of these
tests change outcome, in every way the harness has to notice."""
import os
import time
import unittest

SANDBOXED = os.environ.get("NVS_SELFTEST_SANDBOXED") == "1"


class Same(unittest.TestCase):
    def test_ok(self):
        pass

    @unittest.skip("always skipped")
    def test_skipped(self):
        pass

    @unittest.expectedFailure
    def test_expected_failure(self):
        self.fail("expected")

    def test_fails_everywhere(self):
        self.fail("on both sides")

    def test_subtests_same(self):
        for i in range(3):
            with self.subTest(i=i):
                self.assertNotEqual(i, 1)


class Differs(unittest.TestCase):
    def test_fails_sandboxed(self):
        self.assertFalse(SANDBOXED, "sandboxed")

    def test_error_sandboxed(self):
        if SANDBOXED:
            raise OSError("sandboxed")

    def test_skipped_sandboxed(self):
        if SANDBOXED:
            self.skipTest("sandboxed")

    def test_subtest_sandboxed(self):
        for i in range(3):
            with self.subTest(i=i):
                self.assertFalse(SANDBOXED and i == 2)

    def test_hangs_sandboxed(self):
        if SANDBOXED:
            time.sleep(3600)

    def test_after_the_hang(self):
        pass


class SetUpClassDiffers(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if SANDBOXED:
            raise RuntimeError("setUpClass sandboxed")

    def test_in_class(self):
        pass


if __name__ == "__main__":
    unittest.main()
