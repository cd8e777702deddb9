// Where the host's GPU may have written guest objects that the guest has not yet seen: what a pull
// (Twins::PullAll) must read from the host, so that it reads that and not every twin whole
// (docs/host-passthrough.md, "Memory"). A GPU write leaves no mark a CPU's page tables can show,
// so the record comes from the stream check: each job the host runs brings the ranges its words
// write where the address is in the stream (semaphores, DMA and inline-to-memory destinations),
// or, when its words may write where the stream does not say (a draw, a compute launch, the 2D
// class: stream_check.h's StreamFootprint::anywhere), every object its address space maps. A job's
// ranges are pulled until a pull that began after the host had passed the job's fence; the
// channel's error notifier record, which the host's kernel may write at any time, is pulled
// always.
//
// Over-reading is only slower; under-reading would leave the guest stale bytes. So every
// uncertainty widens the plan: a job whose fence is not known yet stays, a job of a channel whose
// host channel went stays until the next pull, a job whose stream writes at more places than
// the check keeps counts as writing anywhere.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/btree_map.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "hostshim/host/object_mirror.h"
#include "hostshim/sim/memory/nvmap.h"

namespace nvsentry::hostshim::host {

// [offset, offset + size) of a guest object the GPU may write.
struct WriteTarget {
  std::weak_ptr<sim::NvmapObject> object;
  uint64_t offset = 0, size = 0;
};

// What one pull reads, or one push sends: per object, sorted disjoint ranges; and the jobs a
// pull retires.
struct SyncPlan {
  absl::flat_hash_map<const sim::NvmapObject*, std::vector<ObjectSide::Interval>> where;
  std::vector<std::shared_ptr<sim::NvmapObject>> alive;  // held while the pull runs
  std::vector<uint64_t> retire;                          // tickets, once the pull is done
  // Every twin whole (the record outgrew GpuWrites::kMaxJobs): what a pull did before the record.
  bool everything = false;
  // The ranges of `object` to move; empty: none.
  std::span<const ObjectSide::Interval> Of(const sim::NvmapObject* object) const;
};

// The plan that reads or writes `targets` (clipped to their objects, sorted and merged per
// object; a target whose object is gone is left out).
SyncPlan PlanOf(std::span<const WriteTarget> targets);

class GpuWrites {
 public:
  // Jobs kept at most (the mirror's poll pulls once their fences pass, so more means a guest
  // whose jobs do not finish); past it, pulls read every twin whole until the jobs retire.
  static constexpr size_t kMaxJobs = 4096;
  // Ranges kept at most, over all jobs (a job may bring thousands): a job that would pass it is
  // kept as writing everything, which its pulls then read, until it retires.
  static constexpr size_t kMaxTargets = size_t{1} << 16;
  using Passed = std::function<bool(uint32_t id, uint32_t value)>;

  // A job about to reach the host, which may write `targets`, and may wait for memory the CPU
  // writes (`waits`); `channel` names its channel. Its ticket, for Fenced or Dropped.
  uint64_t Add(const void* channel, std::vector<WriteTarget> targets, bool waits = false);
  // The same for a job that may write anything (too many places to list): pulls read every twin
  // whole until it retires.
  uint64_t AddWritingAnything(const void* channel, bool waits);
  // The host took the job; it is done once the host passes (id, value).
  void Fenced(uint64_t ticket, uint32_t id, uint32_t value);
  // The job never reached the host.
  void Dropped(uint64_t ticket);
  // The channel's error notifier record (nullopt: none), written by the host's kernel at any time.
  void SetNotifier(const void* channel, std::optional<WriteTarget> record);
  // The channel's host channel is gone (closed, or renewed by FORCE_RESET): the jobs it took
  // (Fenced) write nothing after the next pull, which retires them.
  void ChannelGone(const void* channel);

  // What the next pull reads, given which fences the host has passed (asked now, before the pull
  // reads anything: a job passed then has written all it will).
  SyncPlan Plan(const Passed& passed);
  // The pull of `plan` is done: its retired jobs go.
  void Retire(const SyncPlan& plan);

  size_t pending() const;
  // Whether a job that may wait for memory the CPU writes is in the record (until a pull retires
  // it): then the guest's CPU writes must go on reaching the host while it runs.
  bool AnyWaits() const;

 private:
  struct Job {
    const void* channel;
    std::vector<WriteTarget> targets;
    std::optional<std::pair<uint32_t, uint32_t>> fence;
    bool gone = false;  // its channel's host channel went
    bool waits = false;
    bool everything = false;  // its ranges were past kMaxTargets
  };
  void Erase(uint64_t ticket) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  uint64_t Keep(const void* channel, std::optional<std::vector<WriteTarget>> targets, bool waits);
  mutable absl::Mutex mu_;
  uint64_t next_ ABSL_GUARDED_BY(mu_) = 1;
  absl::btree_map<uint64_t, Job> jobs_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<const void*, WriteTarget> notifiers_ ABSL_GUARDED_BY(mu_);
  size_t waiting_ ABSL_GUARDED_BY(mu_) = 0;     // jobs with `waits`
  size_t everything_ ABSL_GUARDED_BY(mu_) = 0;  // jobs with `everything`
  size_t targets_ ABSL_GUARDED_BY(mu_) = 0;     // over all jobs
};

}  // namespace nvsentry::hostshim::host
