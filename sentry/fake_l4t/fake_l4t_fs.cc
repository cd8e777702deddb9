#include "sentry/fake_l4t/fake_l4t_fs.h"

#define FUSE_USE_VERSION 312  // fuse_loop_cfg_*: the serving threads' bound
#include <fcntl.h>
#include <fuse3/fuse_lowlevel.h>
#include <sys/stat.h>

#include <atomic>
#include <cerrno>
#include <functional>
#include <memory>
#include <string>

#include "abi/l4t/nodes.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "hostshim/backend.h"
#include "hostshim/rate_limited_log.h"
#include "sentry/devfs/fuse_flat_dir.h"
#include "sentry/devfs/fuse_mount.h"
#include "sentry/fake_l4t/fake_l4t_caller.h"
#include "spdlog/spdlog.h"

namespace nvsentry::sentry {

using hostshim::fake_l4t::FakeJetson;
using hostshim::fake_l4t::L4tReply;
using hostshim::fake_l4t::L4tRequest;

struct FakeL4tFs::Impl {
  FakeJetson& fake;
  FuseMount mount;
  fuse_session* session = nullptr;
};

namespace {

using abi::l4t::L4tNode;

// The six nodes, inode 2 + index.
constexpr L4tNode kNodes[] = {L4tNode::kNvhostCtrl, L4tNode::kNvhostCtrlGpu, L4tNode::kNvhostAsGpu,
                              L4tNode::kNvhostGpu,  L4tNode::kNvmap,         L4tNode::kTsg};

std::string_view NameOf(L4tNode n) { return abi::l4t::Node(n).path.substr(5); }  // after /dev/

const L4tNode* NodeOf(fuse_ino_t ino) {
  return ino >= 2 && ino - 2 < std::size(kNodes) ? &kNodes[ino - 2] : nullptr;
}

// The handle file (each nvmap handle fd is an open of it) and the event file (each TSG event fd)
// are the inodes after the nodes': found by name, never listed.
constexpr fuse_ino_t kHandleFileIno = 2 + std::size(kNodes), kEventFileIno = kHandleFileIno + 1;

FlatDir MakeDir(bool with_handle_file) {
  std::vector<std::string> names;
  for (L4tNode n : kNodes) names.emplace_back(NameOf(n));
  if (with_handle_file) {
    names.emplace_back(hostshim::fake_l4t::kHandleFileName);
    names.emplace_back(hostshim::fake_l4t::kEventFileName);
  }
  return FlatDir(std::move(names));
}

const FlatDir& Dir() {  // lookups and attributes
  static const FlatDir dir = MakeDir(true);
  return dir;
}

const FlatDir& Listing() {  // what READDIR shows
  static const FlatDir dir = MakeDir(false);
  return dir;
}

FakeL4tFs::Impl& ImplOf(fuse_req_t req) {
  return *static_cast<FakeL4tFs::Impl*>(fuse_req_userdata(req));
}

// The replies a kernel interrupt may still reach, by a number of their own (the interrupt
// callback's data): the callback takes a reference here, never a pointer that may be gone.
class FuseReply;
absl::Mutex g_interruptible_mu;
absl::flat_hash_map<uint64_t, std::weak_ptr<FuseReply>> g_interruptible
    ABSL_GUARDED_BY(g_interruptible_mu);
std::atomic<uint64_t> g_next_interruptible{1};

// One request's answer: whoever comes first (the call, or the kernel's INTERRUPT) answers.
class FuseReply : public L4tReply, public std::enable_shared_from_this<FuseReply> {
 public:
  explicit FuseReply(fuse_req_t req) : req_(req) {}
  ~FuseReply() override {
    if (!answered_.load()) fuse_reply_err(req_, EIO);  // never leaves a caller hanging
  }
  void Send(int err, std::span<const uint8_t> out) override {
    if (answered_.exchange(true)) return;
    Forget();
    if (err != 0)
      fuse_reply_err(req_, err);
    else
      fuse_reply_ioctl(req_, 0, out.empty() ? nullptr : out.data(), out.size());
  }
  bool Abandoned() override { return interrupted_.load(std::memory_order_acquire); }
  void AllowInterrupt() override {
    if (key_ != 0) return;
    key_ = g_next_interruptible.fetch_add(1);
    {
      absl::MutexLock l(&g_interruptible_mu);
      g_interruptible[key_] = weak_from_this();
    }
    // May call OnInterrupt at once (the caller was interrupted already).
    fuse_req_interrupt_func(req_, &FuseReply::OnInterrupt,
                            reinterpret_cast<void*>(static_cast<uintptr_t>(key_)));
  }

 private:
  static void OnInterrupt(fuse_req_t, void* data) {
    const auto key = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(data));
    std::shared_ptr<FuseReply> r;
    {
      absl::MutexLock l(&g_interruptible_mu);
      auto it = g_interruptible.find(key);
      if (it != g_interruptible.end()) r = it->second.lock();
    }
    if (r == nullptr || r->answered_.exchange(true)) return;
    r->interrupted_.store(true, std::memory_order_release);
    hostshim::NoteAbandonedCall();  // the sim's parked waiter is dropped at its next sweep
    r->Forget();
    fuse_reply_err(r->req_, EINTR);
  }
  void Forget() {
    if (key_ == 0) return;
    absl::MutexLock l(&g_interruptible_mu);
    g_interruptible.erase(key_);
  }

  fuse_req_t req_;
  std::atomic<bool> answered_{false};
  std::atomic<bool> interrupted_{false};
  uint64_t key_ = 0;
};

void Lookup(fuse_req_t req, fuse_ino_t parent, const char* name) {
  Dir().Lookup(req, parent, name);
}

void GetAttr(fuse_req_t req, fuse_ino_t ino, fuse_file_info*) { Dir().GetAttr(req, ino); }

void SetAttr(fuse_req_t req, fuse_ino_t ino, struct stat*, int, fuse_file_info*) {
  Dir().GetAttr(req, ino);
}

void Open(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  const L4tNode* node = NodeOf(ino);
  if (node == nullptr && ino != kHandleFileIno && ino != kEventFileIno) {
    fuse_reply_err(req, FlatDir::IsRoot(ino) ? EISDIR : ENOENT);
    return;
  }
  FakeJetson& fake = ImplOf(req).fake;
  const int64_t handle = node != nullptr         ? fake.Open(*node)
                         : ino == kHandleFileIno ? fake.OpenHandleFile()
                                                 : fake.OpenEventFile();
  if (handle <= 0) {
    const int err = handle < 0 ? static_cast<int>(-handle) : EIO;
    fuse_reply_err(req, err == ENOSYS ? EOPNOTSUPP : err);  // ENOSYS: "no OPEN here" for good
    return;
  }
  fi->fh = static_cast<uint64_t>(handle);
  fi->direct_io = 1;
  fi->keep_cache = 0;
  NVS_LOG_LIMITED(spdlog::level::debug, "fake-l4t: open {} by {}: session {}",
                  node != nullptr ? NameOf(*node) : "(an unlisted file)", fuse_req_ctx(req)->pid,
                  handle);
  // The caller was gone before the answer: no RELEASE will come.
  if (fuse_reply_open(req, fi) == -ENOENT) fake.Release(fi->fh);
}

void Release(fuse_req_t req, fuse_ino_t, fuse_file_info* fi) {
  ImplOf(req).fake.Release(fi->fh);
  NVS_LOG_LIMITED(spdlog::level::debug, "fake-l4t: session {} released", fi->fh);
  fuse_reply_err(req, 0);
}

void Ioctl(fuse_req_t req, fuse_ino_t, unsigned int cmd, void* arg, fuse_file_info* fi,
           unsigned flags, const void* in_buf, size_t in_bufsz, size_t out_bufsz) {
  // 32-bit callers (r32.7's *_32 variants) are not served.
  if (flags & FUSE_IOCTL_COMPAT) {
    fuse_reply_err(req, ENOTTY);
    return;
  }
  FakeL4tFs::Impl& impl = ImplOf(req);
  FakeL4tCaller caller(fuse_req_ctx(req)->pid, impl.mount.dev);
  const L4tRequest r{cmd,
                     {static_cast<const uint8_t*>(in_buf), in_bufsz},
                     reinterpret_cast<uint64_t>(arg),
                     out_bufsz,
                     caller};
  impl.fake.Ioctl(fi->fh, r, std::make_shared<FuseReply>(req));
}

// A TSG event fd polls readable once its event is posted (FakeJetson::Poll); the kernel's poll
// handle, when it asks to be told, is notified then. Never ENOSYS: the kernel would take every
// file of the filesystem as always ready from then on.
void Poll(fuse_req_t req, fuse_ino_t, fuse_file_info* fi, fuse_pollhandle* ph) {
  std::function<void()> waker;
  if (ph != nullptr) {
    std::shared_ptr<fuse_pollhandle> handle(ph, fuse_pollhandle_destroy);
    waker = [handle] { fuse_lowlevel_notify_poll(handle.get()); };
  }
  fuse_reply_poll(req, ImplOf(req).fake.Poll(fi->fh, std::move(waker)));
}

// Which open a file is (FakeL4tCaller::SessionOf, through IdentifyDeviceFile): for this
// process's own threads only; never ENOSYS (the kernel would stop asking for good).
void ReadDir(fuse_req_t req, fuse_ino_t, size_t size, off_t off, fuse_file_info* fi) {
  Listing().ReadDir(req, size, off, false, fi);
}

}  // namespace

FakeL4tFs::FakeL4tFs(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

FakeL4tFs::~FakeL4tFs() {
  if (impl_->session != nullptr) fuse_session_destroy(impl_->session);
}

absl::StatusOr<std::unique_ptr<FakeL4tFs>> FakeL4tFs::Mount(const std::string& dir,
                                                            FakeJetson& fake) {
  absl::StatusOr<FuseMount> m = MakeFuseMount("fake-l4t");
  if (!m.ok()) return m.status();
  auto impl = std::make_unique<Impl>(Impl{fake, *std::move(m)});
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
    o.poll = Poll;
    o.lseek = FlatDir::Lseek;
    o.opendir = FlatDir::OpenDir;
    o.readdir = ReadDir;
    return o;
  }();
  char prog[] = "nvsentry-fake-l4t";
  char* argv[] = {prog, nullptr};
  fuse_args args = FUSE_ARGS_INIT(1, argv);
  impl->session = fuse_session_new(&args, &ops, sizeof ops, impl.get());
  if (impl->session == nullptr) return absl::InternalError("fake-l4t: libfuse: no session");
  // libfuse takes an fd already bound to a filesystem as "/dev/fd/N", and then owns it.
  const std::string fd_path = absl::StrCat("/dev/fd/", impl->mount.connection.get());
  if (fuse_session_mount(impl->session, fd_path.c_str()) != 0)
    return absl::InternalError("fake-l4t: libfuse cannot serve the filesystem");
  (void)impl->mount.connection.Release();
  if (absl::Status s = AttachMount(impl->mount, dir.c_str()); !s.ok()) return s;
  return std::unique_ptr<FakeL4tFs>(new FakeL4tFs(std::move(impl)));
}

dev_t FakeL4tFs::dev() const { return impl_->mount.dev; }

int FakeL4tFs::Serve() {
  // Several threads: a call that names an fd is identified by another serving thread, and no
  // call holds the others up. At most kMaxIdentifying threads wait for an identification, so
  // as many others are always left to answer them.
  fuse_loop_config* config = fuse_loop_cfg_create();
  fuse_loop_cfg_set_clone_fd(config, 0);
  fuse_loop_cfg_set_idle_threads(config, 4);
  fuse_loop_cfg_set_max_threads(config, 2 * kMaxIdentifying);
  const int rc = fuse_session_loop_mt(impl_->session, config);
  fuse_loop_cfg_destroy(config);
  return rc;
}

}  // namespace nvsentry::sentry
