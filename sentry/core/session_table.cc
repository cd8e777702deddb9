#include "sentry/core/session_table.h"

#include <fcntl.h>
#include <linux/kcmp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "hostshim/rate_limited_log.h"
#include "sentry/devfs/device_fs.h"
#include "sentry/process/test_hooks.h"
#include "spdlog/spdlog.h"

namespace nvsentry::sentry {
namespace {

long Kcmp(pid_t pid1, pid_t pid2, int type, unsigned long idx1, unsigned long idx2) {
  return syscall(SYS_kcmp, pid1, pid2, type, idx1, idx2);
}

uint64_t Key(pid_t tid, int fd) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(tid)) << 32) | static_cast<uint32_t>(fd);
}

}  // namespace

SessionTable::SessionTable() : self_(getpid()) {
  int p[2];
  if (pipe2(p, O_CLOEXEC) == 0) {
    const hostshim::UniqueFd read_end(p[0]), write_end(p[1]);
    struct stat st;
    if (fstat(p[0], &st) == 0) pipefs_dev_ = st.st_dev;
    // Probe KCMP_EPOLL_TFD on ourselves once.
    const hostshim::UniqueFd ep(epoll_create1(EPOLL_CLOEXEC));
    epoll_event ev{};
    if (ep && epoll_ctl(ep.get(), EPOLL_CTL_ADD, p[1], &ev) == 0) {
      kcmp_epoll_slot slot{static_cast<__u32>(ep.get()), static_cast<__u32>(p[1]), 0};
      kcmp_ok_ = Kcmp(self_, self_, KCMP_EPOLL_TFD, static_cast<unsigned long>(p[1]),
                      reinterpret_cast<unsigned long>(&slot)) == 0;
    }
  }
  if (!kcmp_ok_)
    spdlog::warn("kcmp(KCMP_EPOLL_TFD) unavailable: every ioctl takes the slow fd lookup");
  lifetime_epoll_.Reset(epoll_create1(EPOLL_CLOEXEC));
  stop_fd_.Reset(eventfd(0, EFD_CLOEXEC));
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = stop_fd_.get();
  epoll_ctl(lifetime_epoll_.get(), EPOLL_CTL_ADD, stop_fd_.get(), &ev);
  // The lifetime thread starts with the first pipe it watches (Placed).
}

SessionTable::~SessionTable() {
  bool started;
  {
    absl::MutexLock lock(&mu_);
    started = lifetime_started_;
  }
  if (started) {
    uint64_t one = 1;
    (void)!write(stop_fd_.get(), &one, sizeof one);
    lifetime_.join();
  }
  // The entries' fds close with the maps.
}

absl::StatusOr<SessionTable::Pending> SessionTable::Create(
    std::shared_ptr<proxy::Session> session) {
  {
    absl::MutexLock lock(&census_->mu);
    ++census_->alive;
  }
  session->WhenGone([census = census_] {
    absl::MutexLock lock(&census->mu);
    --census->alive;
  });
  int p[2];
  if (pipe2(p, O_CLOEXEC | O_NONBLOCK) != 0)
    return absl::ResourceExhaustedError(absl::StrCat("pipe: ", strerror(errno)));
  hostshim::UniqueFd keep_end(p[0]), guest_end(p[1]);
  // The guest's end blocks like a file would; only our drain end is non-blocking.
  fcntl(guest_end.get(), F_SETFL, 0);
  hostshim::UniqueFd slot(epoll_create1(EPOLL_CLOEXEC));
  epoll_event ev{};
  struct stat st;
  if (!slot || epoll_ctl(slot.get(), EPOLL_CTL_ADD, guest_end.get(), &ev) != 0 ||
      fstat(guest_end.get(), &st) != 0)
    return absl::ResourceExhaustedError(absl::StrCat("session fds: ", strerror(errno)));
  const uint64_t slot_id = static_cast<uint64_t>(slot.get());
  const int keep_fd = keep_end.get();
  {
    absl::MutexLock lock(&mu_);
    Entry& e = by_slot_[slot_id];
    e.session = std::move(session);
    e.anchor = std::make_shared<const hostshim::UniqueFd>(std::move(slot));
    e.tfd = guest_end.get();
    e.keep_end = std::move(keep_end);
    e.ino = st.st_ino;
    by_ino_[st.st_ino] = slot_id;
    by_keep_end_[keep_fd] = slot_id;
  }
  return Pending{std::move(guest_end), slot_id};
}

void SessionTable::Placed(Pending& p) {
  p.guest_end.Reset();
  int keep_end;
  {
    absl::MutexLock lock(&mu_);
    auto it = by_slot_.find(p.slot);
    if (it == by_slot_.end()) return;  // EndAll ended it already: the guest is gone
    keep_end = it->second.keep_end.get();
    // The first pipe to watch: until now there was nothing for the thread to wait on (device
    // files' sessions end at their RELEASE).
    if (!lifetime_started_) {
      lifetime_ = std::thread([this] { LifetimeLoop(); });
      lifetime_started_ = true;
    }
  }
  // Watched only now, so the lifetime thread cannot end a session still being placed. The hang-up
  // is level-triggered: a guest that closed it already is seen at once.
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = keep_end;
  epoll_ctl(lifetime_epoll_.get(), EPOLL_CTL_ADD, keep_end, &ev);
}

void SessionTable::Abandon(Pending& p) {
  p.guest_end.Reset();
  End(p.slot);
}

absl::StatusOr<uint64_t> SessionTable::AddFile(std::shared_ptr<proxy::Session> session,
                                               std::function<void(pid_t, int)> first_seen) {
  {
    absl::MutexLock lock(&census_->mu);
    ++census_->alive;
  }
  session->WhenGone([census = census_] {
    absl::MutexLock lock(&census->mu);
    --census->alive;
  });
  absl::MutexLock lock(&mu_);
  if (end_all_started_) return absl::UnavailableError("the guest is gone");
  const uint64_t slot = next_file_slot_++;
  Entry& e = by_slot_[slot];
  e.session = std::move(session);
  e.first_seen = std::move(first_seen);
  return slot;
}

void SessionTable::EndFile(uint64_t handle) {
  if (handle >= kFirstFileSlot) End(handle, true);
}

void SessionTable::End(uint64_t slot, bool closed) {
  std::shared_ptr<proxy::Session> doomed;
  {
    absl::MutexLock lock(&mu_);
    auto it = by_slot_.find(slot);
    if (it == by_slot_.end()) return;
    Entry& e = it->second;
    if (e.first_seen) e.first_seen(0, -1);
    if (e.keep_end) {
      epoll_ctl(lifetime_epoll_.get(), EPOLL_CTL_DEL, e.keep_end.get(), nullptr);
      by_ino_.erase(e.ino);
      by_keep_end_.erase(e.keep_end.get());
    }
    doomed = std::move(e.session);
    by_slot_.erase(it);  // closes its epoll and its pipe's read end
    if (closed && TestHookOn(TestHook::kHoldSessionEnd))
      mu_.AwaitWithTimeout(absl::Condition(&end_all_started_), absl::Seconds(10));
  }
  if (doomed) NVS_LOG_LIMITED(spdlog::level::debug, "{}: session closed", doomed->device().path);
  // The backend's resources go with the last reference, outside the lock.
}

int SessionTable::EndAll(absl::Duration patience) {
  std::vector<uint64_t> slots;
  {
    absl::MutexLock lock(&mu_);
    end_all_started_ = true;
    for (const auto& [slot, e] : by_slot_) slots.push_back(slot);
  }
  for (uint64_t slot : slots) End(slot);  // End ignores a slot the lifetime thread ended meanwhile
  // A slot already out of the table is not necessarily ended: the lifetime thread may be in the
  // middle of End (it took the entry out, the session's end has not run yet), and a worker
  // inside a call may hold the last reference. The process must not end before they finish.
  absl::MutexLock lock(&census_->mu);
  auto all_ended = [c = census_.get()]()
                       ABSL_EXCLUSIVE_LOCKS_REQUIRED(c->mu) { return c->alive == 0; };
  if (!census_->mu.AwaitWithTimeout(absl::Condition(&all_ended), patience))
    spdlog::warn("{} device sessions still in use at exit; their ends are not recorded",
                 census_->alive);
  return census_->alive;
}

std::shared_ptr<proxy::Session> SessionTable::Lookup(pid_t tid, int fd) {
  if (fd < 0) return nullptr;
  const uint64_t key = Key(tid, fd);
  if (kcmp_ok_) {
    std::shared_ptr<proxy::Session> session;
    std::shared_ptr<const hostshim::UniqueFd> anchor;
    int tfd = -1;
    {
      absl::ReaderMutexLock lock(&mu_);
      auto hit = known_.find(key);
      auto e = hit != known_.end() ? by_slot_.find(hit->second) : by_slot_.end();
      if (e != by_slot_.end() && e->second.anchor) {
        session = e->second.session;
        anchor = e->second.anchor;
        tfd = e->second.tfd;
      }
    }
    // Held, the anchor stays open (its number cannot pass to another session's anchor) while
    // kcmp, which can wait on the guest (an exec in progress), runs without the table's lock.
    if (anchor) {
      kcmp_epoll_slot s{static_cast<__u32>(anchor->get()), static_cast<__u32>(tfd), 0};
      if (Kcmp(tid, self_, KCMP_EPOLL_TFD, static_cast<unsigned long>(fd),
               reinterpret_cast<unsigned long>(&s)) == 0)
        return session;
    }
  }
  uint64_t slot = 0;
  std::shared_ptr<proxy::Session> session = SlowLookup(tid, fd, &slot);
  absl::MutexLock lock(&mu_);
  if (session && slot != 0) {
    if (known_.size() >= kKnownLimit) known_.clear();
    known_[key] = slot;
  } else {
    known_.erase(key);
  }
  return session;
}

std::shared_ptr<proxy::Session> SessionTable::SlowLookup(pid_t tid, int fd, uint64_t* slot) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/fd/%d", tid, fd);
  struct stat st;
  if (stat(path, &st) != 0) return nullptr;
  if (S_ISREG(st.st_mode) && device_files_dev_ != 0 && st.st_dev == device_files_dev_)
    return LookupFile(tid, fd, slot);
  if (!S_ISFIFO(st.st_mode) || st.st_dev != pipefs_dev_) return nullptr;
  absl::ReaderMutexLock lock(&mu_);
  auto i = by_ino_.find(st.st_ino);
  if (i == by_ino_.end()) return nullptr;
  *slot = i->second;
  return by_slot_.at(i->second).session;
}

// A device file: a copy of the guest's open file asks the filesystem for its handle. The copy is
// the very file the guest's fd held when fetched; its handle can only be one the filesystem gave
// an open. No lock is held while the filesystem answers (its thread takes the lock to add files).
std::shared_ptr<proxy::Session> SessionTable::LookupFile(pid_t tid, int fd, uint64_t* slot) {
  // PIDFD_THREAD (6.9): a thread's own descriptor table, which a thread made without CLONE_FILES
  // does not share with its group.
  constexpr unsigned kPidfdThread = O_EXCL;
  hostshim::UniqueFd pidfd(static_cast<int>(syscall(SYS_pidfd_open, tid, kPidfdThread)));
  if (!pidfd) pidfd.Reset(static_cast<int>(syscall(SYS_pidfd_open, tid, 0)));
  if (!pidfd) return nullptr;
  const hostshim::UniqueFd file(static_cast<int>(syscall(SYS_pidfd_getfd, pidfd.get(), fd, 0)));
  // The guest may have put another file at `fd` since the stat (a sparse file answers SEEK_DATA
  // with any offset it likes): only the copy in hand counts.
  struct stat st;
  if (!file || fstat(file.get(), &st) != 0 || !S_ISREG(st.st_mode) ||
      st.st_dev != device_files_dev_)
    return nullptr;
  const int64_t handle = IdentifyDeviceFile(file.get());
  if (handle < static_cast<int64_t>(kFirstFileSlot)) return nullptr;
  const uint64_t id = static_cast<uint64_t>(handle);
  bool needs_anchor;
  {
    absl::ReaderMutexLock lock(&mu_);
    auto it = by_slot_.find(id);
    if (it == by_slot_.end()) return nullptr;  // ended: the guest closed it meanwhile
    needs_anchor = !it->second.anchor;
  }
  // The epoll instance that lets kcmp recognise the file from now on (registering a device file
  // asks its filesystem once whether it can poll, so outside the lock as well).
  hostshim::UniqueFd anchor;
  if (needs_anchor) {
    anchor.Reset(epoll_create1(EPOLL_CLOEXEC));
    epoll_event ev{};
    if (!anchor || epoll_ctl(anchor.get(), EPOLL_CTL_ADD, file.get(), &ev) != 0) anchor.Reset();
  }
  absl::MutexLock lock(&mu_);
  auto it = by_slot_.find(id);
  if (it == by_slot_.end()) return nullptr;
  Entry& e = it->second;
  if (!e.anchor && anchor) {
    e.anchor = std::make_shared<const hostshim::UniqueFd>(std::move(anchor));
    e.tfd = file.get();
  }
  if (e.first_seen) {
    std::function<void(pid_t, int)> seen = std::move(e.first_seen);
    e.first_seen = nullptr;
    seen(tid, fd);
  }
  // Without an anchor (no epoll fd to spare) the file stays on the slow path.
  *slot = e.anchor ? id : 0;
  return e.session;
}

void SessionTable::WaitUntilEnded(uint64_t slot, absl::Duration patience) {
  absl::MutexLock lock(&mu_);
  auto ended = [this, slot]()
                   ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !by_slot_.contains(slot); };
  mu_.AwaitWithTimeout(absl::Condition(&ended), patience);
}

size_t SessionTable::size() const {
  absl::ReaderMutexLock lock(&mu_);
  return by_slot_.size();
}

void SessionTable::LifetimeLoop() {
  epoll_event events[64];
  char sink[4096];
  for (;;) {
    int n = epoll_wait(lifetime_epoll_.get(), events, 64, -1);
    if (n < 0) continue;
    for (int i = 0; i < n; ++i) {
      int fd = events[i].data.fd;
      if (fd == stop_fd_.get()) return;
      // Whatever the guest writes to a device fd is discarded (a device has no byte stream).
      while (read(fd, sink, sizeof sink) > 0) {
      }
      if (events[i].events & (EPOLLHUP | EPOLLERR)) {
        uint64_t slot = 0;
        {
          absl::ReaderMutexLock lock(&mu_);
          auto it = by_keep_end_.find(fd);
          if (it != by_keep_end_.end()) slot = it->second;
        }
        if (slot != 0) End(slot, true);
      }
    }
  }
}

}  // namespace nvsentry::sentry
