#include "hostshim/sim/engines/runlist.h"

#include <utility>

namespace nvsentry::hostshim::sim {

Runlist::Runlist(int threads) : max_threads_(threads < 1 ? 1 : threads) {
  threads_.reserve(max_threads_);  // started as work comes (StartWanted)
}

Runlist::~Runlist() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    cv_.SignalAll();
  }
  // No thread starts once stopping_ is set: threads_ no longer changes.
  for (auto& t : threads_) t.join();
  // Timer callbacks may own parked calls or channels; destroy them without the lock.
  std::multimap<absl::Time, std::function<void()>> timers;
  {
    absl::MutexLock lock(&mu_);
    timers.swap(timers_);
    queue_.clear();
  }
}

void Runlist::Schedule(const std::shared_ptr<Runnable>& r) {
  if (!r) return;
  absl::MutexLock lock(&mu_);
  if (r->running_) {
    r->again_ = true;
    return;
  }
  if (r->queued_) return;
  r->queued_ = true;
  queue_.push_back(r);
  cv_.Signal();
  StartWanted();
}

void Runlist::ScheduleAfter(std::weak_ptr<Runnable> r, absl::Duration delay) {
  After(delay, [this, r = std::move(r)] {
    if (auto s = r.lock()) Schedule(s);
  });
}

void Runlist::After(absl::Duration delay, std::function<void()> fn) {
  absl::MutexLock lock(&mu_);
  if (stopping_) return;
  absl::Time when = absl::Now() + delay;
  bool earliest = timers_.empty() || when < timers_.begin()->first;
  timers_.emplace(when, std::move(fn));
  // A sleeping thread's deadline may be later than this one.
  if (earliest) cv_.Signal();
  StartWanted();
}

void Runlist::StartWanted() {
  // A thread for each queued runnable and one for the timers, as far as the free ones do not
  // suffice: what the whole pool started at once would have had.
  const size_t wanted = queue_.size() + (timers_.empty() ? 0 : 1);
  if (stopping_ || static_cast<size_t>(free_) >= wanted ||
      static_cast<int>(threads_.size()) >= max_threads_)
    return;
  threads_.emplace_back([this] { Loop(); });
  ++free_;  // free from now on: work queued before it runs waits for it
}

bool Runlist::WaitIdle(absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  auto idle = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return busy_ == 0; };
  return mu_.AwaitWithTimeout(absl::Condition(&idle), timeout);
}

uint64_t Runlist::runs() const {
  absl::MutexLock lock(&mu_);
  return runs_;
}

void Runlist::Loop() {
  // Counted free from its start (StartWanted), then again each time it looks for work.
  for (bool counted = true;; counted = false) {
    std::function<void()> fire;
    std::shared_ptr<Runnable> run;
    {
      absl::MutexLock lock(&mu_);
      if (!counted) ++free_;
      for (;;) {
        if (stopping_) return;
        if (!timers_.empty() && timers_.begin()->first <= absl::Now()) {
          fire = std::move(timers_.begin()->second);
          timers_.erase(timers_.begin());
          break;
        }
        if (!queue_.empty()) {
          std::weak_ptr<Runnable> w = std::move(queue_.front());
          queue_.pop_front();
          run = w.lock();
          if (!run) continue;  // the channel went away while queued
          run->queued_ = false;
          run->running_ = true;
          ++runs_;
          ++busy_;
          break;
        }
        absl::Time deadline = timers_.empty() ? absl::InfiniteFuture() : timers_.begin()->first;
        cv_.WaitWithDeadline(&mu_, deadline);
      }
      --free_;
      // More work than this thread: let another one look, started if none is free.
      if (!queue_.empty() || !timers_.empty()) {
        cv_.Signal();
        StartWanted();
      }
    }
    if (fire) {
      fire();
      fire = nullptr;  // whatever it owned goes here, without the lock
      continue;
    }
    run->Run();
    {
      absl::MutexLock lock(&mu_);
      run->running_ = false;
      --busy_;
      if (run->again_) {
        run->again_ = false;
        run->queued_ = true;
        queue_.push_back(run);
        cv_.Signal();
      }
    }
    run.reset();  // may be the last reference: the channel is destroyed here, without the lock
  }
}

}  // namespace nvsentry::hostshim::sim
