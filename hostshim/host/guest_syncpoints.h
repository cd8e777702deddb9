// The syncpoints of the guest's host channels as the guest sees them (docs/host-passthrough.md,
// "Guest syncpoints"). Each host channel's syncpoint keeps its host id, but its value and max in
// the sentry's table are the guest's own count, the simulated GPU's: the increments the guest's
// submissions promise (max) and make (value), and its SYNCPT_INCRs. The host's value of the same
// syncpoint counts only what r32.7.4's kernel asked for (its two increments after each job); the
// guest's own increments never reach the host (the channel cuts them out of the entries it
// passes), so the kernel's max is never passed behind its back.
//
// A submission's guest increments land when the host's syncpoint reaches the fence the kernel
// gave its job: Submitted records them in order; Landed, given a host value, takes those that
// landed (the mirror moves the table by them, syncpoint_mirror.h). Thread-safe.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "hostshim/sim/sync/syncpoints.h"

namespace nvsentry::hostshim::host {

class GuestSyncpoints {
 public:
  // `table` (the sentry's, which the guest's waits park on) outlives this.
  explicit GuestSyncpoints(sim::Syncpoints& table) : table_(table) {}

  // The host channel's syncpoint `id` is the guest's from now on. Its guest value and max start
  // equal (the larger of the two the table holds), as nvgpu sets a channel syncpoint's min to its
  // max when it makes one.
  // `on_landed` runs (on the mirror's thread) after guest increments of it landed.
  void Keep(uint32_t id, std::function<void()> on_landed = {});
  // The channel is gone: `id` is the host's again (the table keeps the guest's last values).
  void Release(uint32_t id);
  bool Kept(uint32_t id) const;

  // A job went to the host with the kernel's fence `host_fence` on `id` (nullopt: the sentry holds
  // it back, Resolve names its fence once it went): the guest's max grows by `promised` now, its
  // value by `made` when the host reaches the fence. The guest's fence (the new max).
  uint32_t Submitted(uint32_t id, std::optional<uint32_t> host_fence, uint32_t made,
                     uint32_t promised);
  // The first job of `id` held back went to the host with fence `host_fence`.
  void Resolve(uint32_t id, uint32_t host_fence);
  // The host's `id` is at `host_value`: the jobs that landed since the last call and the guest
  // increments they made (the caller moves the table by them). None for an id not kept.
  struct Landing {
    uint32_t jobs = 0, increments = 0;
  };
  Landing Landed(uint32_t id, uint32_t host_value);
  // Whether submitted jobs of kept `id` have not landed yet (the mirror polls it meanwhile).
  bool Pending(uint32_t id) const;
  // The `on_landed` Keep was given for `id` (empty when none).
  std::function<void()> OnLanded(uint32_t id) const;
  // Moves the table by `n` of the increments Landed returned, in one step with WaitFor's count
  // of them (which counts them as made from Landed on): a wait never sees them twice, in the
  // table and as landed.
  void Apply(uint32_t id, uint32_t n);
  // The last host value Landed saw for a kept id (nullopt before the first).
  std::optional<uint32_t> LastHost(uint32_t id) const;

  // What a wait for guest value `value` of kept `id` means on the host.
  struct HostWait {
    bool reached = false;        // nothing to wait for
    std::optional<uint32_t> at;  // else the host value to wait for; nullopt: no job on the host
                                 // reaches it yet (a later submission, a job held back or a
                                 // SYNCPT_INCR may)
  };
  HostWait WaitFor(uint32_t id, uint32_t value) const;

 private:
  struct Job {
    std::optional<uint32_t> host_fence;  // nullopt: held back by the sentry
    uint32_t made;
  };
  struct Point {
    std::optional<uint32_t> last_host;
    std::deque<Job> pending;  // in submission order: their host fences increase
    std::function<void()> on_landed;
    uint32_t unapplied = 0;  // landed, the table not moved yet
  };
  sim::Syncpoints& table_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<uint32_t, Point> kept_ ABSL_GUARDED_BY(mu_);
};

}  // namespace nvsentry::hostshim::host
