#include "sentry/fuse_flat_dir.h"

#include <cerrno>

#include "sentry/fuse_mount.h"

namespace nvsentry::sentry {
namespace {
constexpr double kForever = 86400.0 * 365;
}  // namespace

struct stat FlatDir::AttrOf(fuse_ino_t ino) {
  struct stat st {};
  st.st_ino = ino;
  st.st_nlink = 1;
  st.st_mode = IsRoot(ino) ? (S_IFDIR | 0755) : (S_IFREG | 0666);
  return st;
}

void FlatDir::Lookup(fuse_req_t req, fuse_ino_t parent, const char* name) const {
  if (IsRoot(parent)) {
    for (size_t i = 0; i < names_.size(); ++i) {
      if (names_[i] != name) continue;
      fuse_entry_param e{};
      e.ino = 2 + i;
      e.attr = AttrOf(e.ino);
      e.attr_timeout = e.entry_timeout = kForever;
      fuse_reply_entry(req, &e);
      return;
    }
  }
  fuse_reply_err(req, ENOENT);
}

void FlatDir::GetAttr(fuse_req_t req, fuse_ino_t ino) const {
  if (!IsRoot(ino) && IndexOf(ino) < 0) {
    fuse_reply_err(req, ENOENT);
    return;
  }
  const struct stat st = AttrOf(ino);
  fuse_reply_attr(req, &st, kForever);
}

void FlatDir::OpenDir(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  if (!IsRoot(ino)) {
    fuse_reply_err(req, ENOTDIR);
    return;
  }
  fuse_reply_open(req, fi);
}

void FlatDir::ReadDir(fuse_req_t req, size_t size, off_t off, bool plus) const {
  std::string buf(size, '\0');
  size_t used = 0;
  for (size_t i = static_cast<size_t>(off < 0 ? 0 : off); i < names_.size(); ++i) {
    fuse_entry_param e{};
    e.ino = 2 + i;
    e.attr = AttrOf(e.ino);
    e.attr_timeout = e.entry_timeout = kForever;
    const off_t next = static_cast<off_t>(i + 1);
    const size_t n = plus ? fuse_add_direntry_plus(req, buf.data() + used, size - used,
                                                   names_[i].c_str(), &e, next)
                          : fuse_add_direntry(req, buf.data() + used, size - used,
                                              names_[i].c_str(), &e.attr, next);
    if (n > size - used) break;
    used += n;
  }
  fuse_reply_buf(req, buf.data(), used);
}

void FlatDir::Read(fuse_req_t req, fuse_ino_t, size_t, off_t, fuse_file_info*) {
  fuse_reply_err(req, EINVAL);
}

void FlatDir::Write(fuse_req_t req, fuse_ino_t, const char*, size_t, off_t, fuse_file_info*) {
  fuse_reply_err(req, EINVAL);
}

void FlatDir::Lseek(fuse_req_t req, fuse_ino_t, off_t, int whence, fuse_file_info* fi) {
  if (whence != SEEK_DATA || !FromOwnThread(fuse_req_ctx(req)->pid)) {
    fuse_reply_err(req, ENXIO);
    return;
  }
  fuse_reply_lseek(req, static_cast<off_t>(fi->fh));
}

}  // namespace nvsentry::sentry
