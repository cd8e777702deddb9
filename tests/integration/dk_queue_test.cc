// A client that ends its submissions the way deko3d does: tests/guests/dk_guest.c
// under the real sentry. Its fences (the 3D class's syncpoint action, counted by the client as
// libnx counts them) are reached, a queue of copies drains, a FlipY copy with a negative pitch
// mirrors the image, and GET_ERROR_INFO decodes to the faulting address and access type as
// deko3d's error decoder reads it.
#include "gtest/gtest.h"
#include "tests/integration/run_util.h"

namespace nvsentry::testing {
namespace {

TEST(DekoStyleQueue, FencesDrainFlipYAndFaultInfoAsDeko3dReadsThem) {
  RunResult r = RunSandboxed({}, {DK_GUEST_BIN});
  auto kv = ParseKeyValues(r.out);
  EXPECT_EQ(kv["fences"], "24/24") << r.out << r.err;
  EXPECT_EQ(kv["fence_matches"], "1") << r.out;
  EXPECT_EQ(kv["drained"], "1") << r.out;
  EXPECT_EQ(kv["read_eq_max"], "1") << r.out;
  EXPECT_EQ(kv["flipy"], "1") << r.out;
  EXPECT_EQ(kv["fault_type"], "1") << r.out;
  EXPECT_EQ(kv["fault_addr"], kv["fault_expected"]) << r.out;
  EXPECT_EQ(kv["fault_access"], "write") << r.out;
  EXPECT_EQ(kv["read_fault_addr"], kv["fault_expected"]) << r.out;
  EXPECT_EQ(kv["read_fault_access"], "read") << r.out;
  EXPECT_EQ(kv["dk_guest"], "ok") << r.out;
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
}

}  // namespace
}  // namespace nvsentry::testing
