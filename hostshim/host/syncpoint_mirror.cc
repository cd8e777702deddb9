#include "hostshim/host/syncpoint_mirror.h"

#include <algorithm>
#include <vector>

namespace nvsentry::hostshim::host {

SyncpointMirror::SyncpointMirror(sim::Syncpoints& mirror, ReadHost read_host,
                                 std::function<void()> before_advance)
    : mirror_(mirror),
      read_host_(std::move(read_host)),
      before_advance_(std::move(before_advance)) {
  mirror_.SetParkListener([this](uint32_t id) { Watch(id); });
  poller_ = std::thread([this] { PollLoop(); });
}

SyncpointMirror::~SyncpointMirror() {
  {
    absl::MutexLock l(&mu_);
    stopping_ = true;
    wake_.Signal();
  }
  poller_.join();
}

absl::StatusOr<uint32_t> SyncpointMirror::Refresh(uint32_t id) {
  if (!sim::Syncpoints::ValidId(id)) return absl::InvalidArgumentError("no such syncpoint");
  host_reads_.fetch_add(1, std::memory_order_relaxed);
  absl::StatusOr<uint32_t> v = read_host_(id);
  if (v.ok()) Advance(id, *v);
  return v;
}

void SyncpointMirror::Advance(uint32_t id, uint32_t host_value) {
  if (kept_ != nullptr && kept_->Kept(id)) {
    // The guest's count moves by what its landed jobs made, not to the host's value. The moves
    // add up in any order; what matters is that the pull comes first.
    GuestSyncpoints::Landing landed;
    {
      absl::MutexLock l(&advance_mu_);
      landed = kept_->Landed(id, host_value);
      if (landed.jobs == 0) return;
      if (before_advance_) before_advance_();
      if (std::function<void()> on_landed = kept_->OnLanded(id)) on_landed();
    }
    // What was held back for these jobs goes to the host before a guest waiting for them goes on
    // (as a GPU-side wait would let it run as soon as they end).
    if (after_poll_) after_poll_();
    kept_->Apply(id, landed.increments);
    return;
  }
  absl::MutexLock l(&advance_mu_);
  const uint32_t ahead = host_value - mirror_.Read(id);
  // Host syncpoints only move forward; a value "behind" the mirror (by the wrap-safe comparison)
  // is a stale read that lost a race with a newer one.
  if (ahead == 0 || static_cast<int32_t>(ahead) < 0) return;
  if (before_advance_) before_advance_();
  mirror_.IncrementBy(id, ahead);
}

void SyncpointMirror::Watch(uint32_t id) {
  absl::MutexLock l(&mu_);
  watched_.insert(id);
  fresh_ = true;
  wake_.Signal();
}

void SyncpointMirror::PollLoop() {
  absl::Duration interval = kMinPoll;
  absl::MutexLock l(&mu_);
  while (!stopping_) {
    if (watched_.empty()) {
      wake_.Wait(&mu_);
      interval = kMinPoll;
      continue;
    }
    if (fresh_) interval = kMinPoll;
    fresh_ = false;
    std::vector<uint32_t> ids(watched_.begin(), watched_.end());
    bool moved = false;
    mu_.Unlock();
    if (before_poll_) before_poll_();
    std::vector<uint32_t> idle;
    for (uint32_t id : ids) {
      const uint32_t before = mirror_.Read(id);
      absl::StatusOr<uint32_t> v = Refresh(id);
      if (v.ok() && *v != before) moved = true;
      // A kept syncpoint is polled until its jobs landed too: their end may signal an event.
      if (!mirror_.Waiting(id) && !(kept_ != nullptr && kept_->Pending(id))) idle.push_back(id);
    }
    if (after_poll_) after_poll_();
    // Nothing parked there any more: stop polling it (a new park watches it again). Asked before
    // mu_ is taken again: a landing takes the guest syncpoints' lock, then the table's, whose
    // waiters call Watch (mu_), so asking them under mu_ closed a cycle (absl's deadlock
    // detection in xlate_fuzz). A Watch that comes meanwhile sets fresh_, and then none goes.
    std::vector<uint32_t> unwatch;
    for (uint32_t id : idle)
      if (!mirror_.Waiting(id) && !(kept_ != nullptr && kept_->Pending(id))) unwatch.push_back(id);
    mu_.Lock();
    if (!fresh_)
      for (uint32_t id : unwatch) watched_.erase(id);
    interval = moved ? kMinPoll : std::min(interval * 2, kMaxPoll);
    if (!stopping_ && !fresh_) wake_.WaitWithTimeout(&mu_, interval);
  }
}

}  // namespace nvsentry::hostshim::host
