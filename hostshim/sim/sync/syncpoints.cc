#include "hostshim/sim/sync/syncpoints.h"

#include <algorithm>

#include "hostshim/backend.h"

namespace nvsentry::hostshim::sim {

Syncpoints::Syncpoints(absl::Duration sweep_period)
    : sweep_period_(sweep_period),
      // Ends announced from now on may concern this table's waiters (read here, not when the timer
      // starts: an end announced before a waiter is parked may still be its call's).
      made_at_(AbandonedCallCount().load(std::memory_order_acquire)) {}

Syncpoints::~Syncpoints() {
  bool started;
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    started = timer_started_;
    cv_.Signal();
  }
  if (started) timer_.join();
}

uint32_t Syncpoints::Increment(uint32_t id) { return IncrementBy(id, 1); }

uint32_t Syncpoints::IncrementBy(uint32_t id, uint32_t n) {
  Point& p = points_[id];
  uint32_t v = p.value.fetch_add(n, std::memory_order_seq_cst) + n;
  // The CPU increments client-managed points, so max follows value when value passes it.
  uint32_t max = p.max.load(std::memory_order_relaxed);
  while (!SyncptReached(max, v) && !p.max.compare_exchange_weak(max, v)) {
  }
  if (p.waiters.load(std::memory_order_seq_cst) != 0) CompleteReached(id);
  return v;
}

uint32_t Syncpoints::IncrementMax(uint32_t id, uint32_t n) {
  return points_[id].max.fetch_add(n, std::memory_order_seq_cst) + n;
}

uint32_t Syncpoints::SetMinEqMax(uint32_t id) {
  Point& p = points_[id];
  uint32_t max = p.max.load(std::memory_order_seq_cst);
  uint32_t v = p.value.load(std::memory_order_seq_cst);
  // Only ever forwards: a racing Increment may already have passed this max.
  while (!SyncptReached(v, max) && !p.value.compare_exchange_weak(v, max)) {
  }
  if (p.waiters.load(std::memory_order_seq_cst) != 0) CompleteReached(id);
  return p.value.load(std::memory_order_acquire);
}

uint64_t Syncpoints::PassedLocked(uint32_t id) {
  Progress& p = progress_[id];
  const uint32_t v = points_[id].value.load(std::memory_order_seq_cst);
  p.passed += static_cast<uint32_t>(v - p.seen);
  p.seen = v;
  return p.passed;
}

void Syncpoints::CompleteReached(uint32_t id) {
  std::vector<std::shared_ptr<SyncpointWaiter>> done;
  uint32_t now;
  {
    absl::MutexLock lock(&mu_);
    const uint64_t passed = PassedLocked(id);
    now = progress_[id].seen;
    const absl::btree_set<Order>& order = by_point_[id];
    while (!order.empty() && order.begin()->first <= passed) {
      auto e = parked_.find(order.begin()->second);
      done.push_back(std::move(e->second.waiter));
      DropLocked(e);
    }
  }
  for (auto& w : done) w->Reached(now);
}

bool Syncpoints::Reserved(uint32_t id) {
  return id == 0 || id == 8 || id == 9 || id == 26 || id == 27 || id == 0x0C || id == 0x36 ||
         id == 0x37;
}

abi::NvError Syncpoints::Allocate(uint32_t* id) {
  absl::MutexLock lock(&alloc_mu_);
  // Round-robin from the last id handed out, so a freed id is not reused at once (a stale fence
  // of a closed channel then names a syncpoint nobody increments for a while).
  for (uint32_t n = 0; n < kNumSyncpoints; ++n) {
    uint32_t c = (next_alloc_ + n) % kNumSyncpoints;
    if (Reserved(c) || allocated_[c]) continue;
    allocated_[c] = true;
    points_[c].owners.fetch_add(1, std::memory_order_acq_rel);
    next_alloc_ = (c + 1) % kNumSyncpoints;
    *id = c;
    return abi::NvError::kSuccess;
  }
  return abi::NvError::kInsufficientMemory;
}

void Syncpoints::Free(uint32_t id) {
  if (!ValidId(id)) return;
  absl::MutexLock lock(&alloc_mu_);
  if (!allocated_[id]) return;
  allocated_[id] = false;
  points_[id].owners.fetch_sub(1, std::memory_order_acq_rel);
}

void Syncpoints::Claim(uint32_t id) {
  if (ValidId(id)) points_[id].owners.fetch_add(1, std::memory_order_acq_rel);
}

void Syncpoints::Unclaim(uint32_t id) {
  if (!ValidId(id)) return;
  uint32_t n = points_[id].owners.load(std::memory_order_acquire);
  while (n != 0 && !points_[id].owners.compare_exchange_weak(n, n - 1)) {
  }
}

abi::NvError Syncpoints::IncrementFromCommandStream(uint32_t id) {
  if (!ValidId(id)) return abi::NvError::kBadParameter;
  if (!Owned(id)) return abi::NvError::kAccessDenied;
  Increment(id);
  return abi::NvError::kSuccess;
}

bool Syncpoints::Allocated(uint32_t id) const {
  if (!ValidId(id)) return false;
  absl::MutexLock lock(&alloc_mu_);
  return allocated_[id];
}

Syncpoints::WaitStart Syncpoints::Wait(
    uint32_t id, uint32_t thresh, int32_t timeout_ms,
    absl::FunctionRef<std::shared_ptr<SyncpointWaiter>()> make_waiter, uint32_t* value) {
  Point& p = points_[id];
  *value = p.value.load(std::memory_order_acquire);
  if (SyncptReached(*value, thresh)) return WaitStart::kReached;
  if (timeout_ms == 0) return WaitStart::kTimedOut;

  absl::MutexLock lock(&mu_);
  // Announce the waiter before the second look so that a racing Increment either sees the
  // waiter or this look sees its value (both sides are sequentially consistent).
  p.waiters.fetch_add(1, std::memory_order_seq_cst);
  const uint64_t passed = PassedLocked(id);
  *value = progress_[id].seen;
  if (SyncptReached(*value, thresh)) {
    p.waiters.fetch_sub(1);
    return WaitStart::kReached;
  }
  std::shared_ptr<SyncpointWaiter> waiter = make_waiter();
  if (waiter == nullptr) {
    p.waiters.fetch_sub(1);
    return WaitStart::kRefused;
  }
  const absl::Time deadline =
      timeout_ms < 0 ? absl::InfiniteFuture() : absl::Now() + absl::Milliseconds(timeout_ms);
  const uint64_t key = next_key_++;
  // Not reached: the threshold is 1 to 2^31 ahead of the value.
  const uint64_t due = passed + static_cast<uint32_t>(thresh - *value);
  parked_.emplace(key, Entry{id, due, deadline, std::move(waiter)});
  by_point_[id].insert({due, key});
  if (deadline != absl::InfiniteFuture()) {
    if (deadlines_.empty() || deadline < deadlines_.begin()->first) cv_.Signal();
    deadlines_.insert({deadline, key});
  }
  // The first waiter: from now on there may be a deadline to keep and waiters to sweep, never
  // before.
  if (!timer_started_ && !stopping_) {
    timer_ = std::thread([this] { TimerLoop(made_at_); });
    timer_started_ = true;
  }
  if (park_listener_) park_listener_(id);
  return WaitStart::kParked;
}

size_t Syncpoints::ParkedCount() const {
  absl::MutexLock lock(&mu_);
  return parked_.size();
}

void Syncpoints::DropLocked(absl::flat_hash_map<uint64_t, Entry>::iterator e) {
  const Entry& entry = e->second;
  by_point_[entry.id].erase({entry.due, e->first});
  if (entry.deadline != absl::InfiniteFuture()) deadlines_.erase({entry.deadline, e->first});
  points_[entry.id].waiters.fetch_sub(1);
  parked_.erase(e);
}

void Syncpoints::TimerLoop(uint64_t swept_at) {
  absl::Time next_sweep = absl::Now() + sweep_period_;
  for (;;) {
    std::vector<std::shared_ptr<SyncpointWaiter>> timed_out, gone;
    {
      absl::MutexLock lock(&mu_);
      for (;;) {
        if (stopping_) return;
        absl::Time until = next_sweep;
        if (!deadlines_.empty()) until = std::min(until, deadlines_.begin()->first);
        if (absl::Now() >= until) break;
        cv_.WaitWithDeadline(&mu_, until);
      }
      const absl::Time now = absl::Now();
      while (!deadlines_.empty() && deadlines_.begin()->first <= now) {
        auto e = parked_.find(deadlines_.begin()->second);
        timed_out.push_back(std::move(e->second.waiter));
        DropLocked(e);
      }
      if (now >= next_sweep) {
        next_sweep = now + sweep_period_;
        // Only an end the holders did not cause can have left an abandoned waiter here.
        const uint64_t ended = AbandonedCallCount().load(std::memory_order_acquire);
        if (ended != swept_at) {
          swept_at = ended;
          for (auto it = parked_.begin(); it != parked_.end();) {
            auto cur = it++;
            if (!cur->second.waiter->Abandoned()) continue;
            gone.push_back(std::move(cur->second.waiter));
            DropLocked(cur);
          }
        }
      }
    }
    // Callbacks and the last references run outside the lock.
    for (auto& w : timed_out) w->TimedOut();
  }
}

}  // namespace nvsentry::hostshim::sim
