#include "sentry/sandbox/guest_dev.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>

#include "abi/catalogue.h"
#include "hostshim/unique_fd.h"

namespace nvsentry::sentry {
namespace {

// <linux/mount.h>'s constants (that header clashes with <sys/mount.h>).
constexpr unsigned kMoveMountFEmptyPath = 0x4, kOpenTreeClone = 1;

absl::Status DevError(const std::string& what) {
  return absl::ErrnoToStatus(errno, "the guest's /dev: " + what);
}

std::string Why(const std::string& what, int err) { return what + ": " + strerror(err); }

// Lists the host's /dev and decides each entry's fate but for the NVIDIA majors (FinishGuestDev
// hides those nodes); stats only what the type leaves open.
absl::StatusOr<std::vector<HostEntry>> ListHostDev(int host,
                                                   const std::vector<std::string>& device_files) {
  struct stat host_st;
  if (fstat(host, &host_st) != 0) return DevError("opening the host's /dev");
  DIR* d = fdopendir(dup(host));
  if (d == nullptr) return DevError("listing the host's /dev");
  std::vector<HostEntry> entries;
  entries.reserve(256);  // a desktop's /dev, in one allocation (the start's path)
  while (const dirent* e = readdir(d)) {
    HostEntry h;
    h.name = e->d_name;
    if (h.name == "." || h.name == "..") continue;
    if (std::find(device_files.begin(), device_files.end(), h.name) != device_files.end()) {
      h.fate = Fate::kDevice;
      entries.push_back(std::move(h));
      continue;
    }
    if (abi::LooksLikeNvidiaNode("/dev/" + h.name)) {
      h.fate = Fate::kHide;
      entries.push_back(std::move(h));
      continue;
    }
    if (e->d_type == DT_DIR) {
      h.directory = true;
      entries.push_back(std::move(h));  // kBind
      continue;
    }
    if (fstatat(host, h.name.c_str(), &h.st, AT_SYMLINK_NOFOLLOW) != 0) continue;  // gone
    if (S_ISDIR(h.st.st_mode)) {
      h.directory = true;
    } else if (S_ISLNK(h.st.st_mode)) {
      char target[PATH_MAX];
      const ssize_t n = readlinkat(host, h.name.c_str(), target, sizeof target);
      if (n <= 0 || n == sizeof target) continue;  // gone, or not a target a link can have
      h.fate = Fate::kLink;
      h.link.assign(target, static_cast<size_t>(n));
    } else if ((S_ISCHR(h.st.st_mode) || S_ISBLK(h.st.st_mode)) && h.st.st_dev == host_st.st_dev) {
      h.fate = Fate::kNode;
    }  // else kBind: a directory, or a node the host mounted over its /dev
    entries.push_back(std::move(h));
  }
  closedir(d);
  return entries;
}

// A character device of an NVIDIA driver's major, wherever it is (the host's own node, or one it
// mounted over its /dev), is left out.
void HideNvidiaMajors(std::vector<HostEntry>& entries, const std::set<unsigned>& nvidia_majors) {
  if (nvidia_majors.empty()) return;
  for (HostEntry& h : entries)
    if ((h.fate == Fate::kNode || h.fate == Fate::kBind) && S_ISCHR(h.st.st_mode) &&
        nvidia_majors.count(major(h.st.st_rdev)) > 0)
      h.fate = Fate::kHide;
}

// A mount point for a host entry init binds: an empty directory, or an empty file for anything
// else (a bind of a file, a socket or a node needs a non-directory to land on).
FlatEntry MountPoint(const HostEntry& h) {
  FlatEntry e;
  e.name = h.name;
  e.st.st_mode = h.directory ? (S_IFDIR | 0755) : (S_IFREG | 0644);
  e.mount_point = true;
  return e;
}

}  // namespace

absl::StatusOr<GuestDevDraft> DraftGuestDev(const std::vector<std::string>& device_files) {
  const hostshim::UniqueFd host(open("/dev", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!host) return DevError("opening the host's /dev");
  absl::StatusOr<std::vector<HostEntry>> entries = ListHostDev(host.get(), device_files);
  if (!entries.ok()) return entries.status();
  return GuestDevDraft{*std::move(entries)};
}

GuestDev FinishGuestDev(GuestDevDraft draft, const std::set<unsigned>& nvidia_majors) {
  HideNvidiaMajors(draft.entries, nvidia_majors);
  GuestDev dev;
  dev.entries.reserve(draft.entries.size() + 1);
  for (HostEntry& h : draft.entries) {
    switch (h.fate) {
      case Fate::kHide:
      case Fate::kDevice: break;
      case Fate::kLink:
      case Fate::kNode: {
        // As the host has it, but its place: the filesystem numbers its entries.
        FlatEntry e{std::move(h.name), h.st, std::move(h.link)};
        e.st.st_dev = 0;
        e.st.st_nlink = 1;
        dev.entries.push_back(std::move(e));
        break;
      }
      case Fate::kBind:
        dev.entries.push_back(MountPoint(h));
        // The guest gets pseudo-terminals of its own there (GiveTheGuestItsOwnPtys).
        if (h.name != "pts") dev.binds.push_back(std::move(h.name));
        break;
    }
  }
  if (std::none_of(dev.entries.begin(), dev.entries.end(),
                   [](const FlatEntry& e) { return e.name == "pts"; })) {
    HostEntry pts;
    pts.name = "pts";
    pts.directory = true;
    dev.entries.push_back(MountPoint(pts));
  }
  return dev;
}

absl::StatusOr<GuestDev> MakeGuestDev(const std::vector<std::string>& device_files,
                                      const std::set<unsigned>& nvidia_majors) {
  absl::StatusOr<GuestDevDraft> draft = DraftGuestDev(device_files);
  if (!draft.ok()) return draft.status();
  return FinishGuestDev(*std::move(draft), nvidia_majors);
}

absl::StatusOr<std::vector<int>> CloneGuestDevBinds(const std::vector<std::string>& binds) {
  const int host = open("/dev", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (host < 0) return absl::ErrnoToStatus(errno, "opening the host's /dev");
  std::vector<int> trees;
  for (const std::string& name : binds) {
    const int tree = static_cast<int>(
        syscall(SYS_open_tree, host, name.c_str(), kOpenTreeClone | O_CLOEXEC | AT_RECURSIVE));
    // One the guest's identity cannot reach (or gone since) is left out.
    if (tree < 0 && errno != ENOENT && errno != EACCES && errno != EPERM) {
      const int e = errno;
      for (int t : trees)
        if (t >= 0) close(t);
      close(host);
      return absl::ErrnoToStatus(e, "cloning the host's /dev/" + name);
    }
    trees.push_back(tree);
  }
  close(host);
  return trees;
}

std::string AttachGuestDev(int device_mount, const std::vector<std::string>& binds,
                           const std::vector<int>& trees) {
  std::string err;
  if (syscall(SYS_move_mount, device_mount, "", AT_FDCWD, "/dev", kMoveMountFEmptyPath) != 0)
    err = Why("attaching the guest's /dev", errno);
  close(device_mount);
  // The sentry had the kernel keep the mount points before the guest existed (DeviceFs::Prime):
  // finding them asks the filesystem nothing.
  for (size_t i = 0; i < binds.size(); ++i) {
    const std::string target = "/dev/" + binds[i];
    if (err.empty() && trees[i] >= 0 &&
        syscall(SYS_move_mount, trees[i], "", AT_FDCWD, target.c_str(), kMoveMountFEmptyPath) != 0)
      err = Why("binding the host's " + target, errno);
    if (trees[i] >= 0) close(trees[i]);  // attached (or given up with the rest): nothing to wait on
  }
  return err;
}

int TerminalForConsole() {
  for (int fd : {STDOUT_FILENO, STDIN_FILENO, STDERR_FILENO}) {
    if (!isatty(fd)) continue;
    // By its path, in this mount namespace: the open file itself (/proc/self/fd/N followed) is
    // in the namespace of whoever opened it, and a bind from there is EINVAL. The same node, or
    // none.
    char path[PATH_MAX];
    const std::string self = "/proc/self/fd/" + std::to_string(fd);
    const ssize_t n = readlink(self.c_str(), path, sizeof path - 1);
    if (n <= 0) return -1;
    path[n] = '\0';
    const int node = open(path, O_PATH | O_CLOEXEC);
    struct stat by_path, given;
    if (node >= 0 && fstat(node, &by_path) == 0 && fstat(fd, &given) == 0 &&
        by_path.st_rdev == given.st_rdev && by_path.st_dev == given.st_dev)
      return node;
    if (node >= 0) close(node);
    return -1;
  }
  return -1;
}

std::string GiveTheGuestItsOwnPtys(int terminal) {
  std::string err;
  const std::string options =
      "newinstance,ptmxmode=0666,mode=0620,max=" + std::to_string(kGuestPtys);
  // (No /dev/pts to mount on, with trapped opens on a host without one: no pseudo-terminals for
  // the guest either, its /dev/ptmx finds none beside it.)
  if (mount("devpts", "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC, options.c_str()) != 0 &&
      errno != ENOENT)
    err = Why("mounting the guest's own /dev/pts", errno);
  if (err.empty() && terminal >= 0) {
    // A convenience, not a guard: where it cannot be (no /dev/console to mount on, say), the
    // guest runs all the same and ttyname() finds nothing.
    const std::string source = "/proc/self/fd/" + std::to_string(terminal);
    if (mount(source.c_str(), "/dev/console", nullptr, MS_BIND, nullptr) != 0 && errno != ENOENT)
      fprintf(stderr,
              "nvsentry: the guest's /dev/console: %s; ttyname() will not name its terminal\n",
              strerror(errno));
  }
  if (terminal >= 0) close(terminal);
  return err;
}

}  // namespace nvsentry::sentry
