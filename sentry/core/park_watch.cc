#include "sentry/core/park_watch.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace nvsentry::sentry {
namespace {

// The hex mask after `key` on its line of `text`, if the line is there.
bool Mask(std::string_view text, std::string_view key, uint64_t* out) {
  size_t at = 0;
  for (;;) {
    at = text.find(key, at);
    if (at == std::string_view::npos) return false;
    if (at == 0 || text[at - 1] == '\n') break;
    at += key.size();
  }
  std::string digits(text.substr(at + key.size(), 32));
  *out = strtoull(digits.c_str(), nullptr, 16);
  return true;
}

ssize_t ReadByPath(pid_t tid, char* buf, size_t size) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/status", tid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  ssize_t n = read(fd, buf, size);
  close(fd);
  return n;
}

}  // namespace

bool ParseThreadStatus(std::string_view text, ThreadSignals* out) {
  uint64_t thread, shared, blocked, ignored;
  if (!Mask(text, "SigPnd:", &thread) || !Mask(text, "ShdPnd:", &shared) ||
      !Mask(text, "SigBlk:", &blocked) || !Mask(text, "SigIgn:", &ignored))
    return false;
  out->thread = thread & ~blocked & ~ignored;
  out->process = shared & ~blocked & ~ignored;
  size_t state = text.find("State:\t");
  out->dead = state != std::string_view::npos && state + 7 < text.size() &&
              (text[state + 7] == 'Z' || text[state + 7] == 'X');
  return true;
}

ParkWatch::ParkWatch() : ParkWatch(Options()) {}

ParkWatch::ParkWatch(Options options) : options_(options) {}

ParkWatch::~ParkWatch() {
  bool started;
  {
    absl::MutexLock l(&mu_);
    stopping_ = true;
    started = started_;
    cv_.Signal();
  }
  if (started) thread_.join();
  for (auto& [ticket, e] : entries_)
    if (e.fd >= 0) close(e.fd);
}

uint64_t ParkWatch::Watch(std::weak_ptr<WatchedCall> call, pid_t tid) {
  absl::MutexLock l(&mu_);
  const uint64_t ticket = next_ticket_++;
  const absl::Time due = absl::Now() + options_.first_check;
  Entry e;
  e.call = std::move(call);
  e.tid = tid;
  e.interval = options_.first_check;
  e.due = due;
  entries_.emplace(ticket, std::move(e));
  if (due_.empty() || due < due_.begin()->first) cv_.Signal();
  due_.insert({due, ticket});
  // The first parked call: until now the thread had nothing to do.
  if (!started_ && !stopping_) {
    thread_ = std::thread([this] { Loop(); });
    started_ = true;
  }
  return ticket;
}

void ParkWatch::Forget(uint64_t ticket) {
  absl::MutexLock l(&mu_);
  auto it = entries_.find(ticket);
  if (it == entries_.end()) return;
  // The watch thread is reading its file: it lets go once done.
  if (it->second.checking) {
    it->second.forgotten = true;
    return;
  }
  EraseLocked(ticket);
}

void ParkWatch::EraseLocked(uint64_t ticket) {
  auto it = entries_.find(ticket);
  due_.erase({it->second.due, ticket});
  if (it->second.fd >= 0) close(it->second.fd);
  entries_.erase(it);
}

size_t ParkWatch::watched() const {
  absl::MutexLock l(&mu_);
  return entries_.size();
}

ParkWatch::Stats ParkWatch::stats() const {
  absl::MutexLock l(&mu_);
  return stats_;
}

bool Dying(const ThreadSignals& s) {
  // A status read between kill(SIGKILL) and the death shows the kill pending: answering the call
  // as interrupted would be wasted on a thread that never runs again.
  constexpr uint64_t kKill = uint64_t{1} << (SIGKILL - 1);
  return s.dead || ((s.thread | s.process) & kKill) != 0;
}

ParkWatch::Verdict ParkWatch::Check(WatchedCall& call, Entry& e) {
  if (!call.Waiting()) return Verdict::kEnded;
  if (e.fd < 0 && !e.by_path) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/status", e.tid);
    e.fd = open(path, O_RDONLY | O_CLOEXEC);
    if (e.fd < 0) {
      // Out of fds (bounded by the parked_waits budget, but the limit is the host's): read by
      // path from now on, asking the kernel each time whether the call is still the thread's.
      if (errno != EMFILE && errno != ENFILE && errno != ENOMEM) return Verdict::kGone;
      e.by_path = true;
    }
  }
  char buf[4096];
  ssize_t n;
  if (e.by_path) {
    if (!call.StillPending()) return Verdict::kGone;
    n = ReadByPath(e.tid, buf, sizeof buf - 1);
  } else {
    n = pread(e.fd, buf, sizeof buf - 1, 0);  // a seq_file read at 0 is made afresh
  }
  if (n <= 0) return Verdict::kGone;  // ESRCH: the thread is gone
  ThreadSignals s;
  if (!ParseThreadStatus(std::string_view(buf, static_cast<size_t>(n)), &s))
    return Verdict::kWaiting;
  if (Dying(s)) return Verdict::kGone;
  if (s.thread != 0) return Verdict::kInterruptedThread;
  if (s.process != 0) return Verdict::kInterruptedProcess;
  // The file was opened by tid, so it could be another thread's if the call's thread died before
  // the open and its tid was taken again (by the guest: only its own charge is held the longer).
  // ID_VALID settles it, but it walks the kernel's list of pending calls, which grows with the
  // parked calls: asked once per call, when it has been parked a while.
  if (!e.verified && e.interval >= options_.max_interval) {
    if (!call.StillPending()) return Verdict::kGone;
    e.verified = true;
  }
  return Verdict::kWaiting;
}

void ParkWatch::Loop() {
  absl::Time period_start = absl::Now();
  absl::Duration spent = absl::ZeroDuration();
  mu_.Lock();
  for (;;) {
    // The next due call, once this period's share of work allows it.
    for (;;) {
      if (stopping_) {
        mu_.Unlock();
        return;
      }
      const absl::Time now = absl::Now();
      if (now >= period_start + options_.period) {
        period_start = now;
        spent = absl::ZeroDuration();
      }
      absl::Time until = due_.empty() ? absl::InfiniteFuture() : due_.begin()->first;
      if (spent >= options_.work_per_period)
        until = std::max(until, period_start + options_.period);
      if (now >= until) break;
      cv_.WaitWithDeadline(&mu_, until);
    }
    const uint64_t ticket = due_.begin()->second;
    due_.erase(due_.begin());
    Entry& held = entries_.at(ticket);
    held.checking = true;
    Entry e = held;  // a copy: the map may move while unlocked
    mu_.Unlock();

    const absl::Time t0 = absl::Now();
    std::shared_ptr<WatchedCall> call = e.call.lock();
    const Verdict v = call ? Check(*call, e) : Verdict::kEnded;
    if (v == Verdict::kInterruptedThread || v == Verdict::kInterruptedProcess)
      call->Interrupted(v == Verdict::kInterruptedThread);
    else if (v == Verdict::kGone)
      call->Gone();
    call.reset();  // may be the last reference: its end calls Forget, which takes the lock
    const absl::Time t1 = absl::Now();

    mu_.Lock();
    spent += t1 - t0;
    ++stats_.checks;
    if (v == Verdict::kInterruptedThread || v == Verdict::kInterruptedProcess) ++stats_.interrupted;
    if (v == Verdict::kGone) ++stats_.gone;
    Entry& after = entries_.at(ticket);
    after.checking = false;
    after.fd = e.fd;
    after.by_path = e.by_path;
    after.verified = e.verified;
    if (after.forgotten || v != Verdict::kWaiting) {
      EraseLocked(ticket);
      continue;
    }
    after.interval = std::min(after.interval * 2, options_.max_interval);
    after.due = t1 + after.interval;
    due_.insert({after.due, ticket});
  }
}

}  // namespace nvsentry::sentry
