#include "sentry/fake_l4t/in_process_jetson.h"

#include <fcntl.h>
#include <linux/ioctl.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <vector>

#include "hostshim/fake_l4t/self_caller.h"
#include "hostshim/rate_limited_log.h"

namespace nvsentry::sentry {
namespace {

using hostshim::fake_l4t::L4tRequest;
using hostshim::fake_l4t::SelfMemoryCaller;
using hostshim::fake_l4t::WaitedReply;

// The socket's cookie: unique for the kernel's lifetime (inode numbers come from a 32-bit counter
// the whole system shares, and wrap).
std::optional<uint64_t> CookieOf(int fd) {
  uint64_t cookie = 0;
  socklen_t len = sizeof cookie;
  if (getsockopt(fd, SOL_SOCKET, SO_COOKIE, &cookie, &len) != 0 || len != sizeof cookie ||
      cookie == 0)
    return std::nullopt;
  return cookie;
}

// The backend's thread making the call: its own memory, its own fd table.
class InProcessCaller : public SelfMemoryCaller {
 public:
  explicit InProcessCaller(InProcessJetson& j) : j_(j) {}
  uint64_t SessionOf(int32_t fd) override { return j_.SessionOf(fd); }
  bool IsOpenFd(int32_t fd) override { return fcntl(fd, F_GETFD) >= 0; }
  int OpenNode(abi::l4t::L4tNode node, uint64_t* session) override {
    return Adopted(j_.fake().Open(node), session);
  }
  int OpenHandleFile(uint64_t* session) override {
    return Adopted(j_.fake().OpenHandleFile(), session);
  }
  int OpenEventFile(uint64_t* session) override {
    return Adopted(j_.fake().OpenEventFile(), session);
  }
  // The caller and the fake share a table: the caller's copy is a dup of the fake's. Always
  // close-on-exec, whatever the driver's fd would have: every fd of the sentry's has it.
  int PlaceFd(int fd, bool) override { return Dup(fd); }
  int DupFd(int32_t fd, bool) override { return Dup(fd); }
  int CloseFd(int32_t fd) override { return close(fd) == 0 ? 0 : -errno; }
  int MakeEventFd() override {
    const int fd = eventfd(0, EFD_CLOEXEC);
    return fd >= 0 ? fd : -errno;
  }

 private:
  int Adopted(int64_t session, uint64_t* out) {
    if (session < 0) return static_cast<int>(session);
    *out = static_cast<uint64_t>(session);
    return j_.Adopt(session);
  }
  static int Dup(int fd) {
    const int copy = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    return copy >= 0 ? copy : -errno;
  }
  InProcessJetson& j_;
};

}  // namespace

InProcessJetson::InProcessJetson()
    : fake_(0x10000, /*handles_are_fds=*/true),
      epoll_(epoll_create1(EPOLL_CLOEXEC)),
      stop_(eventfd(0, EFD_CLOEXEC)) {
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = 0;
  epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, stop_.get(), &ev);
  releaser_ = std::thread([this] { ReleaseLoop(); });
}

InProcessJetson::~InProcessJetson() {
  const uint64_t one = 1;
  (void)!write(stop_.get(), &one, sizeof one);
  releaser_.join();
  absl::flat_hash_map<uint64_t, Open_> left;
  {
    absl::MutexLock l(&mu_);
    left.swap(opens_);
  }
  for (auto& [_, o] : left) fake_.Release(o.session);
}

int InProcessJetson::Adopt(int64_t session) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    const int e = errno;
    fake_.Release(static_cast<uint64_t>(session));
    return -e;
  }
  hostshim::UniqueFd ours(sv[0]), kept(sv[1]);
  const std::optional<uint64_t> cookie = CookieOf(ours.get());
  epoll_event ev{};
  ev.events = EPOLLRDHUP;
  ev.data.u64 = cookie.value_or(0);
  if (!cookie || epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, kept.get(), &ev) != 0) {
    fake_.Release(static_cast<uint64_t>(session));
    return -EMFILE;
  }
  absl::MutexLock l(&mu_);
  opens_[*cookie] = Open_{static_cast<uint64_t>(session), std::move(kept)};
  return ours.Release();
}

int InProcessJetson::Open(std::string_view name) {
  for (const abi::l4t::L4tNodeDesc& n : abi::l4t::L4tNodes()) {
    if (n.path.size() <= 5 || n.path.substr(5) != name) continue;
    const int64_t session = fake_.Open(n.id);
    return session < 0 ? static_cast<int>(session) : Adopt(session);
  }
  return -ENOENT;
}

uint64_t InProcessJetson::SessionOf(int fd) {
  const std::optional<uint64_t> cookie = CookieOf(fd);
  if (!cookie) return 0;
  absl::MutexLock l(&mu_);
  auto it = opens_.find(*cookie);
  return it == opens_.end() ? 0 : it->second.session;
}

size_t InProcessJetson::opens() const {
  absl::MutexLock l(&mu_);
  return opens_.size();
}

std::optional<int> InProcessJetson::Ioctl(int fd, uint32_t code, unsigned long arg) {
  const uint64_t session = SessionOf(fd);
  if (session == 0) return std::nullopt;
  InProcessCaller caller(*this);
  // What the kernel copies for a driver with fixed-size arguments (FUSE's restricted ioctls).
  const uint32_t dir = _IOC_DIR(code), size = _IOC_SIZE(code);
  std::vector<uint8_t> in;
  if ((dir & _IOC_WRITE) != 0 && size != 0) {
    in.resize(size);
    if (!caller.Read(arg, in)) return EFAULT;
  }
  const L4tRequest req{code, in, arg, (dir & _IOC_READ) != 0 ? size : 0u, caller};
  auto reply = std::make_shared<WaitedReply>();
  fake_.Ioctl(session, req, reply);
  const int err = reply->Wait();
  if (err != 0) return err;
  const std::vector<uint8_t> out = reply->out();
  if (!out.empty() && !caller.Write(arg, out)) return EFAULT;
  return 0;
}

void InProcessJetson::ReleaseLoop() {
  std::vector<epoll_event> events(64);
  for (;;) {
    const int n = epoll_wait(epoll_.get(), events.data(), static_cast<int>(events.size()), -1);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return;
    for (int i = 0; i < n; ++i) {
      const uint64_t cookie = events[i].data.u64;
      if (cookie == 0) return;  // stop_
      std::optional<Open_> gone;
      {
        absl::MutexLock l(&mu_);
        auto it = opens_.find(cookie);
        if (it == opens_.end()) continue;
        gone = std::move(it->second);
        opens_.erase(it);
      }
      epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, gone->kept.get(), nullptr);
      fake_.Release(gone->session);
    }
  }
}

namespace {

class LazyJetson : public hostshim::host::HostPort {
 public:
  int Open(std::string_view name) override {
    InProcessJetson* j;
    {
      absl::MutexLock l(&mu_);
      if (jetson_ == nullptr) jetson_.store(new InProcessJetson, std::memory_order_release);
      j = jetson_.load(std::memory_order_relaxed);
    }
    return j->Open(name);
  }
  std::optional<int> Ioctl(int fd, uint32_t code, unsigned long arg) override {
    InProcessJetson* j = jetson_.load(std::memory_order_acquire);
    if (j == nullptr) return std::nullopt;
    return j->Ioctl(fd, code, arg);
  }

 private:
  absl::Mutex mu_;
  std::atomic<InProcessJetson*> jetson_{nullptr};
};

}  // namespace

hostshim::host::HostPort& SimulatedJetsonPort() {
  static LazyJetson* port = new LazyJetson;
  return *port;
}

}  // namespace nvsentry::sentry
