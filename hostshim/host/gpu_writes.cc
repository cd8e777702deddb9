#include "hostshim/host/gpu_writes.h"

#include <algorithm>

namespace nvsentry::hostshim::host {

std::span<const ObjectSide::Interval> SyncPlan::Of(const sim::NvmapObject* object) const {
  auto it = where.find(object);
  if (it == where.end()) return {};
  return it->second;
}

SyncPlan PlanOf(std::span<const WriteTarget> targets) {
  SyncPlan plan;
  absl::flat_hash_map<const sim::NvmapObject*, std::shared_ptr<sim::NvmapObject>> objects;
  for (const WriteTarget& t : targets) {
    std::shared_ptr<sim::NvmapObject> o = t.object.lock();
    if (o == nullptr || t.offset >= o->size() || t.size == 0) continue;
    const uint64_t end = t.offset + std::min(t.size, o->size() - t.offset);
    plan.where[o.get()].push_back({t.offset, end});
    objects.emplace(o.get(), std::move(o));
  }
  for (auto& [_, ranges] : plan.where) {
    std::sort(ranges.begin(), ranges.end(),
              [](const auto& a, const auto& b) { return a.begin < b.begin; });
    std::vector<ObjectSide::Interval> merged;
    for (const ObjectSide::Interval& r : ranges) {
      if (!merged.empty() && r.begin <= merged.back().end)
        merged.back().end = std::max(merged.back().end, r.end);
      else
        merged.push_back(r);
    }
    ranges = std::move(merged);
  }
  for (auto& [_, o] : objects) plan.alive.push_back(std::move(o));
  return plan;
}

uint64_t GpuWrites::Add(const void* channel, std::vector<WriteTarget> targets, bool waits) {
  return Keep(channel, std::move(targets), waits);
}

uint64_t GpuWrites::AddWritingAnything(const void* channel, bool waits) {
  return Keep(channel, std::nullopt, waits);
}

uint64_t GpuWrites::Keep(const void* channel, std::optional<std::vector<WriteTarget>> targets,
                         bool waits) {
  absl::MutexLock l(&mu_);
  const uint64_t ticket = next_++;
  Job job{channel,      targets ? std::move(*targets) : std::vector<WriteTarget>{},
          std::nullopt, false,
          waits,        !targets};
  if (job.everything) {
    ++everything_;
  } else if (job.targets.size() > kMaxTargets - targets_) {
    job.targets.clear();
    job.everything = true;
    ++everything_;
  }
  targets_ += job.targets.size();
  if (waits) ++waiting_;
  jobs_.emplace(ticket, std::move(job));
  return ticket;
}

void GpuWrites::Erase(uint64_t ticket) {
  auto it = jobs_.find(ticket);
  if (it == jobs_.end()) return;
  if (it->second.waits) --waiting_;
  if (it->second.everything) --everything_;
  targets_ -= it->second.targets.size();
  jobs_.erase(it);
}

bool GpuWrites::AnyWaits() const {
  absl::MutexLock l(&mu_);
  return waiting_ != 0;
}

void GpuWrites::Fenced(uint64_t ticket, uint32_t id, uint32_t value) {
  absl::MutexLock l(&mu_);
  if (auto it = jobs_.find(ticket); it != jobs_.end()) it->second.fence = {id, value};
}

void GpuWrites::Dropped(uint64_t ticket) {
  absl::MutexLock l(&mu_);
  Erase(ticket);
}

void GpuWrites::SetNotifier(const void* channel, std::optional<WriteTarget> record) {
  absl::MutexLock l(&mu_);
  if (record)
    notifiers_[channel] = std::move(*record);
  else
    notifiers_.erase(channel);
}

void GpuWrites::ChannelGone(const void* channel) {
  absl::MutexLock l(&mu_);
  for (auto& [_, job] : jobs_)
    if (job.channel == channel && job.fence) job.gone = true;  // the held ones never ran there
}

SyncPlan GpuWrites::Plan(const Passed& passed) {
  std::vector<WriteTarget> targets;
  struct Done {
    uint64_t ticket;
    bool gone;
    std::optional<std::pair<uint32_t, uint32_t>> fence;
  };
  std::vector<Done> jobs;
  SyncPlan plan;
  {
    absl::MutexLock l(&mu_);
    for (auto& [ticket, job] : jobs_) {
      jobs.push_back({ticket, job.gone, job.fence});
      targets.insert(targets.end(), job.targets.begin(), job.targets.end());
    }
    for (const auto& [_, record] : notifiers_) targets.push_back(record);
    plan.everything = jobs_.size() > kMaxJobs || everything_ != 0;
  }
  // Asked with no lock held: `passed` reads the mirror's syncpoints, whose locks come first.
  for (const Done& j : jobs)
    if (j.gone || (j.fence && passed(j.fence->first, j.fence->second)))
      plan.retire.push_back(j.ticket);
  if (plan.everything) return plan;
  SyncPlan ranges = PlanOf(targets);
  plan.where = std::move(ranges.where);
  plan.alive = std::move(ranges.alive);
  return plan;
}

void GpuWrites::Retire(const SyncPlan& plan) {
  absl::MutexLock l(&mu_);
  for (uint64_t ticket : plan.retire) Erase(ticket);
}

size_t GpuWrites::pending() const {
  absl::MutexLock l(&mu_);
  return jobs_.size();
}

}  // namespace nvsentry::hostshim::host
