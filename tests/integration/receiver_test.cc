// How trapped calls are spread over the sentry's threads (sentry/core/receiver.h): a slow call on a
// worker, or a fast call that stalls the receiving thread, never holds up another guest thread's
// call. The test hook hold-first-ioctl holds the guest's first ioctl in the sentry until another
// ioctl has been answered (or 5 s) and logs which ended the wait; with one worker, a call queued
// behind the held one could only be answered after the 5 s.
#include <string>

#include "gtest/gtest.h"
#include "tests/integration/run_util.h"

namespace nvsentry::testing {
namespace {

constexpr char kReleasedByAnother[] =
    "test hook: the first ioctl was held until another ioctl was answered";

RunResult HeldFirst(const std::string& first) {
  return RunWithTestHooks("hold-first-ioctl", {"--workers=1"},
                          {CtrlGuestPath(), "held_first", first});
}

// SYNCPT_INCR changes state: a worker serves it, while the receiving thread answers the
// SYNCPT_READ of another guest thread.
TEST(Receiver, ASlowCallOnAWorkerDoesNotHoldUpAFastCall) {
  RunResult r = HeldFirst("incr");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.err.find(kReleasedByAnother), std::string::npos) << r.err;
  EXPECT_EQ(ParseKeyValues(r.out)["second_value"], "0") << r.out;
}

// SYNCPT_READ is served by the receiving thread itself; held there, it makes another thread take
// over receiving, which answers the second SYNCPT_READ.
TEST(Receiver, AFastCallThatStallsTheReceiverHandsReceivingToAnotherThread) {
  RunResult r = HeldFirst("read");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.err.find(kReleasedByAnother), std::string::npos) << r.err;
}

}  // namespace
}  // namespace nvsentry::testing
