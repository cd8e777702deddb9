#include "tests/fuzz/in_process_l4t.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstring>
#include <memory>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"
#include "hostshim/fake_l4t/self_caller.h"

namespace nvsentry::fuzz {
namespace {

using abi::l4t::L4tNode;
using hostshim::fake_l4t::FakeJetson;
using hostshim::fake_l4t::L4tRequest;

// One open of the fake; the last fd naming it releases it.
struct Session {
  FakeJetson* fake;
  uint64_t handle;
  L4tNode node;
  ~Session() { fake->Release(handle); }
};

struct State {
  FakeJetson* fake;
  L4tObserver* observer;
  absl::Mutex mu;
  absl::flat_hash_map<int, std::shared_ptr<Session>> fds ABSL_GUARDED_BY(mu);
  absl::flat_hash_set<int> closed ABSL_GUARDED_BY(mu);  // fake fds closed since (numbers reusable)
};

absl::Mutex g_mu(absl::kConstInit);
State* g_state ABSL_GUARDED_BY(g_mu) = nullptr;  // set while an InProcessL4t exists

State* Current() {
  absl::MutexLock l(&g_mu);
  return g_state;
}

std::shared_ptr<Session> SessionOfFd(State& s, int fd) {
  absl::MutexLock l(&s.mu);
  auto it = s.fds.find(fd);
  return it == s.fds.end() ? nullptr : it->second;
}

template <typename F>
F Real(const char* name) {
  return reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
}

// The caller is this process: its memory, its fds (the fake's sessions by our table).
class SelfL4tCaller : public hostshim::fake_l4t::SelfMemoryCaller {
 public:
  explicit SelfL4tCaller(State& s) : s_(s) {}
  uint64_t SessionOf(int32_t fd) override {
    std::shared_ptr<Session> session = SessionOfFd(s_, fd);
    return session ? session->handle : 0;
  }

 private:
  State& s_;
};

using hostshim::fake_l4t::WaitedReply;

const abi::l4t::L4tNodeDesc* NodeOfPath(std::string_view path) {
  const std::string_view dir = kInProcessDevDir;
  if (path.size() <= dir.size() || path.substr(0, dir.size()) != dir || path[dir.size()] != '/')
    return nullptr;
  const std::string_view name = path.substr(dir.size());
  for (const abi::l4t::L4tNodeDesc& n : abi::l4t::L4tNodes())
    if (!n.path.empty() && n.path.substr(4) == name) return &n;
  return nullptr;
}

int OpenFake(State& s, const abi::l4t::L4tNodeDesc* node) {
  if (node == nullptr) {
    errno = ENOENT;
    return -1;
  }
  const int64_t handle = s.fake->Open(node->id);
  if (handle < 0) {
    errno = static_cast<int>(-handle);
    return -1;
  }
  const int fd = eventfd(0, EFD_CLOEXEC);
  if (fd < 0) {
    const int e = errno;
    s.fake->Release(static_cast<uint64_t>(handle));
    errno = e;
    return -1;
  }
  {
    absl::MutexLock l(&s.mu);
    // In place: a copied Session's destructor would release the open.
    s.fds[fd] =
        std::shared_ptr<Session>(new Session{s.fake, static_cast<uint64_t>(handle), node->id});
    s.closed.erase(fd);
  }
  s.observer->Opened(fd, node->id);
  return fd;
}

bool IsL4tCode(uint32_t code) {
  for (const abi::l4t::L4tNodeDesc& n : abi::l4t::L4tNodes())
    if (abi::l4t::FindL4tIoctl(n.id, code) != nullptr) return true;
  return false;
}

int ServeIoctl(State& s, int fd, const Session& session, uint32_t code, unsigned long arg) {
  const uint32_t size = (code >> 16) & 0x3FFF;
  const bool in = (code & (1u << 30)) != 0, out = (code & (1u << 31)) != 0;
  const bool value_arg = size == 0;
  uint8_t* ptr = reinterpret_cast<uint8_t*>(arg);
  std::span<const uint8_t> view = value_arg ? std::span<const uint8_t>() : std::span(ptr, size);
  s.observer->Before(fd, session.node, code, view, arg);
  SelfL4tCaller caller(s);
  const L4tRequest req{code, in && !value_arg ? view : std::span<const uint8_t>(), arg,
                       out && !value_arg ? size : 0u, caller};
  auto reply = std::make_shared<WaitedReply>();
  s.fake->Ioctl(session.handle, req, reply);
  const int err = reply->Wait();
  const std::vector<uint8_t> answer = reply->out();
  if (err == 0 && !answer.empty())
    std::memcpy(ptr, answer.data(), std::min<size_t>(size, answer.size()));
  s.observer->After(fd, session.node, code, view, arg, err);
  if (err != 0) {
    errno = err;
    return -1;
  }
  return 0;
}

}  // namespace

InProcessL4t::InProcessL4t(FakeJetson& fake, L4tObserver& observer) {
  absl::MutexLock l(&g_mu);
  if (g_state != nullptr) std::abort();  // one at a time
  g_state = new State{&fake, &observer, {}, {}, {}};
}

InProcessL4t::~InProcessL4t() {
  State* s;
  {
    absl::MutexLock l(&g_mu);
    s = g_state;
    g_state = nullptr;
  }
  std::vector<int> fds;
  {
    absl::MutexLock l(&s->mu);
    for (const auto& [fd, session] : s->fds) fds.push_back(fd);
    s->fds.clear();  // releases the sessions
  }
  for (int fd : fds) Real<int (*)(int)>("close")(fd);
  delete s;
}

size_t InProcessL4t::open_fds() const {
  State* s = Current();
  absl::MutexLock l(&s->mu);
  return s->fds.size();
}

}  // namespace nvsentry::fuzz

// The C library's entries, taken over for the fake's paths and fds only.
using nvsentry::fuzz::Current;
using nvsentry::fuzz::NodeOfPath;
using nvsentry::fuzz::Real;
using nvsentry::fuzz::Session;
using nvsentry::fuzz::SessionOfFd;
using nvsentry::fuzz::State;

namespace {

int OpenEntry(const char* name, const char* path, int flags, va_list ap) {
  mode_t mode = 0;
  if ((flags & O_CREAT) != 0 || (flags & O_TMPFILE) == O_TMPFILE) mode = va_arg(ap, mode_t);
  if (State* s = Current(); s != nullptr && path != nullptr &&
                            std::string_view(path).starts_with(nvsentry::fuzz::kInProcessDevDir))
    return nvsentry::fuzz::OpenFake(*s, NodeOfPath(path));
  return Real<int (*)(const char*, int, ...)>(name)(path, flags, mode);
}

}  // namespace

extern "C" int open(const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  const int r = OpenEntry("open", path, flags, ap);
  va_end(ap);
  return r;
}

extern "C" int open64(const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  const int r = OpenEntry("open64", path, flags, ap);
  va_end(ap);
  return r;
}

extern "C" int close(int fd) {
  static const auto real = Real<int (*)(int)>("close");
  if (State* s = Current()) {
    std::shared_ptr<Session> gone;
    {
      absl::MutexLock l(&s->mu);
      auto it = s->fds.find(fd);
      if (it != s->fds.end()) {
        gone = std::move(it->second);
        s->fds.erase(it);
        s->closed.insert(fd);
      }
    }
    if (gone) s->observer->Closed(fd);
    // `gone` releases the session here when no other fd names it.
  }
  return real(fd);
}

extern "C" int dup3(int from, int to, int flags) {
  static const auto real = Real<int (*)(int, int, int)>("dup3");
  State* s = Current();
  if (s == nullptr) return real(from, to, flags);
  std::shared_ptr<Session> source = SessionOfFd(*s, from);
  const int r = real(from, to, flags);
  if (r < 0) return r;
  std::shared_ptr<Session> replaced;
  {
    absl::MutexLock l(&s->mu);
    auto it = s->fds.find(to);
    if (it != s->fds.end()) {
      replaced = std::move(it->second);
      s->fds.erase(it);
      s->closed.insert(to);
    }
    if (source) {
      s->fds[to] = source;
      s->closed.erase(to);
    }
  }
  if (replaced) s->observer->Closed(to);
  if (source) s->observer->Duplicated(from, to, source->node);
  return r;
}

extern "C" int ioctl(int fd, unsigned long request, ...) {
  static const auto real = Real<int (*)(int, unsigned long, ...)>("ioctl");
  va_list ap;
  va_start(ap, request);
  const unsigned long arg = va_arg(ap, unsigned long);
  va_end(ap);
  const uint32_t code = static_cast<uint32_t>(request);
  if (State* s = Current()) {
    if (std::shared_ptr<Session> session = SessionOfFd(*s, fd))
      return nvsentry::fuzz::ServeIoctl(*s, fd, *session, code, arg);
    bool stale;
    {
      absl::MutexLock l(&s->mu);
      stale = s->closed.contains(fd);
    }
    if (stale && nvsentry::fuzz::IsL4tCode(code)) s->observer->StaleFd(fd, code);
  }
  return real(fd, request, arg);
}
