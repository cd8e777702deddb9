#include "sentry/devfs/device_fs.h"

#define FUSE_USE_VERSION 35
#include <dirent.h>
#include <fcntl.h>
#include <fuse3/fuse_lowlevel.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "hostshim/rate_limited_log.h"
#include "sentry/devfs/fuse_flat_dir.h"
#include "sentry/devfs/fuse_mount.h"
#include "sentry/process/test_hooks.h"
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

}  // namespace

struct DeviceFs::Impl {
  Impl(DeviceFileHandler& h, FlatDir d) : handler(h), dir(std::move(d)) {}
  DeviceFileHandler& handler;
  const FlatDir dir;
  fuse_session* session = nullptr;
  bool failed = false;  // Prime's serving failed, which ended the filesystem
};

namespace {

DeviceFs::Impl& ImplOf(fuse_req_t req) {
  return *static_cast<DeviceFs::Impl*>(fuse_req_userdata(req));
}
const FlatDir& DirOf(fuse_req_t req) { return ImplOf(req).dir; }
DeviceFileHandler& HandlerOf(fuse_req_t req) { return ImplOf(req).handler; }

void Lookup(fuse_req_t req, fuse_ino_t parent, const char* name) {
  DirOf(req).Lookup(req, parent, name);
}

void GetAttr(fuse_req_t req, fuse_ino_t ino, fuse_file_info*) { DirOf(req).GetAttr(req, ino); }

void ReadLink(fuse_req_t req, fuse_ino_t ino) { DirOf(req).ReadLink(req, ino); }

// /dev is the host's to change, not the guest's: nothing is made, removed or renamed there.
void MakeNode(fuse_req_t req, fuse_ino_t, const char*, mode_t, dev_t) {
  fuse_reply_err(req, EROFS);
}
void MakeDir(fuse_req_t req, fuse_ino_t, const char*, mode_t) { fuse_reply_err(req, EROFS); }
void Remove(fuse_req_t req, fuse_ino_t, const char*) { fuse_reply_err(req, EROFS); }
void MakeLink(fuse_req_t req, const char*, fuse_ino_t, const char*) { fuse_reply_err(req, EROFS); }
void Rename(fuse_req_t req, fuse_ino_t, const char*, fuse_ino_t, const char*, unsigned) {
  fuse_reply_err(req, EROFS);
}
void HardLink(fuse_req_t req, fuse_ino_t, fuse_ino_t, const char*) { fuse_reply_err(req, EROFS); }
void Create(fuse_req_t req, fuse_ino_t, const char*, mode_t, fuse_file_info*) {
  fuse_reply_err(req, EROFS);
}

// A device file's O_TRUNC: it has no size to change; the attributes stay as they are. Anything
// else (a mode, an owner, times; of any entry) is the host's to change, not the guest's.
void SetAttr(fuse_req_t req, fuse_ino_t ino, struct stat*, int to_set, fuse_file_info*) {
  if (DirOf(req).IndexOf(ino) >= 0 && (to_set & ~FUSE_SET_ATTR_SIZE) == 0) {
    DirOf(req).GetAttr(req, ino);
    return;
  }
  fuse_reply_err(req, EROFS);
}

void Open(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  const abi::DeviceDesc* dev = DeviceOf(ino);
  if (dev == nullptr) {
    // The root, or an entry shown for the host's /dev: a mount point init covers (the nodes and
    // links never come here).
    fuse_reply_err(req, FlatDir::IsRoot(ino) ? EISDIR : EACCES);
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

// What DeviceFs::Prime's other thread does: lists the mount points, then says so on `done`.
struct PrimeJob {
  int mount;
  size_t count;  // the mount points
  int done;      // an eventfd
  bool found = false;
};

// Lists the root once (the mount points alone: FlatDir::OpenDir), until every one was named.
void* ListMountPoints(void* arg) {
  auto* job = static_cast<PrimeJob*>(arg);
  size_t named = 0;
  const int d = openat(job->mount, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  alignas(8) char entries[8192];
  long got;
  while (d >= 0 && named < job->count &&
         (got = syscall(SYS_getdents64, d, entries, sizeof entries)) > 0) {
    for (long at = 0; at < got;) {
      const auto* e = reinterpret_cast<const dirent64*>(entries + at);
      if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) ++named;
      at += e->d_reclen;
    }
  }
  if (d >= 0) close(d);
  job->found = named >= job->count;
  eventfd_write(job->done, 1);
  return nullptr;
}

void Ioctl(fuse_req_t req, fuse_ino_t, unsigned int, void*, fuse_file_info*, unsigned, const void*,
           size_t, size_t) {
  fuse_reply_err(req, ENOTTY);
}

void ReadDir(fuse_req_t req, fuse_ino_t, size_t size, off_t off, fuse_file_info* fi) {
  DirOf(req).ReadDir(req, size, off, false, fi);
}

void ReadDirPlus(fuse_req_t req, fuse_ino_t, size_t size, off_t off, fuse_file_info* fi) {
  DirOf(req).ReadDir(req, size, off, true, fi);
}

}  // namespace

std::vector<std::string> DeviceFileNames() {
  std::vector<std::string> names;
  for (const abi::DeviceDesc* d : Served()) names.emplace_back(d->path.substr(5));
  return names;
}

absl::StatusOr<DeviceFsMount> MakeDeviceFs() {
  return MakeFuseMount("the guest's /dev", FuseMountKind::kWithDevices);
}

DeviceFs::DeviceFs(hostshim::UniqueFd connection, DeviceFileHandler& handler,
                   std::vector<FlatEntry> others, uid_t root_uid, gid_t root_gid)
    : impl_(std::make_unique<Impl>(
          handler, FlatDir(DeviceFileNames(), std::move(others), root_uid, root_gid))) {
  static const fuse_lowlevel_ops ops = [] {
    fuse_lowlevel_ops o{};
    o.init = [](void*, fuse_conn_info* conn) {
      // The host's links in /dev are followed through the page cache after the first time.
      if (conn->capable & FUSE_CAP_CACHE_SYMLINKS) conn->want |= FUSE_CAP_CACHE_SYMLINKS;
    };
    o.lookup = Lookup;
    o.getattr = GetAttr;
    o.setattr = SetAttr;
    o.readlink = ReadLink;
    o.mknod = MakeNode;
    o.mkdir = MakeDir;
    o.unlink = Remove;
    o.rmdir = Remove;
    o.symlink = MakeLink;
    o.rename = Rename;
    o.link = HardLink;
    o.create = Create;
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
  impl_->session = fuse_session_new(&args, &ops, sizeof ops, impl_.get());
  // libfuse takes an fd already bound to a filesystem as the mount point "/dev/fd/N", and from
  // then on owns it.
  const std::string fd_path = absl::StrCat("/dev/fd/", connection.get());
  if (impl_->session == nullptr || fuse_session_mount(impl_->session, fd_path.c_str()) != 0) {
    if (impl_->session != nullptr) fuse_session_destroy(impl_->session);
    impl_->session = nullptr;
    return;
  }
  (void)connection.Release();
}

int DeviceFs::ConnectionFd() const {
  return impl_->session != nullptr ? fuse_session_fd(impl_->session) : -1;
}

namespace {

// Pins this thread to the CPU it is on (`here`); false, with nothing changed, when it cannot tell
// which (`was`: the CPUs it had).
bool PinToThisCpu(cpu_set_t& was, cpu_set_t& here) {
  const int cpu = sched_getcpu();
  CPU_ZERO(&here);
  const bool pinned = cpu >= 0 && sched_getaffinity(0, sizeof was, &was) == 0;
  if (pinned) {
    CPU_SET(cpu, &here);
    sched_setaffinity(0, sizeof here, &here);
  }
  return pinned;
}

// Starts ListMountPoints on `job` in a thread of its own, on `here` when `pinned`.
bool StartLister(PrimeJob& job, bool pinned, const cpu_set_t& here, pthread_t& lister) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  if (pinned) pthread_attr_setaffinity_np(&attr, sizeof here, &here);
  const bool started = pthread_create(&lister, &attr, ListMountPoints, &job) == 0;
  pthread_attr_destroy(&attr);
  return started;
}

// Answers the session's requests until the lister says it is done (`done`); 0, or the errno that
// ended the serving.
int ServeUntilListed(fuse_session* session, int done, fuse_buf& buf) {
  pollfd p[2] = {{fuse_session_fd(session), POLLIN, 0}, {done, POLLIN, 0}};
  for (;;) {
    if (TestHookOn(TestHook::kFailDeviceListing)) return EIO;
    if (poll(p, 2, -1) < 0 && errno != EINTR) return errno;
    if (p[0].revents & POLLIN) {
      const int got = fuse_session_receive_buf(session, &buf);
      if (got > 0) fuse_session_process_buf(session, &buf);
      if (got < 0 && got != -EINTR && got != -EAGAIN && got != -ENOENT) return -got;
      continue;  // the asker's requests first: it ends only once they are answered
    }
    if (p[1].revents & POLLIN) return 0;
  }
}

}  // namespace

bool DeviceFs::Prime(int mount, const std::function<void()>& before_giving_up) {
  if (impl_->session == nullptr) return false;
  PrimeJob job{mount, impl_->dir.mount_points(), eventfd(0, EFD_CLOEXEC)};
  if (job.done < 0) return false;
  // Both threads on this CPU, this one waiting while the other asks: each request and its answer
  // is then a switch between the two, where a thread woken on the other CPU (idle, halted) took
  // some 0.05 ms (2-CPU VM).
  cpu_set_t was, here;
  const bool pinned = PinToThisCpu(was, here);
  // The kernel's INIT, queued since the filesystem was made, is answered first, so that the
  // asker's first request does not wait behind it (some 0.02 ms). An error shows in the loop
  // (but for ENODEV, an aborted connection, which libfuse takes for the session's end: the
  // asker's requests then fail, and it ends).
  fuse_buf buf{};
  if (pollfd queued{fuse_session_fd(impl_->session), POLLIN, 0};
      poll(&queued, 1, 0) == 1 && fuse_session_receive_buf(impl_->session, &buf) > 0)
    fuse_session_process_buf(impl_->session, &buf);
  pthread_t asker;
  const bool started = StartLister(job, pinned, here, asker);
  // The errno that ended the serving.
  const int failed = started ? ServeUntilListed(impl_->session, job.done, buf) : 0;
  free(buf.mem);
  if (failed) {
    // Nobody can answer the asker now: ending the connection ends its requests (and the
    // filesystem, which Serve then reports), once nobody else holds it.
    spdlog::error("the guest's /dev: serving its first requests failed ({})", strerror(failed));
    if (before_giving_up) before_giving_up();
    fuse_session_destroy(impl_->session);
    impl_->session = nullptr;
    impl_->failed = true;
  }
  if (started) pthread_join(asker, nullptr);
  if (pinned) sched_setaffinity(0, sizeof was, &was);
  close(job.done);
  return started && job.found;
}

bool DeviceFs::Serve() {
  if (impl_->failed) return false;  // said already; the start fails
  if (impl_->session == nullptr) {
    spdlog::error(
        "the guest's /dev: libfuse cannot serve it; the guest's uses of it will hang until it "
        "exits");
    return false;
  }
  thread_ = std::thread([session = impl_->session] {
    const int rc = fuse_session_loop(session);
    spdlog::debug("the guest's /dev: the filesystem ended ({})", rc);
  });
  return true;
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

int64_t IdentifyDeviceFile(int fd) {
  const off_t handle = lseek(fd, 0, SEEK_DATA);
  if (handle <= 0) return -(handle == 0 ? EIO : errno);
  // The answer became the file's position, which the guest shares: back to 0 (no request).
  lseek(fd, 0, SEEK_SET);
  return handle;
}

}  // namespace nvsentry::sentry
