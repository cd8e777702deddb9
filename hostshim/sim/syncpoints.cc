#include "hostshim/sim/syncpoints.h"

#include <algorithm>
#include <queue>

namespace nvsentry::hostshim::sim {

Syncpoints::Syncpoints(absl::Duration sweep_period) : sweep_period_(sweep_period) {
  timer_ = std::thread([this] { TimerLoop(); });
}

Syncpoints::~Syncpoints() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    cv_.Signal();
  }
  timer_.join();
}

uint32_t Syncpoints::Increment(uint32_t id) {
  Point& p = points_[id];
  uint32_t v = p.value.fetch_add(1, std::memory_order_seq_cst) + 1;
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

void Syncpoints::CompleteReached(uint32_t id) {
  Point& p = points_[id];
  std::vector<std::shared_ptr<SyncpointWaiter>> done;
  uint32_t now;
  {
    absl::MutexLock lock(&mu_);
    now = p.value.load(std::memory_order_seq_cst);
    auto& keys = by_point_[id];
    for (auto it = keys.begin(); it != keys.end();) {
      auto e = parked_.find(*it);
      if (SyncptReached(now, e->second.thresh)) {
        done.push_back(std::move(e->second.waiter));
        parked_.erase(e);
        it = keys.erase(it);
        p.waiters.fetch_sub(1);
      } else {
        ++it;
      }
    }
  }
  for (auto& w : done) w->Reached(now);
}

bool Syncpoints::Reserved(uint32_t id) {
  return id == 0 || id == 26 || id == 27 || id == 0x0C || id == 0x36 || id == 0x37;
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

Syncpoints::WaitStart Syncpoints::Wait(uint32_t id, uint32_t thresh, int32_t timeout_ms,
                                       absl::FunctionRef<std::shared_ptr<SyncpointWaiter>()> make_waiter,
                                       uint32_t* value) {
  Point& p = points_[id];
  *value = p.value.load(std::memory_order_acquire);
  if (SyncptReached(*value, thresh)) return WaitStart::kReached;
  if (timeout_ms == 0) return WaitStart::kTimedOut;

  absl::MutexLock lock(&mu_);
  // Announce the waiter before the second look so that a racing Increment either sees the
  // waiter or this look sees its value (both sides are sequentially consistent).
  p.waiters.fetch_add(1, std::memory_order_seq_cst);
  *value = p.value.load(std::memory_order_seq_cst);
  if (SyncptReached(*value, thresh)) {
    p.waiters.fetch_sub(1);
    return WaitStart::kReached;
  }
  absl::Time deadline =
      timeout_ms < 0 ? absl::InfiniteFuture() : absl::Now() + absl::Milliseconds(timeout_ms);
  uint64_t key = next_key_++;
  parked_.emplace(key, Entry{id, thresh, deadline, make_waiter()});
  by_point_[id].push_back(key);
  if (deadline < earliest_deadline_) {
    earliest_deadline_ = deadline;
    cv_.Signal();
  }
  return WaitStart::kParked;
}

size_t Syncpoints::ParkedCount() const {
  absl::MutexLock lock(&mu_);
  return parked_.size();
}

void Syncpoints::DropLocked(absl::flat_hash_map<uint64_t, Entry>::iterator e) {
  auto& keys = by_point_[e->second.id];
  keys.erase(std::find(keys.begin(), keys.end(), e->first));
  points_[e->second.id].waiters.fetch_sub(1);
  parked_.erase(e);
}

void Syncpoints::TimerLoop() {
  absl::Time next_sweep = absl::Now() + sweep_period_;
  for (;;) {
    std::vector<std::shared_ptr<SyncpointWaiter>> timed_out;
    std::vector<std::pair<uint64_t, std::shared_ptr<SyncpointWaiter>>> to_check;
    {
      absl::MutexLock lock(&mu_);
      for (;;) {
        if (stopping_) return;
        absl::Time until = std::min(earliest_deadline_, next_sweep);
        if (absl::Now() >= until) break;
        cv_.WaitWithDeadline(&mu_, until);
      }
      absl::Time now = absl::Now();
      if (now >= earliest_deadline_) {
        absl::Time earliest = absl::InfiniteFuture();
        for (auto it = parked_.begin(); it != parked_.end();) {
          auto cur = it++;
          if (cur->second.deadline <= now) {
            timed_out.push_back(std::move(cur->second.waiter));
            DropLocked(cur);
          } else {
            earliest = std::min(earliest, cur->second.deadline);
          }
        }
        earliest_deadline_ = earliest;
      }
      if (now >= next_sweep) {
        next_sweep = now + sweep_period_;
        to_check.reserve(parked_.size());
        for (auto& [key, e] : parked_) to_check.emplace_back(key, e.waiter);
      }
    }
    for (auto& w : timed_out) w->TimedOut();
    // Abandoned() asks the kernel about the guest thread: never under the lock.
    std::vector<uint64_t> gone;
    for (auto& [key, w] : to_check)
      if (w->Abandoned()) gone.push_back(key);
    if (!gone.empty()) {
      absl::MutexLock lock(&mu_);
      for (uint64_t key : gone) {
        auto e = parked_.find(key);
        if (e != parked_.end()) DropLocked(e);
      }
    }
  }
}

}  // namespace nvsentry::hostshim::sim
