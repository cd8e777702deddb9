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

}  // namespace
}  // namespace nvsentry::testing
