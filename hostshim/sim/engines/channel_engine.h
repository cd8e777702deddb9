// The running half of a GPU channel: the GPFIFO ring of submitted jobs, the command processor that
// executes them on the runlist's engine threads, the channel's syncpoint and fences, the WAIT
// conditions parked on it, and what happens when it fails (error notifier, error info, the error
// event). The device session (GpuChannel) owns it through a shared_ptr; the runlist, timers and
// syncpoint waiters hold it weakly, so closing a channel while its work is queued or running is
// safe: it goes when the last step in flight ends, and with it its syncpoint, its budget charge,
// its address space reference and its notifier object.
//
// A job is one submit: an optional fence wait (done here, engine side, before the entries), the
// entries, and an optional kernel-style fence increment (two SYNCPOINT INCRs, after a WFI unless
// suppressed) run through CommandProcessor::RunWords. The pushbuffer segments of a job's entries
// are read ahead in batches (PushbufferBatch: one read of guest memory for up to 128 entries),
// dropped when an entry writes GPU memory or stops and when the channel stops running, so the
// entries see what they would fetching one by one. A fault or a bad command stops the channel:
// the pending jobs are dropped, the syncpoint is moved up to its max (so nobody waits on the
// dropped fences forever), the notifier is written, the error event signalled, parked WAITs
// answered, and submits are refused with Timeout until Reset (FORCE_RESET).
//
// Lock order: the engine's lock is a leaf; nothing that may call back (syncpoints, runlist,
// nvmap objects, events, continuations) is called while holding it.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "abi/devices/channel.h"
#include "abi/nverror.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "hostshim/backend.h"
#include "hostshim/budget.h"
#include "hostshim/events.h"
#include "hostshim/sim/engines/command_processor.h"
#include "hostshim/sim/engines/pushbuffer_batch.h"
#include "hostshim/sim/engines/runlist.h"
#include "hostshim/sim/memory/address_space.h"
#include "hostshim/sim/memory/nvmap.h"
#include "hostshim/sim/sync/syncpoints.h"

namespace nvsentry::hostshim::sim {

// GET_ERROR_INFO word 0 (Switchbrew).
enum class ChannelErrorKind : uint32_t { kNone = 0, kMmu = 1, kGr = 2, kPbdma = 3, kTimeout = 4 };

// Error notifier info32 codes (Linux nvgpu uapi, struct nvgpu_notification).
inline constexpr uint32_t kNotifierIdleTimeout = 8;
inline constexpr uint32_t kNotifierGrException = 13;
inline constexpr uint32_t kNotifierMmuFault = 31;
inline constexpr uint32_t kNotifierPbdmaError = 32;
// The notifier's status once the driver wrote an error (Switchbrew, Linux).
inline constexpr uint16_t kNotifierStatusError = 0xFFFF;

// QueryEvent ids of /dev/nvhost-gpu (Switchbrew).
inline constexpr uint32_t kEventSmBreakpoint = 1, kEventSmPause = 2, kEventErrorNotifier = 3;

// The error the channel stopped with.
struct ChannelError {
  ChannelErrorKind kind = ChannelErrorKind::kNone;
  uint32_t notifier_code = 0;  // info32
  uint64_t timestamp_ns = 0;   // CLOCK_REALTIME, as the Linux notifier
  uint64_t monotonic_ns = 0;   // CLOCK_MONOTONIC (GET_ERROR_NOTIFICATION's system tick)
  MmuFault fault;              // kMmu
  // A method the channel refused (kGr, kPbdma): its class, byte offset and value; zeros for an
  // error of the pusher itself (a malformed pushbuffer).
  uint32_t method_class = 0, method = 0, method_value = 0;
  std::string what;
};

// What GET_ERROR_INFO and GET_ERROR_NOTIFICATION answer for a channel stopped with `e`
// (docs/guest-abi.md has the words); all zeros for kNone.
abi::channel::ErrorInfo ErrorInfoOf(const ChannelError& e);
abi::channel::ErrorNotification ErrorNotificationOf(const ChannelError& e);

// The 16-byte notification written into the notifier object (Linux struct nvgpu_notification).
struct NotifierRecord {
  uint64_t timestamp_ns;
  uint32_t info32;
  uint16_t info16;
  uint16_t status;
};
static_assert(sizeof(NotifierRecord) == 16);

struct SubmitJob {
  std::vector<abi::channel::GpfifoEntry> entries;
  bool wait = false;  // wait for wait_fence before the entries
  abi::channel::Fence wait_fence{};
  bool increment = false;  // two syncpoint increments after the entries
  bool wfi = true;         // ... preceded by a wait-for-idle
};

// NVGPU_IOCTL_CHANNEL_WAIT's condition, resolved.
struct WaitCondition {
  std::shared_ptr<NvmapObject> object;
  uint32_t offset = 0;
  bool semaphore = false;  // false: notifier (status == 0); true: u32 at offset == payload
  uint32_t payload = 0;
};

class ChannelEngine : public Runnable, public std::enable_shared_from_this<ChannelEngine> {
 public:
  struct Deps {
    Syncpoints& syncpoints;
    Runlist& runlist;
    BudgetAccount* budget = nullptr;        // the kChannels charge it releases; event fds' open_fds
    std::function<uint64_t()> gpu_time_ns;  // null: GpuTimeNs() (gpu_clock.h)
    const StreamPolicy* policy = nullptr;   // the guest's command-stream rules; outlives the engine
  };
  // Takes ownership of syncpoint `syncpoint_id` (allocated) and of one kChannels charge on
  // deps.budget (if any); both are given back by the destructor.
  ChannelEngine(const Deps& deps, uint32_t syncpoint_id);
  ~ChannelEngine() override;
  ChannelEngine(const ChannelEngine&) = delete;
  ChannelEngine& operator=(const ChannelEngine&) = delete;

  uint32_t syncpoint_id() const { return syncpoint_id_; }

  // ALLOC_GPFIFO*: the ring's size in entries. AlreadyAllocated the second time.
  abi::NvError AllocRing(uint32_t entries);
  uint32_t ring_size() const;
  // Success, or InvalidState when bound to another address space already.
  abi::NvError BindAddressSpace(std::shared_ptr<AddressSpace> as);
  bool has_address_space() const;
  // ALLOC_OBJ_CTX made the channel's object context of class `cls` (the graphics-engine classes
  // need a graphics one: bind_object.cc).
  void SetObjectClass(uint32_t cls) { object_class_.store(cls, std::memory_order_release); }

  // Queues a job. `promised` is how far the fence moves (the increments the job's words and
  // entries make); *fence gets {syncpoint, new max}. Timeout when the channel has failed,
  // InvalidState without a ring, InsufficientMemory when the job can never fit the ring, Busy
  // when it does not fit now (the client retries): in the ring, or in the guest's queued_bytes
  // budget, which the job holds (its copy of the entries) until it is done or dropped.
  abi::NvError Submit(SubmitJob job, uint32_t promised, abi::channel::Fence* fence);

  // Error notifier: `object` (may be null: enabled without memory, the nvdrv model where the
  // client asks with GET_ERROR_NOTIFICATION) at `offset`; Disable forgets it.
  void EnableNotifier(std::shared_ptr<NvmapObject> object, uint64_t offset);
  void DisableNotifier();

  bool failed() const;
  ChannelError error() const;
  // Stops the channel with `error` (the engine does this itself on a fault; public for tests and
  // for the timeout watchdog of later work).
  void Fail(ChannelError error);
  // FORCE_RESET: drops pending work, clears the error, forgets the command processor's state.
  void Reset();
  // ENABLE / DISABLE: a disabled channel keeps its jobs but does not run them.
  void SetEnabled(bool enabled);
  // Called on each non-stall interrupt the channel's work raises (NON_STALL_INTERRUPT, engine
  // completions that ask for one), on the thread running it: L4T's driver posts TSG events
  // then (the fake Jetson's BLOCKING_SYNC). Must not call into this channel. Empty: nothing.
  void SetNonstallHook(std::function<void()> hook);
  // The device session closed: drop everything and answer parked WAITs.
  void Close();

  // Events: QueryEvent and EVENT_ID_CONTROL. Ids 1..3.
  int EventFd(uint32_t id) { return events_.Get(id); }
  void SetEventEnabled(uint32_t id, bool enabled);
  bool ClearEvent(uint32_t id) { return events_.Clear(id); }

  // WAIT: is the condition met now? (kGone: the object's memory cannot be read.) A met notifier
  // condition gets its timestamp written, as the Linux driver does.
  enum class WaitState { kMet, kNotYet, kGone };
  WaitState CheckWait(const WaitCondition& c);
  // Parks a WAIT until its condition is met (Success), `timeout` passes (Timeout), the channel
  // fails or closes (Timeout), or the guest stops waiting.
  void ParkWait(WaitCondition c, std::shared_ptr<Continuation> call, absl::Duration timeout);

  // Counters for tests and status.
  uint64_t entries_done() const;
  size_t pending_jobs() const;

  void Run() override;

 private:
  // A job's progress: spec.wait and spec.increment are cleared once done, `next` counts the
  // entries run.
  struct Job {
    SubmitJob spec;
    uint32_t cost = 1;  // ring entries it holds until done
    size_t next = 0;
    uint64_t charged = 0;  // queued_bytes it holds until done or dropped
  };
  enum class Do : uint8_t { kResetCp, kWait, kEntry, kIncrement };
  struct Step {
    Do what = Do::kEntry;
    abi::channel::GpfifoEntry entry{};
    abi::channel::Fence fence{};
    bool wfi = true;
  };
  struct ParkedWait {
    WaitCondition cond;
    std::shared_ptr<Continuation> call;
    absl::Time deadline;
  };
  enum class Block : uint8_t { kNone, kSyncpoint, kSemaphore };
  class Requeue;

  // Gives back the queued_bytes a job held (it is done, or dropped).
  void ReleaseQueued(const Job& j);
  // Unblocks the channel after the syncpoint waiter / retry timer of `epoch` fired.
  void Unblock(uint64_t epoch);
  uint64_t epoch() const;
  // The next step of the front job, popping finished jobs; false when there is none.
  bool NextStepLocked(Step* s) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Records that step `what` of the front job is done (ignored when `epoch` is over: a reset or
  // fault dropped the job meanwhile).
  void StepDone(uint64_t epoch, Do what);
  // Blocks the channel on syncpoint `id` reaching `thresh`; false if it has already (run on).
  bool BlockOnSyncpoint(uint64_t epoch, uint32_t id, uint32_t thresh);
  void BlockOnSemaphore(uint64_t epoch);
  void FailWith(ChannelErrorKind kind, uint32_t code, MmuFault fault, std::string what);
  // Stops the channel on a kError of the command processor (a malformed or refused command).
  void FailOnError(const RunResult& r);
  // Runs the front job's next entry, its segment taken from batch_ (filled with the entries
  // that follow it when it does not cover it).
  RunResult RunEntry(uint64_t epoch, const abi::channel::GpfifoEntry& entry);
  // True when the caller must start the poll timer (outside the lock).
  bool ArmPollLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void StartPollTimer();
  void PollWaits();
  void DropAllLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  Syncpoints& syncpoints_;
  Runlist& runlist_;
  BudgetAccount* const budget_;
  const uint32_t syncpoint_id_;
  std::function<uint64_t()> clock_;
  EventSet events_;

  // The bound address space: set once (null -> as), read lock-free by the command processor.
  class BoundMemory : public GpuMemory {
   public:
    bool Read(uint64_t va, std::span<uint8_t> dst, MmuFault* fault) override;
    bool Write(uint64_t va, std::span<const uint8_t> src, MmuFault* fault) override;
    bool ReadMany(std::span<const GpuRead> reads) override;
    std::atomic<AddressSpace*> as{nullptr};
    // Writes the channel's commands made (a DMA copy's second thread writes too), so that a
    // prefetched pushbuffer they may have changed is read again.
    std::atomic<uint64_t> writes{0};
  };
  BoundMemory memory_;
  std::atomic<uint32_t> object_class_{0};
  std::unique_ptr<CommandProcessor> cp_;             // engine thread only
  PushbufferBatch batch_;                            // engine thread only; empty between runs
  std::vector<abi::channel::GpfifoEntry> upcoming_;  // engine thread only: scratch for batch_

  absl::Mutex hook_mu_;  // apart from mu_: the hook runs from inside the channel's work
  std::function<void()> nonstall_hook_ ABSL_GUARDED_BY(hook_mu_);
  mutable absl::Mutex mu_;
  std::shared_ptr<AddressSpace> as_ ABSL_GUARDED_BY(mu_);
  uint32_t ring_size_ ABSL_GUARDED_BY(mu_) = 0;
  uint32_t ring_used_ ABSL_GUARDED_BY(mu_) = 0;
  std::deque<Job> jobs_ ABSL_GUARDED_BY(mu_);
  uint64_t epoch_ ABSL_GUARDED_BY(mu_) = 0;  // bumped whenever pending work is dropped
  Block blocked_ ABSL_GUARDED_BY(mu_) = Block::kNone;
  absl::Duration retry_delay_ ABSL_GUARDED_BY(mu_);
  bool cp_reset_pending_ ABSL_GUARDED_BY(mu_) = false;
  bool enabled_ ABSL_GUARDED_BY(mu_) = true;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  bool failed_ ABSL_GUARDED_BY(mu_) = false;
  ChannelError error_ ABSL_GUARDED_BY(mu_);
  bool notifier_enabled_ ABSL_GUARDED_BY(mu_) = false;
  std::shared_ptr<NvmapObject> notifier_ ABSL_GUARDED_BY(mu_);
  uint64_t notifier_offset_ ABSL_GUARDED_BY(mu_) = 0;
  uint32_t events_enabled_ ABSL_GUARDED_BY(mu_) = ~0u;  // bit per event id
  std::vector<ParkedWait> waits_ ABSL_GUARDED_BY(mu_);
  bool poll_armed_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t polls_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t entries_done_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace nvsentry::hostshim::sim
