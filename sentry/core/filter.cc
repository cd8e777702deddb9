#include "sentry/core/filter.h"

#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#include "sentry/core/filter_build.h"
#include "sentry/core/filter_prebuilt.h"

namespace nvsentry::sentry {

absl::StatusOr<FilterProgram> BuildGuestFilter(bool trap_opens) {
  const sock_filter* code = trap_opens ? prebuilt::kTrapOpens : prebuilt::kFiles;
  const size_t size = trap_opens ? prebuilt::kTrapOpensSize : prebuilt::kFilesSize;
  if (size == 0) return BuildGuestFilterWithLibseccomp(trap_opens);
  return FilterProgram{std::vector<sock_filter>(code, code + size)};
}

int LoadGuestFilter(const FilterProgram& prog, bool* killable) {
  sock_fprog fprog{static_cast<unsigned short>(prog.code.size()),
                   const_cast<sock_filter*>(prog.code.data())};
  // The guest never gains privileges by exec (setuid binaries, file capabilities); without
  // CAP_SYS_ADMIN the kernel insists on it anyway.
  prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  unsigned long flags = SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV;
  long fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &fprog);
  *killable = fd >= 0;
  if (fd < 0 && errno == EINVAL) {
    fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &fprog);
  }
  return fd >= 0 ? static_cast<int>(fd) : -errno;
}

SyscallTable::SyscallTable()
    : rows_(prebuilt::kSyscallRows, prebuilt::kSyscallRows + prebuilt::kSyscallRowsSize) {
  if (rows_.empty()) rows_ = TrappedSyscallRowsWithLibseccomp();
}

TrappedCall SyscallTable::Classify(uint32_t arch, int nr) const {
  for (const SyscallRow& r : rows_)
    if (r.nr == nr && r.arch == arch) return r.kind;
  return TrappedCall::kOther;
}

}  // namespace nvsentry::sentry
