// The one directory each of the sentry's FUSE filesystems is (the guest's /dev with its device
// files, sentry/devfs/device_fs.h; the simulated Jetson's nodes, sentry/fake_l4t/fake_l4t_fs.h):
// the root, inode 1, holding entries at inodes 2 + index, whose names and attributes never change
// while the filesystem lives (so the kernel may keep them: entries, attributes and link targets are
// cached "forever").
//
// The first entries are the server's own files: regular, mode 0666, owned by the filesystem's
// root user: who may use a node is the policy's or the served device's to say, not the mode's.
// Any others are given whole (the guest's /dev shows the host's nodes, links and mount points
// through them): a node is the kernel's to open (the server never sees it), a link's target is
// the server's to say.
#pragma once

#ifndef FUSE_USE_VERSION
#define FUSE_USE_VERSION 35
#endif
#include <fuse3/fuse_lowlevel.h>
#include <sys/stat.h>

#include <string>
#include <vector>

namespace nvsentry::sentry {

// An entry given whole: `st` says its type (S_IFCHR, S_IFBLK, S_IFLNK, S_IFDIR or S_IFREG), mode,
// owner, device numbers and times; st_ino is the directory's to set.
struct FlatEntry {
  std::string name;
  struct stat st {};
  std::string link;  // S_IFLNK: the target
  // Something is mounted on it (the guest's /dev: a host directory init binds): listed alone to
  // the server's own threads (OpenDir), which look the mount points up so.
  bool mount_point = false;
};

class FlatDir {
 public:
  // `files`: the server's own files; `others`: entries given whole, after them; the root's owner.
  explicit FlatDir(std::vector<std::string> files, std::vector<FlatEntry> others = {},
                   uid_t root_uid = 0, gid_t root_gid = 0);

  static bool IsRoot(fuse_ino_t ino) { return ino == FUSE_ROOT_ID; }
  // The index of the server's own file `ino`, or -1 (the root, an entry given whole, or none).
  int IndexOf(fuse_ino_t ino) const {
    return ino >= 2 && ino - 2 < files_ ? static_cast<int>(ino - 2) : -1;
  }
  size_t size() const { return entries_.size(); }  // entries of the root, all kinds
  size_t mount_points() const;                     // those marked mount_point
  struct stat AttrOf(fuse_ino_t ino) const;

  // The directory's requests, answered whole.
  void Lookup(fuse_req_t req, fuse_ino_t parent, const char* name) const;
  void GetAttr(fuse_req_t req, fuse_ino_t ino) const;  // SETATTR answers the same: nothing changes
  void ReadLink(fuse_req_t req, fuse_ino_t ino) const;
  // A listing of the root. One opened by the server's own threads (FromOwnThread) holds the
  // mount points alone, and the kernel does not keep it: the server lists them to have their
  // entries kept (DeviceFs::Prime), in one request, where a lookup each was a request each.
  static void OpenDir(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi);
  // The root's entries from `off` on (those of the listing `fi` opened), as many as `size` bytes
  // hold; with `plus`, each with its attributes, which the kernel keeps as if looked up
  // (READDIRPLUS).
  void ReadDir(fuse_req_t req, size_t size, off_t off, bool plus, const fuse_file_info* fi) const;

  // The files' own requests both filesystems answer alike. The files have no data: READ and
  // WRITE are EINVAL, as on a Tegra device node. LSEEK(SEEK_DATA) answers the open's handle to
  // the server's own threads only (FromOwnThread): how the server tells which open a file it
  // fetched from a caller is (IdentifyDeviceFile); anyone else gets ENXIO, as from a device
  // without data. Never ENOSYS: the kernel would stop asking for good.
  static void Read(fuse_req_t req, fuse_ino_t, size_t, off_t, fuse_file_info*);
  static void Write(fuse_req_t req, fuse_ino_t, const char*, size_t, off_t, fuse_file_info*);
  static void Lseek(fuse_req_t req, fuse_ino_t, off_t, int whence, fuse_file_info* fi);

 private:
  const FlatEntry* EntryOf(fuse_ino_t ino) const {
    return ino >= 2 && ino - 2 < entries_.size() ? &entries_[ino - 2] : nullptr;
  }
  size_t files_;
  std::vector<FlatEntry> entries_;  // the files first
  struct stat root_ {};
};

}  // namespace nvsentry::sentry
