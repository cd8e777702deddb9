// A VIC client under the real sentry: the host1x channel served by the simulated GPU, from
// SET_NVMAP_FD to a fence waited on through /dev/nvhost-ctrl, and a channel stopped by a command
// buffer that runs past its object.
#include <cerrno>
#include <string>

#include "gtest/gtest.h"
#include "tests/integration/run_util.h"

namespace nvsentry::testing {
namespace {

TEST(Host1x, VicSubmitIncrementsItsSyncpointAndTheFenceIsReached) {
  RunResult r = RunSandboxed({}, {HOST1X_GUEST_BIN});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto kv = ParseKeyValues(r.out);
  EXPECT_EQ(kv["syncpoint"], "12");
  EXPECT_EQ(kv["fence"], "1");
  EXPECT_EQ(kv["moved"], "1");
  EXPECT_EQ(kv["after_failure"], std::to_string(ETIMEDOUT)) << r.out << r.err;
  EXPECT_NE(r.err.find("runs past"), std::string::npos) << r.err;
}

// NVJPG's own methods by name in the trace (cle7d0.h offsets, written through METHOD0/METHOD1).
// The default identity may not open NVJPG; nvdrv:a may (policy_test.cc).
TEST(Host1x, TraceNamesNvjpgMethods) {
  RunResult r = RunSandboxed({"--trace", "--service=nvdrv:a"}, {HOST1X_GUEST_BIN, "nvjpg"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(ParseKeyValues(r.out)["nvjpg_syncpoint"], "55");  // 0x37
  EXPECT_NE(r.err.find("host1x NVJPG SUBMIT done: 1 command buffer, 5 words; "
                       "NVJPG: EXECUTE x1, SET_BITSTREAM x1"),
            std::string::npos)
      << r.err;
}

// A guest that stops channel after channel cannot make the sentry log without end: the stop line
// is rate-limited like every line a guest can cause (before: one line per stop).
TEST(Host1x, StoppedChannelsLogAFewLinesNotOneEach) {
  RunResult r = RunSandboxed({}, {HOST1X_GUEST_BIN, "stops", "200"}, {}, 120000);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(ParseKeyValues(r.out)["stopped"], "200");
  size_t lines = 0;
  for (size_t at = r.err.find("host1x channel stopped"); at != std::string::npos;
       at = r.err.find("host1x channel stopped", at + 1))
    ++lines;
  EXPECT_GE(lines, 1u);
  EXPECT_LE(lines, 30u) << r.err.size() << " bytes of log";
}

}  // namespace
}  // namespace nvsentry::testing
