// The GPU's engine threads: a fixed pool shared by every channel, like the one host engine that
// time-slices the channels of a runlist. A channel with work is queued (FIFO); a free thread takes
// it and lets it run a slice; a channel that still has work asks to be queued again, so channels
// take turns. A Runnable is never run by two threads at once, and the runlist holds it only
// weakly: a channel that goes away while queued is simply skipped.
//
// The pool's threads start as work comes: one when a runnable is queued or a timer set that no
// free thread will see to, up to the pool's size. Work waits as it would with the whole pool
// started at once, and a guest that never submits work costs no thread.
//
// Timers: After() runs a small callback on an engine thread once a delay has passed (semaphore
// acquire retries, polling of WAIT conditions). Callbacks and Run() are called without the
// runlist's lock, so they may call Schedule/After again.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace nvsentry::hostshim::sim {

class Runnable {
 public:
  virtual ~Runnable() = default;
  // Does some work on an engine thread and returns (it must not sleep waiting for anything).
  virtual void Run() = 0;

 private:
  friend class Runlist;
  // The runlist's bookkeeping, guarded by the owning Runlist's lock.
  bool queued_ = false;   // in the queue
  bool running_ = false;  // a thread is in Run()
  bool again_ = false;    // Schedule() came while running: queue it again afterwards
};

class Runlist {
 public:
  explicit Runlist(int threads = 2);
  // Stops the threads after their current step; queued work and timers are dropped.
  ~Runlist();
  Runlist(const Runlist&) = delete;
  Runlist& operator=(const Runlist&) = delete;

  // Queues `r` to run (once, however often it is scheduled before a thread takes it).
  void Schedule(const std::shared_ptr<Runnable>& r);
  // Schedules `r` after `delay`, if it still exists then.
  void ScheduleAfter(std::weak_ptr<Runnable> r, absl::Duration delay);
  // Runs `fn` on an engine thread after `delay`.
  void After(absl::Duration delay, std::function<void()> fn);

  // Waits (at most `timeout`) until no thread is in a Runnable's Run(): what a step was doing when
  // the guest ended (a job's trace record, say) is finished before the sentry exits. True when it
  // got there.
  bool WaitIdle(absl::Duration timeout);

  int threads() const { return max_threads_; }  // the pool's size (not all started, maybe)
  uint64_t runs() const;                        // Run() calls so far (tests, status)

 private:
  void Loop();
  // Starts a thread if the free ones do not suffice for what is queued and set (and the pool is
  // not full).
  void StartWanted() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const int max_threads_;
  mutable absl::Mutex mu_;
  absl::CondVar cv_;
  std::deque<std::weak_ptr<Runnable>> queue_ ABSL_GUARDED_BY(mu_);
  std::multimap<absl::Time, std::function<void()>> timers_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t runs_ ABSL_GUARDED_BY(mu_) = 0;
  int busy_ ABSL_GUARDED_BY(mu_) = 0;  // threads in Run()
  int free_ ABSL_GUARDED_BY(mu_) = 0;  // threads looking for work, or about to
  // Grows under mu_ until stopping_ is set; read without it by the destructor only.
  std::vector<std::thread> threads_;
};

}  // namespace nvsentry::hostshim::sim
