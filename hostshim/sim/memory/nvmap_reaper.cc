#include "hostshim/sim/memory/nvmap_reaper.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <array>
#include <cerrno>

#include "spdlog/spdlog.h"

namespace nvsentry::hostshim::sim {
namespace {
constexpr uint64_t kStopCookie = ~uint64_t{0};
}  // namespace

ExitWatcher::ExitWatcher(std::function<void(uint64_t)> on_exit) : on_exit_(std::move(on_exit)) {
  epfd_.Reset(epoll_create1(EPOLL_CLOEXEC));
  stopfd_.Reset(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!epfd_ || !stopfd_) {
    spdlog::error(
        "nvmap reaper: cannot create epoll/eventfd (errno {}); exited guest processes "
        "keep their nvmap handles",
        errno);
    return;
  }
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = kStopCookie;
  if (epoll_ctl(epfd_.get(), EPOLL_CTL_ADD, stopfd_.get(), &ev) != 0) return;
  ready_ = true;  // the thread starts with the first Watch
}

ExitWatcher::~ExitWatcher() {
  bool started;
  {
    absl::MutexLock l(&mu_);
    started = started_;
  }
  if (started) {
    uint64_t one = 1;
    while (write(stopfd_.get(), &one, sizeof one) < 0 && errno == EINTR) {
    }
    thread_.join();
  }
}

bool ExitWatcher::Watch(int pidfd, uint64_t cookie) {
  if (!ready_ || cookie == kStopCookie) return false;
  {
    // The first process to watch: until now there was no exit to wait for.
    absl::MutexLock l(&mu_);
    if (!started_) {
      thread_ = std::thread([this] { Run(); });
      started_ = true;
    }
  }
  epoll_event ev{};
  // One shot: an exit is reported once even if the owner is slow to Unwatch.
  ev.events = EPOLLIN | EPOLLONESHOT;
  ev.data.u64 = cookie;
  return epoll_ctl(epfd_.get(), EPOLL_CTL_ADD, pidfd, &ev) == 0;
}

void ExitWatcher::Unwatch(int pidfd) {
  if (epfd_) epoll_ctl(epfd_.get(), EPOLL_CTL_DEL, pidfd, nullptr);
}

void ExitWatcher::Run() {
  std::array<epoll_event, 64> evs;
  for (;;) {
    int n = epoll_wait(epfd_.get(), evs.data(), static_cast<int>(evs.size()), -1);
    if (n < 0) {
      if (errno == EINTR) continue;
      spdlog::error("nvmap reaper: epoll_wait failed (errno {})", errno);
      return;
    }
    for (int i = 0; i < n; ++i)
      if (evs[i].data.u64 == kStopCookie) return;
    for (int i = 0; i < n; ++i) on_exit_(evs[i].data.u64);
  }
}

}  // namespace nvsentry::hostshim::sim
