#include "sentry/devfs/fuse_mount.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "absl/strings/str_cat.h"

namespace nvsentry::sentry {
namespace {

// <linux/mount.h>'s constants (that header clashes with <sys/mount.h>, which others include).
constexpr unsigned kFsopenCloexec = 0x1;
constexpr unsigned kFsconfigSetFlag = 0, kFsconfigSetString = 1, kFsconfigCmdCreate = 6;
constexpr unsigned kFsmountCloexec = 0x1;
constexpr unsigned kMountAttrNosuid = 0x2, kMountAttrNodev = 0x4, kMountAttrNoexec = 0x8;
constexpr unsigned kMoveMountFEmptyPath = 0x4;

absl::Status FsError(const char* what, const char* step) {
  return absl::ErrnoToStatus(errno, absl::StrCat(what, " (FUSE): ", step));
}

}  // namespace

absl::StatusOr<FuseMount> MakeFuseMount(const char* what, FuseMountKind kind) {
  FuseMount m;
  m.connection.Reset(open("/dev/fuse", O_RDWR | O_CLOEXEC));
  if (!m.connection) return FsError(what, "opening /dev/fuse");
  const hostshim::UniqueFd fs(static_cast<int>(syscall(SYS_fsopen, "fuse", kFsopenCloexec)));
  if (!fs) return FsError(what, "fsopen");
  auto set = [&](const char* key, const std::string* value) {
    return syscall(SYS_fsconfig, fs.get(), value ? kFsconfigSetString : kFsconfigSetFlag, key,
                   value ? value->c_str() : nullptr, 0) == 0;
  };
  const std::string fd = absl::StrCat(m.connection.get()), dir_mode = "40000", zero = "0";
  if (!set("fd", &fd) || !set("rootmode", &dir_mode) || !set("user_id", &zero) ||
      !set("group_id", &zero) || !set("allow_other", nullptr) ||
      !set("default_permissions", nullptr))
    return FsError(what, "fsconfig");
  if (syscall(SYS_fsconfig, fs.get(), kFsconfigCmdCreate, nullptr, nullptr, 0) != 0)
    return FsError(what, "creating the filesystem");
  const unsigned devices = kind == FuseMountKind::kWithDevices ? 0 : kMountAttrNodev;
  m.mount.Reset(static_cast<int>(syscall(SYS_fsmount, fs.get(), kFsmountCloexec,
                                         kMountAttrNosuid | devices | kMountAttrNoexec)));
  if (!m.mount) return FsError(what, "fsmount");
  // Without asking the filesystem, which nobody serves yet.
  struct statx stx {};
  if (statx(m.mount.get(), "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, 0, &stx) != 0)
    return FsError(what, "statx");
  m.dev = makedev(stx.stx_dev_major, stx.stx_dev_minor);
  return m;
}

absl::Status AttachMount(const FuseMount& m, const char* dir) {
  if (syscall(SYS_move_mount, m.mount.get(), "", AT_FDCWD, dir, kMoveMountFEmptyPath) != 0)
    return absl::ErrnoToStatus(errno, absl::StrCat("attaching the filesystem at ", dir));
  return absl::OkStatus();
}

bool FromOwnThread(pid_t tid) {
  if (tid <= 0) return false;
  // Signal 0 is only the check: the kernel finds `tid` in this thread group or fails ESRCH. (A
  // lookup of /proc/self/task/TID answered the same in some 15 us the first time, on the start's
  // path: DeviceFs::Prime's listing.)
  return syscall(SYS_tgkill, getpid(), tid, 0) == 0;
}

}  // namespace nvsentry::sentry
