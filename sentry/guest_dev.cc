#include "sentry/guest_dev.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <optional>

#include "abi/catalogue.h"
#include "absl/strings/str_cat.h"
#include "spdlog/spdlog.h"

namespace nvsentry::sentry {
namespace {

// <linux/mount.h>'s constants (that header clashes with <sys/mount.h>).
constexpr unsigned kFsopenCloexec = 0x1;
constexpr unsigned kFsconfigSetString = 1, kFsconfigCmdCreate = 6;
constexpr unsigned kFsmountCloexec = 0x1;
constexpr unsigned kMountAttrRdonly = 0x1, kMountAttrNosuid = 0x2, kMountAttrNoexec = 0x8;
constexpr unsigned kMoveMountFEmptyPath = 0x4, kOpenTreeClone = 1;

absl::Status DevError(const std::string& what) {
  return absl::ErrnoToStatus(errno, "the guest's /dev: " + what);
}

std::string Why(const std::string& what, int err) { return what + ": " + strerror(err); }

// An empty file or directory to mount on, in `dir`.
bool MakeMountPoint(int dir, const std::string& name, bool directory, mode_t mode) {
  if (directory) return mkdirat(dir, name.c_str(), mode) == 0;
  const int fd = openat(dir, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0) return false;
  close(fd);
  return true;
}

// In the new /dev being made (`dir`): a mount point for each device file.
absl::Status AddDeviceFileMountPoints(int dir, const std::vector<std::string>& device_files) {
  for (const std::string& name : device_files)
    if (!MakeMountPoint(dir, name, false, 0666))
      return DevError("making a mount point for " + name);
  return absl::OkStatus();
}

// The new /dev (`dir`) to the guest's root, as a container's /dev is.
absl::Status GiveToGuest(int dir, uid_t owner, gid_t group) {
  if (fchownat(dir, "", owner, group, AT_EMPTY_PATH) != 0)
    return DevError("giving it to the guest");
  return absl::OkStatus();
}

// Lists the host's /dev and decides each entry's fate but for the NVIDIA majors (FinishGuestDev
// hides those nodes); stats only what the type leaves open.
absl::StatusOr<std::vector<HostEntry>> ListHostDev(int host,
                                                   const std::vector<std::string>& device_files) {
  struct stat host_st;
  if (fstat(host, &host_st) != 0) return DevError("opening the host's /dev");
  DIR* d = fdopendir(dup(host));
  if (d == nullptr) return DevError("listing the host's /dev");
  std::vector<HostEntry> entries;
  while (const dirent* e = readdir(d)) {
    HostEntry h{e->d_name};
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
      h.fate = Fate::kLink;
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

// A fresh, empty tmpfs (detached), mode 0755.
absl::StatusOr<hostshim::UniqueFd> MakeTmpfs(unsigned attrs) {
  const hostshim::UniqueFd fs(static_cast<int>(syscall(SYS_fsopen, "tmpfs", kFsopenCloexec)));
  if (!fs || syscall(SYS_fsconfig, fs.get(), kFsconfigSetString, "mode", "0755", 0) != 0 ||
      syscall(SYS_fsconfig, fs.get(), kFsconfigCmdCreate, nullptr, nullptr, 0) != 0)
    return DevError("making a tmpfs");
  hostshim::UniqueFd mnt(static_cast<int>(syscall(SYS_fsmount, fs.get(), kFsmountCloexec, attrs)));
  if (!mnt) return DevError("fsmount");
  return mnt;
}

// The overlay: the drafted layer (the device files' mount points), with the NVIDIA nodes'
// whiteouts added, over the host's /dev. nullopt where the kernel has no overlayfs (or refuses
// this one).
absl::StatusOr<std::optional<hostshim::UniqueFd>> MakeOverlay(const std::vector<HostEntry>& entries,
                                                              int layer, uid_t owner, gid_t group) {
  for (const HostEntry& h : entries)
    if (h.fate == Fate::kHide && mknodat(layer, h.name.c_str(), S_IFCHR, makedev(0, 0)) != 0)
      return DevError("hiding " + h.name);
  // The overlay's root takes the top layer's owner.
  if (absl::Status s = GiveToGuest(layer, owner, group); !s.ok()) return s;
  const hostshim::UniqueFd fs(static_cast<int>(syscall(SYS_fsopen, "overlay", kFsopenCloexec)));
  if (!fs) {
    spdlog::debug("the guest's /dev: no overlayfs ({}); copying the host's nodes", strerror(errno));
    return std::nullopt;
  }
  const std::string lower = absl::StrCat("/proc/self/fd/", layer, ":/dev");
  if (syscall(SYS_fsconfig, fs.get(), kFsconfigSetString, "lowerdir", lower.c_str(), 0) != 0 ||
      syscall(SYS_fsconfig, fs.get(), kFsconfigCmdCreate, nullptr, nullptr, 0) != 0) {
    spdlog::debug("the guest's /dev: overlayfs refused the host's /dev ({}); copying its nodes",
                  strerror(errno));
    return std::nullopt;
  }
  hostshim::UniqueFd mnt(
      static_cast<int>(syscall(SYS_fsmount, fs.get(), kFsmountCloexec,
                               kMountAttrRdonly | kMountAttrNosuid | kMountAttrNoexec)));
  if (!mnt) return DevError("fsmount of the overlay");
  return std::optional<hostshim::UniqueFd>(std::move(mnt));
}

// The copy: a tmpfs with a node for each of the host's (same device, owner and mode) and a copy
// of each link. Called with a umask of 0, a node needs no chmod after its mknod.
absl::StatusOr<hostshim::UniqueFd> MakeCopy(const std::vector<HostEntry>& entries,
                                            const std::vector<std::string>& device_files, int host,
                                            uid_t owner, gid_t group) {
  absl::StatusOr<hostshim::UniqueFd> copy = MakeTmpfs(kMountAttrNosuid | kMountAttrNoexec);
  if (!copy.ok()) return copy.status();
  const int dir = copy->get();
  const uid_t me_uid = geteuid();
  const gid_t me_gid = getegid();
  const mode_t mask = umask(0);
  umask(mask);
  for (const HostEntry& h : entries) {
    const char* name = h.name.c_str();
    if (h.fate == Fate::kLink) {
      char link[PATH_MAX];
      const ssize_t n = readlinkat(host, name, link, sizeof link - 1);
      if (n <= 0) continue;
      link[n] = '\0';
      if (symlinkat(link, dir, name) != 0) return DevError("copying the link " + h.name);
    } else if (h.fate == Fate::kNode) {
      // Most nodes are root's, as the copy already is: no chown for those.
      const bool same_owner = h.st.st_uid == me_uid && h.st.st_gid == me_gid;
      if (mknodat(dir, name, h.st.st_mode & (S_IFMT | 07777), h.st.st_rdev) != 0 ||
          (!same_owner &&
           fchownat(dir, name, h.st.st_uid, h.st.st_gid, AT_SYMLINK_NOFOLLOW) != 0) ||
          ((!same_owner || (h.st.st_mode & mask) != 0) &&
           fchmodat(dir, name, h.st.st_mode & 07777, 0) != 0))
        return DevError("copying the node " + h.name);
    } else if (h.fate == Fate::kBind) {
      if (!MakeMountPoint(dir, h.name, h.directory, 0755))
        return DevError("making a mount point for " + h.name);
    }
  }
  if (absl::Status s = AddDeviceFileMountPoints(dir, device_files); !s.ok()) return s;
  if (absl::Status s = GiveToGuest(dir, owner, group); !s.ok()) return s;
  return copy;
}

// Waits for the sentry's "listed" on `fd` (kDeviceFilesListed). Empty, or why not.
std::string AwaitListing(int fd) {
  char word[16];
  ssize_t n;
  do n = recv(fd, word, sizeof word, 0);
  while (n < 0 && errno == EINTR);
  if (n == static_cast<ssize_t>(strlen(kDeviceFilesListed)) &&
      memcmp(word, kDeviceFilesListed, static_cast<size_t>(n)) == 0)
    return "";
  return n < 0 ? Why("waiting for the sentry to list the device files", errno)
               : "the sentry ended before it listed the device files";
}

}  // namespace

absl::StatusOr<GuestDevDraft> DraftGuestDev(const std::vector<std::string>& device_files) {
  GuestDevDraft draft;
  draft.host.Reset(open("/dev", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!draft.host) return DevError("opening the host's /dev");
  absl::StatusOr<std::vector<HostEntry>> entries = ListHostDev(draft.host.get(), device_files);
  if (!entries.ok()) return entries.status();
  draft.entries = *std::move(entries);
  return draft;
}

absl::StatusOr<hostshim::UniqueFd> MakeGuestDevLayer(const std::vector<std::string>& device_files) {
  absl::StatusOr<hostshim::UniqueFd> layer = MakeTmpfs(0);
  if (!layer.ok()) return layer.status();
  if (absl::Status s = AddDeviceFileMountPoints(layer->get(), device_files); !s.ok()) return s;
  return layer;
}

absl::StatusOr<GuestDev> FinishGuestDev(GuestDevDraft draft, hostshim::UniqueFd layer,
                                        const std::vector<std::string>& device_files,
                                        const std::set<unsigned>& nvidia_majors, uid_t owner,
                                        gid_t group) {
  HideNvidiaMajors(draft.entries, nvidia_majors);
  GuestDev dev;
  for (const HostEntry& h : draft.entries)
    if (h.fate == Fate::kBind) dev.binds.push_back(h.name);
  dev.devices = device_files;
  if (layer) {
    absl::StatusOr<std::optional<hostshim::UniqueFd>> overlay =
        MakeOverlay(draft.entries, layer.get(), owner, group);
    if (!overlay.ok()) return overlay.status();
    if (overlay->has_value()) {
      dev.root = std::move(**overlay);
      dev.overlay = true;
      // Not closed here: the last close of the layer's detached mount unmounts it, which waits
      // for an RCU grace period (some 0.03 ms here) on the start's path. The sentry closes it
      // after the clone, when init's copy is the last: init's end unmounts it.
      dev.layer = std::move(layer);
      return dev;
    }
  }
  absl::StatusOr<hostshim::UniqueFd> made =
      MakeCopy(draft.entries, device_files, draft.host.get(), owner, group);
  if (!made.ok()) return made.status();
  dev.root = *std::move(made);
  return dev;
}

absl::StatusOr<GuestDev> MakeGuestDev(const std::vector<std::string>& device_files,
                                      const std::set<unsigned>& nvidia_majors, uid_t owner,
                                      gid_t group, bool copy) {
  absl::StatusOr<GuestDevDraft> draft = DraftGuestDev(device_files);
  if (!draft.ok()) return draft.status();
  hostshim::UniqueFd layer;
  if (!copy) {
    absl::StatusOr<hostshim::UniqueFd> made = MakeGuestDevLayer(device_files);
    if (!made.ok()) return made.status();
    layer = *std::move(made);
  }
  return FinishGuestDev(*std::move(draft), std::move(layer), device_files, nvidia_majors, owner,
                        group);
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

std::string AttachGuestDev(int root, const std::vector<std::string>& binds,
                           const std::vector<int>& trees, const std::vector<std::string>& devices,
                           int device_mount, int listed_fd) {
  std::string err;
  if (syscall(SYS_move_mount, root, "", AT_FDCWD, "/dev", kMoveMountFEmptyPath) != 0)
    err = Why("attaching the guest's /dev", errno);
  close(root);
  for (size_t i = 0; i < binds.size(); ++i) {
    const std::string target = "/dev/" + binds[i];
    if (err.empty() && trees[i] >= 0 &&
        syscall(SYS_move_mount, trees[i], "", AT_FDCWD, target.c_str(), kMoveMountFEmptyPath) != 0)
      err = Why("binding the host's " + target, errno);
    if (err.empty() && trees[i] < 0) {
      // Left out: where the new /dev is a copy, its empty mount point goes (the overlay shows the
      // host's own entry, which the guest could not reach either).
      if (rmdir(target.c_str()) != 0) unlink(target.c_str());
    }
    if (trees[i] >= 0) close(trees[i]);  // attached (or given up with the rest): nothing to wait on
  }
  // The device files are staged on /proc, which init covers with the guest's own later: nothing
  // is left of them in /dev but their binds.
  const std::string staging = "/proc";
  if (err.empty() && syscall(SYS_move_mount, device_mount, "", AT_FDCWD, staging.c_str(),
                             kMoveMountFEmptyPath) != 0)
    err = Why("attaching the device files", errno);
  close(device_mount);
  // The sentry lists the files meanwhile (ListDeviceFiles), so that the binds below do not each
  // ask the filesystem: init waits for its word. Listing them here instead cost init's start
  // three round trips to the sentry (some 0.25 ms on a 2-CPU VM) that the sentry now makes while
  // init clones and attaches the rest.
  if (err.empty()) err = AwaitListing(listed_fd);
  for (size_t i = 0; err.empty() && i < devices.size(); ++i) {
    const std::string target = "/dev/" + devices[i], source = staging + "/" + devices[i];
    if (mount(source.c_str(), target.c_str(), nullptr, MS_BIND, nullptr) != 0)
      err = Why("binding the device file " + target, errno);
  }
  if (err.empty() && umount2(staging.c_str(), MNT_DETACH) != 0)
    err = Why("taking the device files off " + staging, errno);
  if (err.empty() && mount(nullptr, "/dev", nullptr,
                           MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NOEXEC, nullptr) != 0)
    err = Why("making the guest's /dev read-only", errno);
  return err;
}

}  // namespace nvsentry::sentry
