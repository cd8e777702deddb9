#include "sentry/guest_dev.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>

#include "abi/catalogue.h"
#include "absl/strings/str_cat.h"

namespace nvsentry::sentry {
namespace {

// <linux/mount.h>'s constants (that header clashes with <sys/mount.h>).
constexpr unsigned kFsopenCloexec = 0x1;
constexpr unsigned kFsconfigSetString = 1, kFsconfigCmdCreate = 6;
constexpr unsigned kFsmountCloexec = 0x1;
constexpr unsigned kMountAttrNosuid = 0x2, kMountAttrNoexec = 0x8;
constexpr unsigned kMoveMountFEmptyPath = 0x4;

// Where init attaches the device files while it binds them one by one.
constexpr const char* kStagingName = ".nvsentry-devices";

absl::Status DevError(const std::string& what) {
  return absl::ErrnoToStatus(errno, "the guest's /dev: " + what);
}

std::string Why(const std::string& what, int err) { return what + ": " + strerror(err); }

bool Hidden(const std::string& name, const std::vector<HostNode>& hide) {
  const std::string path = "/dev/" + name;
  if (abi::LooksLikeNvidiaNode(path)) return true;
  return std::any_of(hide.begin(), hide.end(), [&](const HostNode& n) { return n.path == path; });
}

// An empty file or directory to mount on, in `dir`.
bool MakeMountPoint(int dir, const std::string& name, bool directory, mode_t mode) {
  if (directory) return mkdirat(dir, name.c_str(), mode) == 0;
  const int fd = openat(dir, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0) return false;
  close(fd);
  return true;
}

}  // namespace

absl::StatusOr<GuestDev> MakeGuestDev(const std::vector<std::string>& device_files,
                                      const std::vector<HostNode>& hide, uid_t owner, gid_t group) {
  const hostshim::UniqueFd host(open("/dev", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  struct stat host_st;
  if (!host || fstat(host.get(), &host_st) != 0) return DevError("opening the host's /dev");
  const hostshim::UniqueFd fs(static_cast<int>(syscall(SYS_fsopen, "tmpfs", kFsopenCloexec)));
  const std::string mode = "0755";
  if (!fs || syscall(SYS_fsconfig, fs.get(), kFsconfigSetString, "mode", mode.c_str(), 0) != 0 ||
      syscall(SYS_fsconfig, fs.get(), kFsconfigCmdCreate, nullptr, nullptr, 0) != 0)
    return DevError("making a tmpfs");
  GuestDev dev;
  dev.tmpfs.Reset(static_cast<int>(
      syscall(SYS_fsmount, fs.get(), kFsmountCloexec, kMountAttrNosuid | kMountAttrNoexec)));
  if (!dev.tmpfs) return DevError("fsmount");
  const int dir = dev.tmpfs.get();
  DIR* d = fdopendir(dup(host.get()));
  if (d == nullptr) return DevError("listing the host's /dev");
  std::vector<std::string> names;
  while (const dirent* e = readdir(d))
    if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) names.push_back(e->d_name);
  closedir(d);
  const uid_t me_uid = geteuid();
  const gid_t me_gid = getegid();
  // A node's mode is fixed after mknod only where the umask took bits from it (a start-up cost:
  // the launcher makes this /dev with a umask of 0).
  const mode_t mask = umask(0);
  umask(mask);
  for (const std::string& name : names) {
    if (name == kStagingName || Hidden(name, hide) ||
        std::find(device_files.begin(), device_files.end(), name) != device_files.end())
      continue;
    struct stat st;
    if (fstatat(host.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;  // gone
    if (S_ISLNK(st.st_mode)) {
      char link[PATH_MAX];
      const ssize_t n = readlinkat(host.get(), name.c_str(), link, sizeof link - 1);
      if (n <= 0) continue;
      link[n] = '\0';
      if (symlinkat(link, dir, name.c_str()) != 0) return DevError("copying the link " + name);
      continue;
    }
    // A node the host mounted over its /dev (a container's console, say) is bound as it is.
    const bool mounted_here = st.st_dev != host_st.st_dev;
    if ((S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) && !mounted_here) {
      // Most nodes are root's, as the copy already is: no chown for those (a start-up cost).
      const bool same_owner = st.st_uid == me_uid && st.st_gid == me_gid;
      if (mknodat(dir, name.c_str(), st.st_mode & (S_IFMT | 07777), st.st_rdev) != 0 ||
          (!same_owner &&
           fchownat(dir, name.c_str(), st.st_uid, st.st_gid, AT_SYMLINK_NOFOLLOW) != 0) ||
          ((!same_owner || (st.st_mode & mask) != 0) &&
           fchmodat(dir, name.c_str(), st.st_mode & 07777, 0) != 0))
        return DevError("copying the node " + name);
      continue;
    }
    if (!MakeMountPoint(dir, name, S_ISDIR(st.st_mode), 0755))
      return DevError("making a mount point for " + name);
    dev.binds.push_back(name);
  }
  for (const std::string& name : device_files) {
    if (!MakeMountPoint(dir, name, false, 0666))
      return DevError("making a mount point for " + name);
    dev.devices.push_back(name);
  }
  if (mkdirat(dir, kStagingName, 0700) != 0) return DevError("making " + std::string(kStagingName));
  // The guest's root's, as a container's /dev is (init removes the staging directory in it).
  if (fchownat(dir, "", owner, group, AT_EMPTY_PATH) != 0)
    return DevError("giving it to the guest");
  return dev;
}

std::string AttachGuestDev(int tmpfs, const std::vector<std::string>& binds,
                           const std::vector<std::string>& devices, int device_mount) {
  // The host's /dev, for the binds' sources, before the new /dev hides it.
  const int host = open("/dev", O_PATH | O_DIRECTORY | O_CLOEXEC);
  std::string err;
  if (host < 0) err = Why("opening the host's /dev", errno);
  if (err.empty() &&
      syscall(SYS_move_mount, tmpfs, "", AT_FDCWD, "/dev", kMoveMountFEmptyPath) != 0)
    err = Why("attaching the guest's /dev", errno);
  close(tmpfs);
  for (size_t i = 0; err.empty() && i < binds.size(); ++i) {
    const std::string source = absl::StrCat("/proc/self/fd/", host, "/", binds[i]);
    const std::string target = "/dev/" + binds[i];
    struct stat st;
    const bool dir = stat(source.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
    if (mount(source.c_str(), target.c_str(), nullptr, MS_BIND | (dir ? MS_REC : 0), nullptr) !=
        0) {
      // One the guest's identity cannot reach (or gone since) is left out.
      const int e = errno;
      if (e != ENOENT && e != EACCES && e != EPERM) err = Why("binding the host's " + target, e);
      dir ? rmdir(target.c_str()) : unlink(target.c_str());
    }
  }
  if (host >= 0) close(host);
  const std::string staging = std::string("/dev/") + kStagingName;
  if (err.empty() && syscall(SYS_move_mount, device_mount, "", AT_FDCWD, staging.c_str(),
                             kMoveMountFEmptyPath) != 0)
    err = Why("attaching the device files", errno);
  close(device_mount);
  // One listing of the files (READDIRPLUS) gives the kernel all their entries at once, so the
  // binds below do not each ask the filesystem.
  if (err.empty())
    if (DIR* d = opendir(staging.c_str())) {
      while (readdir(d) != nullptr) {
      }
      closedir(d);
    }
  // Each by its own bind, so that the directory holding them all can go again.
  for (size_t i = 0; err.empty() && i < devices.size(); ++i) {
    const std::string target = "/dev/" + devices[i], source = staging + "/" + devices[i];
    if (mount(source.c_str(), target.c_str(), nullptr, MS_BIND, nullptr) != 0)
      err = Why("binding the device file " + target, errno);
  }
  if (err.empty() && (umount2(staging.c_str(), MNT_DETACH) != 0 || rmdir(staging.c_str()) != 0))
    err = Why("removing " + staging, errno);
  if (err.empty() && mount(nullptr, "/dev", nullptr,
                           MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NOEXEC, nullptr) != 0)
    err = Why("making the guest's /dev read-only", errno);
  return err;
}

}  // namespace nvsentry::sentry
