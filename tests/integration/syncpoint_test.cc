// Syncpoints through the real sentry: a guest program drives /dev/nvhost-ctrl.
#include <unistd.h>

#include <cerrno>
#include <string>

#include "gtest/gtest.h"
#include "tests/integration/run_util.h"

namespace nvsentry::testing {
namespace {

std::string E(int e) { return std::to_string(e); }

RunResult Guest(const std::string& mode, const std::vector<std::string>& options = {}) {
  return RunSandboxed(options, {CtrlGuestPath(), mode});
}

TEST(Syncpoint, ReadIncrementAndErrors) {
  RunResult r = Guest("basic");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto kv = ParseKeyValues(r.out);
  EXPECT_EQ(kv["bad_id_errno"], E(EINVAL));
  EXPECT_EQ(kv["bad_incr_errno"], E(EINVAL));
  EXPECT_EQ(kv["bad_wait_errno"], E(EINVAL));
  EXPECT_EQ(kv["unknown_errno"], E(ENOTTY));
  EXPECT_EQ(kv["zero_timeout_errno"], E(ETIMEDOUT));
  // GET_SHIFT answers with one of Switchbrew's two shifts: 0x00 (FIFO disabled) or 0x60 (enabled).
  EXPECT_EQ(kv["shift_errno"], "0");
  EXPECT_TRUE(kv["shift"] == "0x0" || kv["shift"] == "0x60") << kv["shift"];
}

TEST(Syncpoint, WaitSatisfiedByAnotherThreadAndTimeout) {
  RunResult r = Guest("wait");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto kv = ParseKeyValues(r.out);
  EXPECT_EQ(kv["timeout_errno"], E(ETIMEDOUT));
  int ms = std::stoi(kv["timeout_ms"]);
  EXPECT_GE(ms, 95);
  EXPECT_LT(ms, 1000);
  EXPECT_EQ(kv["untouched"], "1") << "a failed wait must not write its output";
  EXPECT_EQ(kv["past"], "0");
  EXPECT_EQ(kv["ahead"], E(ETIMEDOUT));
  EXPECT_EQ(kv["wrapped"], "0") << "thresholds compare modulo 2^32";
}

TEST(Syncpoint, ManyWaitersWhileOthersIncrement) {
  RunResult r = Guest("many_waiters");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(ParseKeyValues(r.out)["waiters_ok"], "64");
}

TEST(Syncpoint, FewWorkersStillServeManyParkedWaits) {
  // Parked waits hold no worker: one worker serves 64 sleeping waiters and the incrementers.
  RunResult r = Guest("many_waiters", {"--workers=1"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(ParseKeyValues(r.out)["waiters_ok"], "64");
}

TEST(Syncpoint, SignalsInterruptParkedWaits) {
  std::string log = ::testing::TempDir() + "/signal." + std::to_string(getpid()) + ".log";
  unlink(log.c_str());
  RunResult r = Guest("signal", {"--log-level=debug", "--log-file=" + log});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto kv = ParseKeyValues(r.out);
  EXPECT_EQ(kv["eintr_rc"], "-1");
  EXPECT_EQ(kv["eintr_errno"], E(EINTR));
  EXPECT_LT(std::stoi(kv["eintr_ms"]), 2000) << "the signal must end the wait promptly";
  EXPECT_EQ(kv["restart_rc"], "0") << "SA_RESTART resumes the wait";
  EXPECT_GE(std::stoi(kv["restart_ms"]), 350) << "the restarted wait ran to the increment";
  EXPECT_EQ(kv["after_kill_read"], "1");
  RunResult logtext = RunProgram({{"cat", log}});
  EXPECT_NE(logtext.out.find("dropped parked NVHOST_IOCTL_CTRL_SYNCPT_WAIT"), std::string::npos)
      << "the killed waiter's call is dropped:\n"
      << logtext.out;
}

}  // namespace
}  // namespace nvsentry::testing
