#include "sentry/sandbox/kernel_check.h"

#include "gtest/gtest.h"

namespace nvsentry::sentry {
namespace {

TEST(KernelCheck, NothingMissingIsOk) { EXPECT_TRUE(JudgeKernel({"6.18.0", {}}).ok()); }

TEST(KernelCheck, L4tR32sKernelIsNamedWithEveryMissingFacility) {
  absl::Status s = JudgeKernel(
      {"4.9.337-tegra",
       {"seccomp user notification (Linux 5.0)", "SECCOMP_ADDFD_FLAG_SEND (Linux 5.14)"}});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  const std::string m(s.message());
  EXPECT_NE(m.find("this kernel (Linux 4.9.337-tegra)"), std::string::npos) << m;
  EXPECT_NE(m.find("seccomp user notification (Linux 5.0), SECCOMP_ADDFD_FLAG_SEND (Linux 5.14)"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("Jetson Nano"), std::string::npos) << m;
}

TEST(KernelCheck, ThisMachinesKernelHasEverything) {
  KernelFacts f = ProbeKernel();
  EXPECT_FALSE(f.release.empty());
  EXPECT_TRUE(f.missing.empty()) << f.missing.front();
}

}  // namespace
}  // namespace nvsentry::sentry
