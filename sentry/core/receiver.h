// How the guest's trapped calls reach the code that serves them.
//
// One thread, the receiver, takes every notification from the listener and serves the fast ones
// itself, so a fast call costs the kernel's round trip plus its own work: no hand-off between
// sentry threads, and with SYNC_WAKE_UP the receiver runs on the CPU the guest thread just left.
// The calls the router calls slow go to a pool of up to `pool_threads` threads, so that they never
// hold up the fast calls behind them, and so that several slow calls run at once. A pool thread
// starts when a slow call is queued and no pool thread is free to take it, so a guest that makes
// no slow call costs none (each thread's start and its end at exit cost some 35 us).
//
// A fast call that takes long all the same (a guest page that faults slowly, a lock a slow call
// holds) cannot stall the other calls either: when the receiver has been inside one call for
// between `stall_after` and twice that, a new thread takes over receiving, and the held one ends
// once it has answered its call. Every call is still served from start to answer by one thread,
// so a call's effect and its answer never come apart.
//
// Under load (a call found waiting while the receiver serves another, at two looks in a row) a
// second thread, the helper, receives and serves fast calls too, until the two have not served
// calls at the same time for kApartLooks looks, or no call came for a whole look. Only then: a
// second thread blocked in the listener's receive costs a lone guest thread's calls some 25%
// (measured: the wake-ups no longer land on the thread that stays on the caller's CPU).
//
// The watch starts with the first call the receiver serves itself: before it there is nothing to
// watch. Threads are detached: they end with the process.
#pragma once

#include <linux/seccomp.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "sentry/core/listener.h"

namespace nvsentry::sentry {

class Receiver {
 public:
  struct Options {
    int pool_threads = 2;
    absl::Duration stall_after = absl::Milliseconds(2);
    // Receiving threads at once, counting those still held in a call after a take-over; a guest
    // that holds this many calls at once waits for one of them to end.
    int max_receivers = 64;
  };
  using Serve = std::function<void(const seccomp_notif&)>;
  using IsSlow = std::function<bool(const seccomp_notif&)>;

  // `serve` answers a call exactly once, on the thread that called it. `thread_start` runs first
  // on every thread this starts.
  Receiver(const Listener& listener, Options options, IsSlow is_slow, Serve serve,
           std::function<void()> thread_start);
  Receiver(const Receiver&) = delete;
  Receiver& operator=(const Receiver&) = delete;

  void Start();

  struct Stats {
    uint64_t served_inline = 0;
    uint64_t handed_off = 0;
    uint64_t takeovers = 0;
  };
  Stats stats() const;

 private:
  // One receiving thread's progress, as the stall watch sees it.
  struct Turn {
    std::atomic<uint64_t> seq{0};      // odd while the thread is inside a call
    std::atomic<bool> retired{false};  // another thread receives now: end after this call
  };

  void ReceiveLoop(std::shared_ptr<Turn> turn);
  void PoolLoop();
  void WatchLoop();
  // The watch's parts. Sleeps until a call begins on `turn` (its seq moves past `seq`) or the
  // listener closes.
  void SleepUntilACallBegins(const Turn& turn, uint64_t seq);
  // Whether a call waited while the receiver of `turn` stayed inside the call the look at `seq`
  // found it in (`busy`).
  bool Backlogged(const Turn& turn, uint64_t seq, bool busy) const;
  // Whether `turn` (still at `seq`, `busy`) and the helper both serve a call.
  static bool BothServing(const Turn& turn, const Turn& helper, uint64_t seq, bool busy);
  // False when no thread may be added (max_receivers).
  bool TakeOver(const std::shared_ptr<Turn>& stalled);
  void StartHelper();
  void RetireHelper();
  static constexpr int kBacklogLooks = 2;
  static constexpr int kApartLooks = 8;
  void Launch(std::function<void()> body);

  const Listener& listener_;
  const Options options_;
  const IsSlow is_slow_;
  const Serve serve_;
  const std::function<void()> thread_start_;

  std::atomic<uint64_t> served_inline_{0};
  std::atomic<uint64_t> handed_off_{0};
  // True while the watch sleeps until the next call begins (it looks only while calls run), and
  // before the watch's thread is started.
  std::atomic<bool> watch_idle_{true};

  mutable absl::Mutex mu_;
  std::shared_ptr<Turn> current_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<Turn> helper_ ABSL_GUARDED_BY(mu_);  // null: the receiver alone
  int receivers_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t takeovers_ ABSL_GUARDED_BY(mu_) = 0;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;  // the listener is gone: the guest ended
  bool watch_started_ ABSL_GUARDED_BY(mu_) = false;

  absl::Mutex pool_mu_;
  std::deque<seccomp_notif> queue_ ABSL_GUARDED_BY(pool_mu_);
  int pool_started_ ABSL_GUARDED_BY(pool_mu_) = 0;
  int pool_idle_ ABSL_GUARDED_BY(pool_mu_) = 0;  // pool threads waiting for a call
};

}  // namespace nvsentry::sentry
