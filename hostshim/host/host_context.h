// What the host backend's sessions share, one per guest: the sentry's own opens of the host's
// nvmap (for the twins and SET_NVMAP_FD) and nvhost-ctrl (for the syncpoint mirror), the twins,
// the mirrored syncpoints, and the options. Made at the first open of a host-backed device.
#pragma once

#include <memory>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "hostshim/host/gpu_writes.h"
#include "hostshim/host/guest_syncpoints.h"
#include "hostshim/host/host_call.h"
#include "hostshim/host/host_driver.h"
#include "hostshim/host/host_fences.h"
#include "hostshim/host/l4t_nvmap.h"
#include "hostshim/host/memory_waits.h"
#include "hostshim/host/syncpoint_mirror.h"
#include "hostshim/host/twins.h"
#include "hostshim/sim/engines/ctrl_gpu_device.h"
#include "hostshim/sim/sync/module_mutexes.h"
#include "hostshim/sim/sync/syncpoints.h"
#include "hostshim/unique_fd.h"

namespace nvsentry::hostshim::host {

class HostContext : private HostFences {
 public:
  // Opens the host's nvmap and nvhost-ctrl under options.dev_dir; an error naming the node when
  // the host has none or refuses it.
  static absl::StatusOr<std::unique_ptr<HostContext>> Make(const HostOptions& options);
  ~HostContext();

  const HostOptions& options() const { return options_; }
  int nvmap_fd() const { return nvmap_fd_.get(); }
  Twins& twins() { return twins_; }
  // Where the host's GPU may have written since the guest last saw it (what pulls read).
  GpuWrites& gpu_writes() { return gpu_writes_; }
  sim::Syncpoints& syncpoints() { return syncpoints_; }
  SyncpointMirror& mirror() { return *mirror_; }
  // The guest's count of its channels' syncpoints (guest_syncpoints.h).
  GuestSyncpoints& kept() { return kept_; }
  MemoryWaits& memory_waits() { return *memory_waits_; }
  HostNvmap& host_nvmap() { return host_nvmap_; }
  sim::ModuleMutexes& mutexes() { return mutexes_; }
  // What the guest's ctrl-gpu sessions keep in the sentry (ctrl_gpu_session.h).
  sim::GpuControlState& gpu_control() { return gpu_control_; }
  sim::Nvmap& nvmap() { return *options_.nvmap; }
  BudgetAccount* budget() { return options_.budget.get(); }
  const HostNote& note() const { return options_.note; }

  // The syncpoints the guest's host channels use: the only ones its SYNCPT_INCR may move.
  void OwnSyncpoint(uint32_t id) {
    absl::MutexLock l(&owned_mu_);
    owned_.insert(id);
  }
  // The channel that used `id` is gone: the host may hand it to another client.
  void DisownSyncpoint(uint32_t id) {
    absl::MutexLock l(&owned_mu_);
    owned_.erase(id);
  }
  bool OwnsSyncpoint(uint32_t id) {
    absl::MutexLock l(&owned_mu_);
    return owned_.contains(id);
  }
  // SYNCPT_INCR: counts the guest's increment and runs `host_incr` (the host call) with `id` owned
  // throughout, so a channel closing meanwhile cannot give the syncpoint to another host client
  // between the check and the host call. False, and nothing runs, when the guest does not own it.
  template <typename F>
  bool IncrementOwned(uint32_t id, F&& host_incr) {
    absl::MutexLock l(&owned_mu_);
    if (!owned_.contains(id)) return false;
    guest_increments_[id] += 1;  // before it can move the host's syncpoint
    host_incr();
    return true;
  }
  // The guest is about to increment `id` `n` times itself (SYNCPT_INCR, a checked pushbuffer):
  // counted before the host sees them, so a fence it reaches this way is not passed
  // (host_fences.h).
  void CountGuestIncrements(uint32_t id, uint64_t n) {
    absl::MutexLock l(&owned_mu_);
    guest_increments_[id] += n;
  }

  // The channels' senders of the submissions they hold back (ChannelSession::FlushDeferred),
  // run by the mirror's poll; `key` names one for RemoveFlusher, which returns once it no longer
  // runs. Never called with a channel's submission lock held.
  void AddFlusher(const void* key, std::function<void()> flush);
  void RemoveFlusher(const void* key);
  // Whether the host is past the fence {id, value} (host_fences.h: a fence the guest reaches
  // itself is not passed); the host is read only with `ask_host`.
  bool FencePassed(uint32_t id, uint32_t value, bool ask_host) {
    return host::FencePassed(*this, id, value, ask_host);
  }

  // Guest -> host for every twin (before a submission); the NvError the submission answers when
  // a twin cannot be filled: InvalidAddress (its guest memory is gone), InsufficientMemory (past
  // twin_bytes: nothing moved). With `plan`, only what it names (a submission's footprint).
  abi::NvError PushGuestMemory(const SyncPlan* plan = nullptr);
  // Host -> guest (before the guest can see what the host's GPU finished): of each twin, what
  // gpu_writes() says the host's GPU may have written since the last pull.
  void PullGuestMemory();

 private:
  HostContext(const HostOptions& options, UniqueFd nvmap_fd, UniqueFd ctrl_fd);
  // The host's syncpoints for FencePassed: the mirror's table, and the host's SYNCPT_READ.
  std::optional<uint32_t> Mirrored(uint32_t id) override;
  std::optional<uint32_t> Read(uint32_t id) override;
  uint64_t GuestIncrements(uint32_t id) override;
  absl::StatusOr<uint32_t> ReadHostSyncpoint(uint32_t id);

  HostOptions options_;
  UniqueFd nvmap_fd_;
  UniqueFd ctrl_fd_;
  L4tNvmap host_nvmap_;
  Twins twins_;
  GpuWrites gpu_writes_;
  sim::ModuleMutexes mutexes_;
  sim::GpuControlState gpu_control_;
  absl::Mutex owned_mu_;
  absl::flat_hash_set<uint32_t> owned_ ABSL_GUARDED_BY(owned_mu_);
  // Kept after a disown (bounded by the ids the guest ever owned): more only holds a span longer.
  absl::flat_hash_map<uint32_t, uint64_t> guest_increments_ ABSL_GUARDED_BY(owned_mu_);
  void FlushDeferred();
  absl::Mutex flushers_mu_;
  absl::flat_hash_map<const void*, std::function<void()>> flushers_ ABSL_GUARDED_BY(flushers_mu_);
  sim::Syncpoints syncpoints_;
  GuestSyncpoints kept_{syncpoints_};
  std::unique_ptr<MemoryWaits> memory_waits_;  // its poll thread uses the twins
  std::unique_ptr<SyncpointMirror> mirror_;    // last: its poll thread uses the rest
};

}  // namespace nvsentry::hostshim::host
