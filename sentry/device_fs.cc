#include "sentry/device_fs.h"

#define FUSE_USE_VERSION 35
#include <dirent.h>
#include <fcntl.h>
#include <fuse3/fuse_lowlevel.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "hostshim/rate_limited_log.h"
#include "sentry/fuse_flat_dir.h"
#include "sentry/fuse_mount.h"
#include "spdlog/spdlog.h"

namespace nvsentry::sentry {
namespace {

// The catalogue's devices that live directly in /dev, in catalogue order: inode 2 + index.
const std::vector<const abi::DeviceDesc*>& Served() {
  static const std::vector<const abi::DeviceDesc*> served = [] {
    std::vector<const abi::DeviceDesc*> v;
    for (const abi::DeviceDesc& d : abi::Devices())
      if (d.path.starts_with("/dev/") && d.path.find('/', 5) == std::string_view::npos)
        v.push_back(&d);
    return v;
  }();
  return served;
}

const abi::DeviceDesc* DeviceOf(fuse_ino_t ino) {
  const auto& served = Served();
  return ino >= 2 && ino - 2 < served.size() ? served[ino - 2] : nullptr;
}

// The directory: one file per served device, named as in /dev.
const FlatDir& Dir() {
  static const FlatDir dir([] {
    std::vector<std::string> names;
    for (const abi::DeviceDesc* d : Served()) names.emplace_back(d->path.substr(5));
    return names;
  }());
  return dir;
}

DeviceFileHandler& HandlerOf(fuse_req_t req) {
  return *static_cast<DeviceFileHandler*>(fuse_req_userdata(req));
}

void Lookup(fuse_req_t req, fuse_ino_t parent, const char* name) {
  Dir().Lookup(req, parent, name);
}

void GetAttr(fuse_req_t req, fuse_ino_t ino, fuse_file_info*) { Dir().GetAttr(req, ino); }

// O_TRUNC and the like: a node has no size to change; the attributes stay as they are.
void SetAttr(fuse_req_t req, fuse_ino_t ino, struct stat*, int, fuse_file_info*) {
  Dir().GetAttr(req, ino);
}

void Open(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  const abi::DeviceDesc* dev = DeviceOf(ino);
  if (dev == nullptr) {
    fuse_reply_err(req, FlatDir::IsRoot(ino) ? EISDIR : ENOENT);
    return;
  }
  const int64_t handle = HandlerOf(req).OpenFile(*dev, fi->flags, fuse_req_ctx(req)->pid);
  if (handle <= 0) {
    // Never ENOSYS: the kernel would take it as "no OPEN here" and stop asking for good.
    const int err = handle < 0 ? static_cast<int>(-handle) : EIO;
    fuse_reply_err(req, err == ENOSYS ? EOPNOTSUPP : err);
    return;
  }
  fi->fh = static_cast<uint64_t>(handle);
  fi->direct_io = 1;   // no page cache: no mmap, every read and write reaches us
  fi->keep_cache = 0;  // (and fails, as on a device node)
  if (fuse_reply_open(req, fi) == -ENOENT) {
    // The open was interrupted (the caller was killed) after we answered: nobody holds the file,
    // and no RELEASE will come for it.
    HandlerOf(req).ReleaseFile(fi->fh);
  }
}

void Release(fuse_req_t req, fuse_ino_t, fuse_file_info* fi) {
  HandlerOf(req).ReleaseFile(fi->fh);
  fuse_reply_err(req, 0);
}

void Ioctl(fuse_req_t req, fuse_ino_t, unsigned int, void*, fuse_file_info*, unsigned, const void*,
           size_t, size_t) {
  fuse_reply_err(req, ENOTTY);
}

// init lists the directory once (READDIRPLUS) before it binds the files: one request where 24
// lookups were.
void ReadDir(fuse_req_t req, fuse_ino_t, size_t size, off_t off, fuse_file_info*) {
  Dir().ReadDir(req, size, off, false);
}

void ReadDirPlus(fuse_req_t req, fuse_ino_t, size_t size, off_t off, fuse_file_info*) {
  Dir().ReadDir(req, size, off, true);
}

}  // namespace

std::vector<std::string> DeviceFileNames() {
  std::vector<std::string> names;
  for (const abi::DeviceDesc* d : Served()) names.emplace_back(d->path.substr(5));
  return names;
}

absl::StatusOr<DeviceFsMount> MakeDeviceFs() { return MakeFuseMount("device files"); }

struct DeviceFs::Impl {
  fuse_session* session = nullptr;
};

DeviceFs::DeviceFs(hostshim::UniqueFd connection, DeviceFileHandler& handler)
    : impl_(std::make_unique<Impl>()) {
  static const fuse_lowlevel_ops ops = [] {
    fuse_lowlevel_ops o{};
    o.lookup = Lookup;
    o.getattr = GetAttr;
    o.setattr = SetAttr;
    o.open = Open;
    o.release = Release;
    o.read = FlatDir::Read;
    o.write = FlatDir::Write;
    o.ioctl = Ioctl;
    o.lseek = FlatDir::Lseek;
    o.opendir = FlatDir::OpenDir;
    o.readdir = ReadDir;
    o.readdirplus = ReadDirPlus;
    return o;
  }();
  char prog[] = "nvsentry";
  char* argv[] = {prog, nullptr};
  fuse_args args = FUSE_ARGS_INIT(1, argv);
  impl_->session = fuse_session_new(&args, &ops, sizeof ops, &handler);
  // libfuse takes an fd already bound to a filesystem as the mount point "/dev/fd/N", and from
  // then on owns it.
  const std::string fd_path = absl::StrCat("/dev/fd/", connection.get());
  if (impl_->session == nullptr || fuse_session_mount(impl_->session, fd_path.c_str()) != 0) {
    spdlog::error(
        "device files: libfuse cannot serve the filesystem; the guest's opens of them "
        "will hang until it exits");
    return;
  }
  (void)connection.Release();
  thread_ = std::thread([session = impl_->session] {
    const int rc = fuse_session_loop(session);
    spdlog::debug("device files: the filesystem ended ({})", rc);
  });
}

void DeferredDeviceFileHandler::Set(DeviceFileHandler& handler) {
  absl::MutexLock lock(&mu_);
  handler_ = &handler;
}

DeviceFileHandler& DeferredDeviceFileHandler::Wait() {
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(
      +[](DeviceFileHandler** h) { return *h != nullptr; }, &handler_));
  return *handler_;
}

int64_t DeferredDeviceFileHandler::OpenFile(const abi::DeviceDesc& dev, int flags, pid_t tid) {
  return Wait().OpenFile(dev, flags, tid);
}

void DeferredDeviceFileHandler::ReleaseFile(uint64_t handle) { Wait().ReleaseFile(handle); }

DeviceFs::~DeviceFs() {
  if (thread_.joinable()) thread_.detach();  // ends with the connection or the process
}

bool ListDeviceFiles(int mount, size_t count) {
  const int d = openat(mount, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (d < 0) return false;
  // One read usually holds them all: the kernel asks for a page at a time, and 23 files took 3848
  // bytes of it; a catalogue that outgrows it costs one more read, not a lookup per bind.
  size_t named = 0;
  alignas(8) char entries[32768];
  long got;
  while (named < count && (got = syscall(SYS_getdents64, d, entries, sizeof entries)) > 0) {
    for (long at = 0; at < got;) {
      const auto* e = reinterpret_cast<const dirent64*>(entries + at);
      if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) ++named;
      at += e->d_reclen;
    }
  }
  close(d);
  return named >= count;
}

int64_t IdentifyDeviceFile(int fd) {
  const off_t handle = lseek(fd, 0, SEEK_DATA);
  if (handle <= 0) return -(handle == 0 ? EIO : errno);
  // The answer became the file's position, which the guest shares: back to 0 (no request).
  lseek(fd, 0, SEEK_SET);
  return handle;
}

}  // namespace nvsentry::sentry
