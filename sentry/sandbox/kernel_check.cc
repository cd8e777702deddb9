#include "sentry/sandbox/kernel_check.h"

#include <errno.h>
#include <linux/seccomp.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace nvsentry::sentry {
namespace {

// The release's major and minor numbers; {0, 0} when uname's string does not start with them.
std::pair<int, int> MajorMinor(const std::string& release) {
  int major = 0, minor = 0;
  if (sscanf(release.c_str(), "%d.%d", &major, &minor) != 2) return {0, 0};
  return {major, minor};
}

bool HasNotifications() {
  seccomp_notif_sizes sizes{};
  return syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes) == 0;
}

bool HasSyscall(long nr, long a0, long a1) {
  const long r = syscall(nr, a0, a1);
  if (r >= 0) close(static_cast<int>(r));
  return r >= 0 || errno != ENOSYS;
}

}  // namespace

KernelFacts ProbeKernel() {
  KernelFacts facts;
  struct utsname u;
  if (uname(&u) == 0) facts.release = u.release;
  if (!HasNotifications()) facts.missing.push_back("seccomp user notification (Linux 5.0)");
  if (!HasSyscall(SYS_fsopen, reinterpret_cast<long>("nvsentry-probe"), 0))
    facts.missing.push_back("the new mount API, fsopen (Linux 5.2)");
  if (!HasSyscall(SYS_pidfd_open, getpid(), 0)) facts.missing.push_back("pidfd_open (Linux 5.3)");
  const auto [major, minor] = MajorMinor(facts.release);
  if (major != 0 && (major < 5 || (major == 5 && minor < 14)))
    facts.missing.push_back("SECCOMP_ADDFD_FLAG_SEND (Linux 5.14)");
  return facts;
}

absl::Status JudgeKernel(const KernelFacts& facts) {
  if (facts.missing.empty()) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      "this kernel (Linux ", facts.release.empty() ? "of unknown release" : facts.release,
      ") lacks what the sentry serves a guest with: ", absl::StrJoin(facts.missing, ", "),
      ". nvsentry needs Linux 5.14 or later; L4T r32, the last release for the Jetson Nano and "
      "TX1, has 4.9 (docs/host-passthrough.md, \"On a real Jetson\")"));
}

}  // namespace nvsentry::sentry
