// The start on a kernel that lacks what the sentry serves a guest with: a clear refusal before
// anything of the sandbox is made, naming the kernel, what it lacks and where to read on.
#include <sys/utsname.h>

#include <string>

#include "gtest/gtest.h"
#include "tests/integration/run_util.h"

namespace nvsentry::testing {
namespace {

TEST(KernelCheck, AKernelWithoutSeccompNotificationsIsRefusedSayingWhatItLacks) {
  RunResult r = RunProgram(
      {{WITHOUT_NOTIFICATIONS_BIN, NvsentryPath(), "run", "--", "sh", "-c", "echo the guest ran"}});
  EXPECT_EQ(r.exit_code, 125) << r.out << r.err;
  EXPECT_EQ(r.out.find("the guest ran"), std::string::npos) << r.out;
  struct utsname u;
  ASSERT_EQ(uname(&u), 0);
  EXPECT_NE(r.err.find(std::string("this kernel (Linux ") + u.release + ")"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("seccomp user notification (Linux 5.0)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("needs Linux 5.14 or later"), std::string::npos) << r.err;
  // Only what it lacks: this kernel has the rest.
  EXPECT_EQ(r.err.find("pidfd_open"), std::string::npos) << r.err;
}

TEST(KernelCheck, ThisKernelPasses) {
  RunResult r = RunSandboxed({}, {"sh", "-c", "echo the guest ran"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("the guest ran"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace nvsentry::testing
