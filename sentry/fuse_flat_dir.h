// The one directory each of the sentry's FUSE filesystems is (the guest's device files,
// sentry/device_fs.h; the simulated Jetson's nodes, sentry/fake_l4t_fs.h): the root, inode 1,
// holding regular files at inodes 2 + index, whose names and attributes never change while the
// filesystem lives (so the kernel may keep them: entries and attributes are cached "forever").
// Files are mode 0666 and the root 0755, owned by the filesystem's root: who may use a node is
// the policy's or the served device's to say, not the mode's.
#pragma once

#ifndef FUSE_USE_VERSION
#define FUSE_USE_VERSION 35
#endif
#include <fuse3/fuse_lowlevel.h>
#include <sys/stat.h>

#include <string>
#include <vector>

namespace nvsentry::sentry {

class FlatDir {
 public:
  explicit FlatDir(std::vector<std::string> names) : names_(std::move(names)) {}

  static bool IsRoot(fuse_ino_t ino) { return ino == FUSE_ROOT_ID; }
  // The index of file `ino` in the names, or -1 (the root, or no such file).
  int IndexOf(fuse_ino_t ino) const {
    return ino >= 2 && ino - 2 < names_.size() ? static_cast<int>(ino - 2) : -1;
  }
  static struct stat AttrOf(fuse_ino_t ino);

  // The directory's requests, answered whole.
  void Lookup(fuse_req_t req, fuse_ino_t parent, const char* name) const;
  void GetAttr(fuse_req_t req, fuse_ino_t ino) const;  // SETATTR answers the same: nothing changes
  static void OpenDir(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi);
  // The root's entries from `off` on, as many as `size` bytes hold; with `plus`, each with its
  // attributes, which the kernel keeps as if looked up (READDIRPLUS).
  void ReadDir(fuse_req_t req, size_t size, off_t off, bool plus) const;

  // The files' own requests both filesystems answer alike. The files have no data: READ and
  // WRITE are EINVAL, as on a Tegra device node. LSEEK(SEEK_DATA) answers the open's handle to
  // the server's own threads only (FromOwnThread): how the server tells which open a file it
  // fetched from a caller is (IdentifyDeviceFile); anyone else gets ENXIO, as from a device
  // without data. Never ENOSYS: the kernel would stop asking for good.
  static void Read(fuse_req_t req, fuse_ino_t, size_t, off_t, fuse_file_info*);
  static void Write(fuse_req_t req, fuse_ino_t, const char*, size_t, off_t, fuse_file_info*);
  static void Lseek(fuse_req_t req, fuse_ino_t, off_t, int whence, fuse_file_info* fi);

 private:
  std::vector<std::string> names_;
};

}  // namespace nvsentry::sentry
