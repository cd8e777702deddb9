#include "hostshim/host/guest_syncpoints.h"

#include <algorithm>

namespace nvsentry::hostshim::host {

void GuestSyncpoints::Keep(uint32_t id, std::function<void()> on_landed) {
  if (!sim::Syncpoints::ValidId(id)) return;
  absl::MutexLock l(&mu_);
  const uint32_t value = table_.Read(id), max = table_.ReadMax(id);
  if (sim::SyncptReached(value, max))
    table_.IncrementMax(id, value - max);
  else
    table_.IncrementBy(id, max - value);  // a closed channel's jobs that never landed
  kept_[id] = Point{std::nullopt, {}, std::move(on_landed)};
}

void GuestSyncpoints::Release(uint32_t id) {
  absl::MutexLock l(&mu_);
  kept_.erase(id);
}

bool GuestSyncpoints::Kept(uint32_t id) const {
  absl::MutexLock l(&mu_);
  return kept_.contains(id);
}

void GuestSyncpoints::Apply(uint32_t id, uint32_t n) {
  // Under mu_: WaitFor reads the table and `unapplied` under it, so it sees both before or both
  // after (apart, a FENCE_WAIT read between them counted the jobs twice and passed a value no job
  // had made yet).
  absl::MutexLock l(&mu_);
  if (n != 0) table_.IncrementBy(id, n);
  auto it = kept_.find(id);
  if (it != kept_.end()) it->second.unapplied -= std::min(n, it->second.unapplied);
}

bool GuestSyncpoints::Pending(uint32_t id) const {
  absl::MutexLock l(&mu_);
  auto it = kept_.find(id);
  return it != kept_.end() && !it->second.pending.empty();
}

std::function<void()> GuestSyncpoints::OnLanded(uint32_t id) const {
  absl::MutexLock l(&mu_);
  auto it = kept_.find(id);
  return it == kept_.end() ? std::function<void()>() : it->second.on_landed;
}

std::optional<uint32_t> GuestSyncpoints::LastHost(uint32_t id) const {
  absl::MutexLock l(&mu_);
  auto it = kept_.find(id);
  if (it == kept_.end()) return std::nullopt;
  return it->second.last_host;
}

uint32_t GuestSyncpoints::Submitted(uint32_t id, std::optional<uint32_t> host_fence, uint32_t made,
                                    uint32_t promised) {
  absl::MutexLock l(&mu_);
  auto it = kept_.find(id);
  if (it == kept_.end()) return table_.ReadMax(id);
  it->second.pending.push_back({host_fence, made});
  return table_.IncrementMax(id, promised);
}

void GuestSyncpoints::Resolve(uint32_t id, uint32_t host_fence) {
  absl::MutexLock l(&mu_);
  auto it = kept_.find(id);
  if (it == kept_.end()) return;
  for (Job& j : it->second.pending) {
    if (!j.host_fence) {
      j.host_fence = host_fence;
      return;
    }
  }
}

GuestSyncpoints::Landing GuestSyncpoints::Landed(uint32_t id, uint32_t host_value) {
  absl::MutexLock l(&mu_);
  auto it = kept_.find(id);
  if (it == kept_.end()) return {};
  Point& p = it->second;
  if (!p.last_host || sim::SyncptReached(host_value, *p.last_host)) p.last_host = host_value;
  Landing n;
  while (!p.pending.empty() && p.pending.front().host_fence &&
         sim::SyncptReached(*p.last_host, *p.pending.front().host_fence)) {
    ++n.jobs;
    n.increments += p.pending.front().made;
    p.pending.pop_front();
  }
  p.unapplied += n.increments;
  return n;
}

GuestSyncpoints::HostWait GuestSyncpoints::WaitFor(uint32_t id, uint32_t value) const {
  absl::MutexLock l(&mu_);
  auto it = kept_.find(id);
  uint32_t guest = table_.Read(id) + (it == kept_.end() ? 0 : it->second.unapplied);
  if (sim::SyncptReached(guest, value)) return {true, std::nullopt};
  if (it == kept_.end()) return {};
  for (const Job& j : it->second.pending) {
    if (!j.host_fence) return {};  // held back: its fence is not known yet
    guest += j.made;
    if (sim::SyncptReached(guest, value)) return {false, j.host_fence};
  }
  return {};
}

}  // namespace nvsentry::hostshim::host
