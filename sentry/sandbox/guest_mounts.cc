#include "sentry/sandbox/guest_mounts.h"

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "sentry/sandbox/guest_dev.h"

namespace nvsentry::sentry {
namespace {

// <linux/mount.h>'s struct mount_attr (Linux 5.12); that header clashes with <sys/mount.h>.
struct MountAttr {
  uint64_t attr_set, attr_clr, propagation, userns_fd;
};
constexpr uint64_t kMountAttrRdonly = 0x1, kMountAttrNodev = 0x4;
constexpr unsigned kOpenTreeClone = 1, kMoveMountFEmptyPath = 0x4;

std::string Why(const std::string& what, int err) { return what + ": " + strerror(err); }

// The same for a path the guest's identity may be refused: EACCES says who the guest is and what
// to do.
std::string WhyRefused(const std::string& what, int err, const MountPlan& plan) {
  if (err != EACCES || plan.refused_advice.empty()) return Why(what, err);
  return Why(what, err) + ": " + plan.refused_advice;
}

// Sets or clears read-only on the mount at `path` (and every mount below it).
int SetReadOnly(const char* path, bool read_only, bool recursive) {
  MountAttr a{};
  (read_only ? a.attr_set : a.attr_clr) = kMountAttrRdonly;
  return static_cast<int>(
      syscall(SYS_mount_setattr, AT_FDCWD, path, recursive ? AT_RECURSIVE : 0, &a, sizeof a));
}

bool IsDirectory(const char* path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

// Whether `path` lies inside one of the fresh tmpfs mounts of --private-tmp.
bool InPrivateTmp(const std::string& path) {
  for (const char* d : kPrivateTmpDirs)
    if (path.starts_with(std::string(d) + "/")) return true;
  return false;
}

// A mount point for a bind inside the private tmpfs: its parents as directories, itself a
// directory or an empty file like the source. Nothing is ever created in the host's tree.
std::string MakeMountPoint(const std::string& target, bool directory) {
  for (size_t slash = target.find('/', 1); slash != std::string::npos;
       slash = target.find('/', slash + 1)) {
    const std::string parent = target.substr(0, slash);
    if (mkdir(parent.c_str(), 0755) != 0 && errno != EEXIST)
      return Why("creating " + parent, errno);
  }
  if (directory) {
    if (mkdir(target.c_str(), 0755) != 0) return Why("creating " + target, errno);
  } else {
    int fd = open(target.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) return Why("creating " + target, errno);
    close(fd);
  }
  return "";
}

std::string BindName(const BindMount& b) {
  return (b.read_only ? "--ro-bind " : "--bind ") + b.source + " " + b.target;
}

// `source_fd`: the source, opened (O_PATH) before --private-tmp and --ro-root changed the view.
std::string Bind(const BindMount& b, int source_fd, const MountPlan& plan) {
  const std::string name = BindName(b);
  struct stat src, dst;
  if (fstat(source_fd, &src) != 0) return Why(name + ": " + b.source, errno);
  if (stat(b.target.c_str(), &dst) != 0) {
    if (errno != ENOENT) return WhyRefused(name + ": " + b.target, errno, plan);
    if (!plan.private_tmp || !InPrivateTmp(b.target))
      return name + ": " + b.target +
             " does not exist (nvsentry makes mount points only inside the private /tmp of "
             "--private-tmp, never in the host's tree)";
    if (std::string e = MakeMountPoint(b.target, S_ISDIR(src.st_mode)); !e.empty())
      return name + ": " + e;
  } else if (S_ISDIR(src.st_mode) != S_ISDIR(dst.st_mode)) {
    return name + ": one is a directory and the other is not";
  }
  const std::string source = "/proc/self/fd/" + std::to_string(source_fd);
  if (mount(source.c_str(), b.target.c_str(), nullptr, MS_BIND | MS_REC, nullptr) != 0)
    return WhyRefused(name, errno, plan);
  if (b.read_only) {
    if (SetReadOnly(b.target.c_str(), true, true) != 0) return Why(name + ": read-only", errno);
  } else if (plan.read_only_root) {
    // The bind copied the read-only flag --ro-root gave its source: writable again, where the
    // host itself mounts it writable (a mount the host made read-only stays so).
    if (SetReadOnly(b.target.c_str(), false, true) != 0 &&
        SetReadOnly(b.target.c_str(), false, false) != 0)
      return Why(name + ": writable (the host mounts " + b.source + " read-only?)", errno);
  }
  // Bound writable for a guest that may not write it: the guest's writes would fail there.
  if (!b.read_only && access(b.target.c_str(), W_OK) != 0 && errno == EACCES)
    fprintf(stderr, "nvsentry: warning: %s: the guest may not write %s: %s\n", name.c_str(),
            b.source.c_str(),
            plan.refused_advice.empty() ? "its mode says so" : plan.refused_advice.c_str());
  return "";
}

// Device nodes open only in the guest's /dev: every mount of the view becomes nodev, so a node the
// host keeps anywhere else (a chroot's /dev on disk, a second devtmpfs, a bind of /dev) is EACCES
// to open, as under a --bind of bubblewrap's. What the guest's /dev takes from the host's is
// cloned before (CloneGuestDevBinds; with trapped opens the whole of the host's /dev), with its
// flags as they are, and mounted after.
std::string MakeEverythingNodev() {
  MountAttr a{};
  a.attr_set = kMountAttrNodev;
  if (syscall(SYS_mount_setattr, AT_FDCWD, "/", AT_RECURSIVE, &a, sizeof a) != 0)
    return Why("making every mount nodev", errno);
  return "";
}

// With trapped opens the guest's /dev is the host's: a clone of it goes on top of the nodev one.
std::string KeepHostDevWithItsDevices() {
  const int tree = static_cast<int>(
      syscall(SYS_open_tree, AT_FDCWD, "/dev", kOpenTreeClone | O_CLOEXEC | AT_RECURSIVE));
  if (tree < 0) return Why("cloning /dev", errno);
  std::string err = MakeEverythingNodev();
  if (err.empty() && syscall(SYS_move_mount, tree, "", AT_FDCWD, "/dev", kMoveMountFEmptyPath) != 0)
    err = Why("putting /dev back with its devices", errno);
  close(tree);  // attached now: closing unmounts nothing
  return err;
}

// The guest's /dev: the device files with what they take from the host's /dev (every other mount
// nodev), else the host's own.
std::string SetUpGuestDev(const MountPlan& plan, const std::function<bool()>& device_mount_ready) {
  if (plan.device_mount >= 0) {
    absl::StatusOr<std::vector<int>> trees = CloneGuestDevBinds(plan.dev_binds);
    if (!trees.ok()) return std::string(trees.status().message());
    std::string e = MakeEverythingNodev();
    if (e.empty() && device_mount_ready && !device_mount_ready())
      e = "the sentry did not finish the guest's /dev";
    if (e.empty()) e = AttachGuestDev(plan.device_mount, plan.dev_binds, *trees);
    return e;
  }
  return KeepHostDevWithItsDevices();
}

// Covers the host's NVIDIA nodes: an empty read-only tmpfs on a directory, /dev/null on a node.
std::string HideHostNodes(const MountPlan& plan) {
  for (const HostNode& n : plan.hide) {
    // A host node where a device file now is (a Tegra host's own nvhost-ctrl, say) is gone
    // already: the device file took its place.
    if (plan.device_mount >= 0 && n.path.starts_with("/dev/") &&
        std::find(plan.device_files.begin(), plan.device_files.end(), n.path.substr(5)) !=
            plan.device_files.end())
      continue;
    int rc = n.is_dir ? mount("nvsentry", n.path.c_str(), "tmpfs",
                              MS_RDONLY | MS_NOSUID | MS_NOEXEC, "size=4k,mode=0755")
                      : mount("/dev/null", n.path.c_str(), nullptr, MS_BIND, nullptr);
    // A node that vanished since the scan has nothing left to hide; one whose path the guest's
    // identity cannot even reach (EACCES) cannot be opened by the guest either.
    if (rc != 0 && errno != ENOENT && errno != EACCES)
      return Why("hiding host node " + n.path, errno);
  }
  return "";
}

}  // namespace

std::string SetUpGuestMounts(const MountPlan& plan,
                             const std::function<bool()>& device_mount_ready) {
  // The guest's view is the host's as it is now, and stays ours: a mount the host makes later does
  // not show up here (it would come with its own flags: writable under --ro-root, with devices
  // outside /dev), and nothing mounted here reaches the host.
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
    return Why("making / a private mount", errno);
  const int terminal = TerminalForConsole();  // found in the host's /dev/pts, while it is there
  if (std::string e = SetUpGuestDev(plan, device_mount_ready); !e.empty()) return e;
  if (std::string e = GiveTheGuestItsOwnPtys(terminal); !e.empty()) return e;
  if (std::string e = HideHostNodes(plan); !e.empty()) return e;
  // Bind sources are found in the host's tree as it is (host nodes covered: a bind cannot
  // uncover one), before the private /tmp hides what was there.
  std::vector<int> sources;
  for (const BindMount& b : plan.binds) {
    int fd = open(b.source.c_str(), O_PATH | O_CLOEXEC);
    if (fd < 0) return WhyRefused(BindName(b) + ": " + b.source, errno, plan);
    sources.push_back(fd);
  }
  if (plan.read_only_root && SetReadOnly("/", true, true) != 0)
    return Why("--ro-root: making the host's mounts read-only", errno);
  if (plan.private_tmp) {
    for (const char* d : kPrivateTmpDirs) {
      if (!IsDirectory(d)) continue;
      if (mount("tmpfs", d, "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777") != 0)
        return Why(std::string("--private-tmp: mounting a tmpfs on ") + d, errno);
    }
  }
  for (size_t i = 0; i < plan.binds.size(); ++i) {
    if (std::string e = Bind(plan.binds[i], sources[i], plan); !e.empty()) return e;
    close(sources[i]);
  }
  // A /proc of this PID namespace: host processes (and their /proc/PID/root views of the
  // uncovered /dev) are not reachable from the guest.
  if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0)
    return Why("mounting /proc for the guest", errno);
  return "";
}

}  // namespace nvsentry::sentry
