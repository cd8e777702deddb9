// The guest's filter as nvsentry was built with it (sentry/core/filter_prebuilt.h) is the one
// libseccomp builds from the rules now: a copy that went stale, or a generator that lost or
// reordered an instruction, fails here.
#include "sentry/core/filter.h"

#include <linux/audit.h>
#include <sys/syscall.h>

#include <cstring>

#include "gtest/gtest.h"
#include "sentry/core/filter_build.h"
#include "sentry/core/filter_prebuilt.h"

namespace nvsentry::sentry {
namespace {

bool SameCode(const std::vector<sock_filter>& a, const std::vector<sock_filter>& b) {
  return a.size() == b.size() && memcmp(a.data(), b.data(), a.size() * sizeof(sock_filter)) == 0;
}

TEST(PrebuiltFilter, WasMadeAtBuildTime) {
  EXPECT_GT(prebuilt::kTrapOpensSize, 0u);
  EXPECT_GT(prebuilt::kFilesSize, 0u);
  EXPECT_GT(prebuilt::kSyscallRowsSize, 0u);
}

TEST(PrebuiltFilter, IsWhatLibseccompBuildsNow) {
  for (bool trap_opens : {true, false}) {
    SCOPED_TRACE(trap_opens ? "trapping opens" : "device files");
    absl::StatusOr<FilterProgram> used = BuildGuestFilter(trap_opens);
    absl::StatusOr<FilterProgram> now = BuildGuestFilterWithLibseccomp(trap_opens);
    ASSERT_TRUE(used.ok()) << used.status();
    ASSERT_TRUE(now.ok()) << now.status();
    EXPECT_TRUE(SameCode(used->code, now->code))
        << used->code.size() << " instructions used, " << now->code.size() << " built now";
  }
  // The two differ (the open family): a generator that wrote one program twice fails too.
  EXPECT_FALSE(SameCode(BuildGuestFilter(true)->code, BuildGuestFilter(false)->code));
}

TEST(PrebuiltFilter, TheSyscallRowsAreLibseccompsNow) {
  const std::vector<SyscallRow> now = TrappedSyscallRowsWithLibseccomp();
  ASSERT_EQ(now.size(), prebuilt::kSyscallRowsSize);
  for (size_t i = 0; i < now.size(); ++i) {
    EXPECT_EQ(now[i].arch, prebuilt::kSyscallRows[i].arch) << i;
    EXPECT_EQ(now[i].nr, prebuilt::kSyscallRows[i].nr) << i;
    EXPECT_EQ(now[i].kind, prebuilt::kSyscallRows[i].kind) << i;
  }
}

#if defined(__x86_64__)
TEST(SyscallTable, ClassifiesEachAbisOwnNumbers) {
  const SyscallTable table;
  EXPECT_EQ(table.Classify(AUDIT_ARCH_X86_64, __NR_ioctl), TrappedCall::kIoctl);
  EXPECT_EQ(table.Classify(AUDIT_ARCH_X86_64, __NR_openat), TrappedCall::kOpenat);
  EXPECT_EQ(table.Classify(AUDIT_ARCH_X86_64, __NR_open), TrappedCall::kOpen);
  EXPECT_EQ(table.Classify(AUDIT_ARCH_X86_64, __NR_getpid), TrappedCall::kOther);
  // i386: ioctl is 54, openat 295, open 5 (and 5 on x86-64 is fstat, not an open).
  EXPECT_EQ(table.Classify(AUDIT_ARCH_I386, 54), TrappedCall::kIoctl);
  EXPECT_EQ(table.Classify(AUDIT_ARCH_I386, 295), TrappedCall::kOpenat);
  EXPECT_EQ(table.Classify(AUDIT_ARCH_I386, 5), TrappedCall::kOpen);
  EXPECT_EQ(table.Classify(AUDIT_ARCH_X86_64, 5), TrappedCall::kOther);
  // x32 shares AUDIT_ARCH_X86_64 and carries __X32_SYSCALL_BIT; its ioctl is 514.
  EXPECT_EQ(table.Classify(AUDIT_ARCH_X86_64, 0x40000000 | 514), TrappedCall::kIoctl);
}
#endif

}  // namespace
}  // namespace nvsentry::sentry
