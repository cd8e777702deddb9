#include "sentry/devfs/fuse_flat_dir.h"

#include <cerrno>
#include <cstdint>

#include "sentry/devfs/fuse_mount.h"

namespace nvsentry::sentry {
namespace {
constexpr double kForever = 86400.0 * 365;
constexpr uint64_t kMountPointsOnly = 1;  // a listing's handle (OpenDir)
}  // namespace

FlatDir::FlatDir(std::vector<std::string> files, std::vector<FlatEntry> others, uid_t root_uid,
                 gid_t root_gid)
    : files_(files.size()) {
  entries_.reserve(files.size() + others.size());
  for (std::string& name : files) {
    FlatEntry e;
    e.name = std::move(name);
    e.st.st_mode = S_IFREG | 0666;
    entries_.push_back(std::move(e));
  }
  for (FlatEntry& e : others) entries_.push_back(std::move(e));
  for (size_t i = 0; i < entries_.size(); ++i) {
    struct stat& st = entries_[i].st;
    st.st_ino = 2 + i;
    if (st.st_nlink == 0) st.st_nlink = S_ISDIR(st.st_mode) ? 2 : 1;
    if (S_ISLNK(st.st_mode)) st.st_size = static_cast<off_t>(entries_[i].link.size());
  }
  root_.st_ino = FUSE_ROOT_ID;
  root_.st_mode = S_IFDIR | 0755;
  root_.st_nlink = 2;
  root_.st_uid = root_uid;
  root_.st_gid = root_gid;
}

size_t FlatDir::mount_points() const {
  size_t n = 0;
  for (const FlatEntry& e : entries_) n += e.mount_point ? 1 : 0;
  return n;
}

struct stat FlatDir::AttrOf(fuse_ino_t ino) const {
  if (IsRoot(ino)) return root_;
  const FlatEntry* e = EntryOf(ino);
  return e != nullptr ? e->st : (struct stat){};
}

void FlatDir::Lookup(fuse_req_t req, fuse_ino_t parent, const char* name) const {
  if (IsRoot(parent)) {
    for (size_t i = 0; i < entries_.size(); ++i) {
      if (entries_[i].name != name) continue;
      fuse_entry_param e{};
      e.ino = 2 + i;
      e.attr = entries_[i].st;
      e.attr_timeout = e.entry_timeout = kForever;
      fuse_reply_entry(req, &e);
      return;
    }
    // Not there, for good: the kernel may keep that too, so that a name is asked about once (a
    // guest that looks up name after name costs a request per name, as on any filesystem).
    fuse_entry_param none{};
    none.entry_timeout = kForever;
    fuse_reply_entry(req, &none);
    return;
  }
  fuse_reply_err(req, ENOENT);
}

void FlatDir::GetAttr(fuse_req_t req, fuse_ino_t ino) const {
  if (!IsRoot(ino) && EntryOf(ino) == nullptr) {
    fuse_reply_err(req, ENOENT);
    return;
  }
  const struct stat st = AttrOf(ino);
  fuse_reply_attr(req, &st, kForever);
}

void FlatDir::ReadLink(fuse_req_t req, fuse_ino_t ino) const {
  const FlatEntry* e = EntryOf(ino);
  if (e == nullptr || !S_ISLNK(e->st.st_mode)) {
    fuse_reply_err(req, EINVAL);
    return;
  }
  fuse_reply_readlink(req, e->link.c_str());
}

void FlatDir::OpenDir(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  if (!IsRoot(ino)) {
    fuse_reply_err(req, ENOTDIR);
    return;
  }
  if (FromOwnThread(fuse_req_ctx(req)->pid)) {
    fi->fh = kMountPointsOnly;
  } else {
    fi->cache_readdir = 1;  // the listing never changes: the kernel may keep it
    fi->keep_cache = 1;
  }
  fuse_reply_open(req, fi);
}

void FlatDir::ReadDir(fuse_req_t req, size_t size, off_t off, bool plus,
                      const fuse_file_info* fi) const {
  const bool mount_points_only = fi != nullptr && fi->fh == kMountPointsOnly;
  std::string buf(size, '\0');
  size_t used = 0;
  for (size_t i = static_cast<size_t>(off < 0 ? 0 : off); i < entries_.size(); ++i) {
    if (mount_points_only && !entries_[i].mount_point) continue;
    fuse_entry_param e{};
    e.ino = 2 + i;
    e.attr = entries_[i].st;
    e.attr_timeout = e.entry_timeout = kForever;
    const off_t next = static_cast<off_t>(i + 1);
    const size_t n = plus ? fuse_add_direntry_plus(req, buf.data() + used, size - used,
                                                   entries_[i].name.c_str(), &e, next)
                          : fuse_add_direntry(req, buf.data() + used, size - used,
                                              entries_[i].name.c_str(), &e.attr, next);
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
