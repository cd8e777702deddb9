// Arguments in guest memory: bad pointers and arguments rewritten mid-call.
#include <cerrno>

#include "gtest/gtest.h"
#include "tests/integration/run_util.h"

namespace nvsentry::testing {
namespace {

TEST(GuestMemory, BadPointersGiveEfault) {
  RunResult r = RunSandboxed({}, {CtrlGuestPath(), "badptr"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto kv = ParseKeyValues(r.out);
  const std::string efault = std::to_string(EFAULT);
  EXPECT_EQ(kv["null"], efault);
  EXPECT_EQ(kv["straddle"], efault) << "an argument half in an unmapped page";
  EXPECT_EQ(kv["readonly_out"], efault) << "outputs to read-only memory";
  EXPECT_EQ(kv["readonly_in"], "0") << "an input-only argument may be read-only";
  EXPECT_EQ(kv["wild"], efault);
}

TEST(GuestMemory, ArgumentRewrittenMidCallChangesNothing) {
  // Another thread flips the id between valid and invalid: every call must act on exactly the
  // id it validated, so successes equal the increments seen.
  RunResult r = RunSandboxed({}, {CtrlGuestPath(), "rewrite"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
}

}  // namespace
}  // namespace nvsentry::testing
