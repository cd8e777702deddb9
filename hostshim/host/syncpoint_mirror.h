// The host's syncpoints, mirrored in a table of the sentry's own (sim::Syncpoints), so that the
// guest's waits and events on them park in the sentry exactly as with the simulated GPU and never
// block a thread on the host: the waits are the simulator's, the values are the host's.
//
// A value moves into the mirror when the sentry reads it from the host: at each guest read or
// increment of that syncpoint (Refresh), and from a poll thread while any guest wait or event is
// parked on it (the table's park listener calls Watch). The poll starts fast and backs off while
// nothing moves (kMinPoll to kMaxPoll), so an idle wait costs a host read per kMaxPoll.
//
// Before the mirror moves past what the host reached, `before_advance` runs: the backend brings
// what the GPU wrote into guest memory there, so a guest that sees a fence reached also sees the
// memory the work behind it wrote (docs/host-passthrough.md, "Memory").
//
// The syncpoints of the guest's channels are kept (guest_syncpoints.h): their table values are
// the guest's count, which moves by the guest increments that landed at the host's value, not to
// the host's value itself.
#pragma once

#include <cstdint>
#include <functional>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "hostshim/host/guest_syncpoints.h"
#include "hostshim/sim/sync/syncpoints.h"

namespace nvsentry::hostshim::host {

class SyncpointMirror {
 public:
  static constexpr absl::Duration kMinPoll = absl::Microseconds(20);
  static constexpr absl::Duration kMaxPoll = absl::Milliseconds(1);

  using ReadHost = std::function<absl::StatusOr<uint32_t>(uint32_t id)>;
  // `mirror` outlives this; its park listener is set here (nothing else may set it).
  SyncpointMirror(sim::Syncpoints& mirror, ReadHost read_host,
                  std::function<void()> before_advance);
  ~SyncpointMirror();
  SyncpointMirror(const SyncpointMirror&) = delete;
  SyncpointMirror& operator=(const SyncpointMirror&) = delete;

  // Reads `id` from the host and moves the mirror up to it; the host's value, or the host's error
  // (the mirror then keeps what it had).
  absl::StatusOr<uint32_t> Refresh(uint32_t id);
  // The host said `id` is at `host_value` (a read the caller made itself): moves the mirror there
  // (after before_advance) unless it is already as far.
  void Observe(uint32_t id, uint32_t host_value) {
    if (sim::Syncpoints::ValidId(id)) Advance(id, host_value);
  }
  // Polls `id` soon and until nothing waits on it (callable under the table's lock: only notes).
  void Watch(uint32_t id);
  // Work went to the host that will move `id` (a submission's fence): poll it fast again.
  void Expect(uint32_t id) { Watch(id); }

  // The guest's kept syncpoints (set once, before any guest call; outlives this).
  void SetGuestSyncpoints(GuestSyncpoints* kept) { kept_ = kept; }
  // Runs at each poll, before the host is read (set once, before any guest call): the backend
  // gives the host what the guest's CPU wrote meanwhile, which the work a guest waits for may
  // itself wait on (a semaphore acquire the CPU releases), as a GPU sees the CPU's writes.
  void SetBeforePoll(std::function<void()> before_poll) { before_poll_ = std::move(before_poll); }
  // Runs at the end of each poll, holding no lock (set once, before any guest call): the backend
  // sends the submissions it held back whose fences can now be named.
  void SetAfterPoll(std::function<void()> after_poll) { after_poll_ = std::move(after_poll); }

  // Host reads made so far (for tests and the benchmark).
  uint64_t host_reads() const { return host_reads_.load(std::memory_order_relaxed); }

 private:
  void Advance(uint32_t id, uint32_t host_value);
  void PollLoop();

  sim::Syncpoints& mirror_;
  ReadHost read_host_;
  std::function<void()> before_advance_;
  GuestSyncpoints* kept_ = nullptr;
  std::function<void()> before_poll_, after_poll_;
  std::atomic<uint64_t> host_reads_{0};
  // Serialises moves of the mirror, so before_advance and the move it precedes are not
  // interleaved with another's.
  absl::Mutex advance_mu_;

  absl::Mutex mu_;
  absl::CondVar wake_;
  absl::flat_hash_set<uint32_t> watched_ ABSL_GUARDED_BY(mu_);
  bool fresh_ ABSL_GUARDED_BY(mu_) = false;  // a watch came since the poll last slept
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread poller_;
};

}  // namespace nvsentry::hostshim::host
