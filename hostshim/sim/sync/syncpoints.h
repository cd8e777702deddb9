// The simulated host1x syncpoints: 192 32-bit counters with wrap-around-safe thresholds, and the
// waiters parked on them. A waiter completes exactly once: reached, timed out, or dropped because
// its guest thread went away. Reads and increments never block on waiters; callbacks run outside
// the table's lock on the thread that caused them (an incrementer, or the table's timer thread).
// Idle waiters cost nothing: an increment visits only the waiters it completes (each syncpoint
// keeps its waiters ordered by how far ahead their thresholds were), the timer thread wakes only
// for the earliest deadline, and it looks for abandoned waiters only after some parked call
// ended without its holder (hostshim::AbandonedCallCount()). The timer thread starts with the
// first waiter parked: before it there is no deadline to keep and no waiter to sweep.
//
// Allocation: each GPU channel takes a syncpoint of its own (Allocate) and gives it back when it
// goes (Free). Id 0 is never handed out; 26 and 27 (vblank, client-managed), 8 and 9 (the display
// heads' flips) and the engines' fixed ids (VIC 0x0C, NVDEC 0x36, NVJPG 0x37) are reserved, as
// public implementations do. Any id can
// still be read, incremented and waited on from the CPU (nvhost-ctrl does not check ownership;
// the policy decides whether the guest may call SYNCPT_INCR at all).
//
// Ownership: the table belongs to one guest's GPU, so the syncpoints the guest owns are those of
// its channels (Allocate) and those an engine channel it opened holds (Claim: the fixed ids of the
// host1x engines, once they are simulated). A command stream moves only owned syncpoints:
// IncrementFromCommandStream is that rule, for every engine.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "abi/nverror.h"
#include "absl/container/btree_set.h"
#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace nvsentry::hostshim::sim {

constexpr uint32_t kNumSyncpoints = 192;

// True once `value` has reached `thresh`, treating the counter as wrapping modulo 2^32.
constexpr bool SyncptReached(uint32_t value, uint32_t thresh) {
  return static_cast<int32_t>(value - thresh) >= 0;
}

class SyncpointWaiter {
 public:
  virtual ~SyncpointWaiter() = default;
  virtual void Reached(uint32_t value) = 0;
  virtual void TimedOut() = 0;
  // True drops the waiter silently. Read under the table's lock, after hostshim::
  // AbandonedCallCount() moved: a flag, never a system call.
  virtual bool Abandoned() = 0;
};

class Syncpoints {
 public:
  // `sweep_period`: how often the timer thread looks for abandoned waiters (when there may be any).
  // The thread starts with the first waiter parked (Wait).
  explicit Syncpoints(absl::Duration sweep_period = absl::Milliseconds(100));
  ~Syncpoints();
  Syncpoints(const Syncpoints&) = delete;
  Syncpoints& operator=(const Syncpoints&) = delete;

  static bool ValidId(uint32_t id) { return id < kNumSyncpoints; }

  uint32_t Read(uint32_t id) const { return points_[id].value.load(std::memory_order_acquire); }
  uint32_t ReadMax(uint32_t id) const { return points_[id].max.load(std::memory_order_acquire); }
  // Adds one and completes every waiter whose threshold is now reached. Returns the new value.
  uint32_t Increment(uint32_t id);
  // Adds `n` at once, as n increments would (the waiters completed once, not n times). Returns
  // the new value.
  uint32_t IncrementBy(uint32_t id, uint32_t n);
  // Raises the max by `n`: the increments a submitted job promises (the fence it hands out is
  // the new max). Returns the new max.
  uint32_t IncrementMax(uint32_t id, uint32_t n);
  // Moves the value up to the max, completing the waiters that reaches: a channel that stops
  // (fault, reset, close) abandons its promised increments, and whoever waits on its fences must
  // not wait forever (the Linux driver does the same). Returns the value.
  uint32_t SetMinEqMax(uint32_t id);

  // A free syncpoint for a channel (see above); InsufficientMemory when none is left.
  abi::NvError Allocate(uint32_t* id);
  // Returns an allocated id to the pool (ids not allocated are ignored).
  void Free(uint32_t id);
  bool Allocated(uint32_t id) const;
  // An engine channel holds `id` (a fixed engine syncpoint) for the guest until Unclaim. Claims
  // count: two channels of one engine both own its syncpoint.
  void Claim(uint32_t id);
  void Unclaim(uint32_t id);
  // The guest owns `id`: allocated to one of its channels or claimed by one of its engine channels.
  bool Owned(uint32_t id) const {
    return ValidId(id) && points_[id].owners.load(std::memory_order_acquire) != 0;
  }
  // The rule for every syncpoint increment a guest's command stream asks for (the host class's
  // SYNCPOINTB, the 3D class's INCREMENT_SYNC_POINT, the engines to come): Success when the
  // syncpoint was incremented; BadParameter for an id that does not exist and AccessDenied for
  // one the guest does not own, which change nothing (the engine stops the channel with them).
  abi::NvError IncrementFromCommandStream(uint32_t id);
  // Reserved ids: never allocated.
  static bool Reserved(uint32_t id);

  enum class WaitStart { kReached, kTimedOut, kParked, kRefused };
  // timeout_ms < 0 waits forever; 0 only checks. On kReached *value holds the current value. Only
  // when the wait must sleep is `make_waiter` called (once, under the table's lock: it must not
  // block); the table keeps the waiter and completes it later. A null waiter (the guest may not
  // park another wait) leaves nothing parked: kRefused.
  WaitStart Wait(uint32_t id, uint32_t thresh, int32_t timeout_ms,
                 absl::FunctionRef<std::shared_ptr<SyncpointWaiter>()> make_waiter,
                 uint32_t* value);

  size_t ParkedCount() const;
  // True while a waiter is parked on `id`.
  bool Waiting(uint32_t id) const {
    return ValidId(id) && points_[id].waiters.load(std::memory_order_acquire) != 0;
  }
  // Called (under the table's lock: it must not block or call back into the table) each time a
  // waiter parks; the display's vblank clock starts ticking on it. Set once, before any Wait.
  void SetParkListener(std::function<void(uint32_t id)> listener) {
    park_listener_ = std::move(listener);
  }

 private:
  struct Point {
    std::atomic<uint32_t> value{0};
    std::atomic<uint32_t> max{0};
    std::atomic<uint32_t> waiters{0};
    std::atomic<uint32_t> owners{0};  // the channel that allocated it, and engine claims
  };
  // A syncpoint's value as a count that never wraps (under mu_): `seen` is the 32-bit value last
  // looked at, `passed` how far the value has moved since the table began. The value only moves
  // forward, by far less than 2^32 between two looks, so the difference of two looks is exact.
  struct Progress {
    uint32_t seen = 0;
    uint64_t passed = 0;
  };
  struct Entry {
    uint32_t id;
    uint64_t due;         // Progress::passed at which the threshold is reached
    absl::Time deadline;  // InfiniteFuture for no timeout
    std::shared_ptr<SyncpointWaiter> waiter;
  };
  using Order = std::pair<uint64_t, uint64_t>;  // (due or deadline, key)

  // `swept_at`: AbandonedCallCount() when the table was made (made_at_).
  void TimerLoop(uint64_t swept_at);
  // Completes the waiters of `id` whose threshold the value has reached.
  void CompleteReached(uint32_t id);
  uint64_t PassedLocked(uint32_t id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void DropLocked(absl::flat_hash_map<uint64_t, Entry>::iterator e)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  Point points_[kNumSyncpoints];
  const absl::Duration sweep_period_;
  const uint64_t made_at_;
  mutable absl::Mutex mu_;
  absl::CondVar cv_;
  uint64_t next_key_ ABSL_GUARDED_BY(mu_) = 1;
  absl::flat_hash_map<uint64_t, Entry> parked_ ABSL_GUARDED_BY(mu_);
  Progress progress_[kNumSyncpoints] ABSL_GUARDED_BY(mu_);
  absl::btree_set<Order> by_point_[kNumSyncpoints] ABSL_GUARDED_BY(mu_);  // (due, key)
  absl::btree_set<std::pair<absl::Time, uint64_t>> deadlines_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool timer_started_ ABSL_GUARDED_BY(mu_) = false;
  std::thread timer_;  // started with the first waiter parked
  std::function<void(uint32_t)> park_listener_;

  // Allocation has its own lock: it never nests with mu_.
  mutable absl::Mutex alloc_mu_;
  bool allocated_[kNumSyncpoints] ABSL_GUARDED_BY(alloc_mu_) = {};
  uint32_t next_alloc_ ABSL_GUARDED_BY(alloc_mu_) = 1;
};

}  // namespace nvsentry::hostshim::sim
