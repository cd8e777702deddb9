// The guest's channel sessions forwarded to the host (docs/host-passthrough.md). The host channel
// is the sentry's open of the host's /dev/nvhost-gpu (r32.7 makes a channel at the open), bound
// at once to a TSG of its own (host_tsg.h), both charged to the channels budget from the open to
// the session's end. Calls go to the channel in the L4T layouts (channel_xlate.h); the priority
// and the timeslice go to its TSG, where r32.7.4 serves them; what r32.7.4 does not serve stays
// in the sentry, answered as the simulated channel answers: the events, the user data, the error
// queries (from the host's GET_TIMEDOUT and the notifier record the host wrote).
//
// FORCE_RESET: r32.7.4's ends the host channel and its TSG for good (L4T-TSG-11), where the
// simulated channel restarts; so the host's is reset, then replaced by a new channel in a new TSG
// under the same fd numbers, set up as the old one was (channel_renew.cc).
//
// Submissions: guest memory goes to the host first (HostContext::PushGuestMemory, whose error is
// the submission's answer); then the pushbuffers, as the host will read them, are held to the
// sandbox's command-stream rules (submission_check.h), and the words checked are copied into the
// channel's private copy (pushbuffer_copy.h), from which the host fetches them. A refused
// submission never reaches the host: the channel stops as a simulated one does (its notifier
// written, its error event, the error queries answering the sentry's error, submits Timeout until
// FORCE_RESET).
//
// The channel's syncpoint is named by an empty job once the gpfifo is made; the guest owns it and
// its values are the guest's count (guest_syncpoints.h): the stream's increments of it are cut out
// of the entries the host gets and land when the host reaches the job's kernel fence; a FENCE_WAIT
// on a guest value no job on the host makes yet holds the submission back (FlushDeferred).
#pragma once

#include <deque>
#include <memory>
#include <optional>
#include <vector>

#include "abi/l4t/nvgpu_channel.h"
#include "absl/synchronization/mutex.h"
#include "hostshim/budget.h"
#include "hostshim/events.h"
#include "hostshim/host/gpu_writes.h"
#include "hostshim/host/host_address_space.h"
#include "hostshim/host/host_session.h"
#include "hostshim/host/pushbuffer_copy.h"
#include "hostshim/host/stream_check.h"
#include "hostshim/sim/engines/channel_engine.h"

namespace nvsentry::hostshim::host {

struct HostChannelError;

// What the mirror's thread uses of a channel when its jobs land (guest_syncpoints.h): whether the
// host channel failed (GET_TIMEDOUT), and then the error event, as the simulated channel signals
// it when it fails. `events` goes null when the session ends (before its host fd closes).
struct HostFaultWatch {
  absl::Mutex mu;
  int channel_fd ABSL_GUARDED_BY(mu) = -1;
  EventSet* events ABSL_GUARDED_BY(mu) = nullptr;
  bool signalled ABSL_GUARDED_BY(mu) = false;  // once per host channel
  void Landed();
};

class ChannelSession : public HostSession {
 public:
  // `charge` holds the session's channels charge (HostDriver::Open takes it before the host open).
  ChannelSession(HostContext& ctx, const abi::DeviceDesc& device, UniqueFd host_fd,
                 std::unique_ptr<BudgetHold> charge, UniqueFd tsg_fd);
  ~ChannelSession() override;
  Result Ioctl(Call& call) override;
  abi::NvError QueryEvent(uint32_t id, int* eventfd) override;

  // BIND_CHANNEL, from the guest's address space session: InvalidState when the channel is bound
  // to another address space already (as simulated); the host call otherwise.
  abi::NvError BindAddressSpace(std::shared_ptr<HostAddressSpace> space, pid_t tid);
  // The channel's host syncpoint, once a fence named it.
  std::optional<uint32_t> syncpoint() const;

 private:
  Result SetNvmapFd(Call& call);
  Result SetTimeout(Call& call);
  Result AllocGpfifo(Call& call);
  Result AllocObjCtx(Call& call);
  Result Submit(Call& call);
  // The host call of a submission the check passed (or its holding back: `later`, or others are
  // held), and the guest's fence of it. Takes the private copy's `span` (resets it) when the host
  // or a held submission has it. `writes`: its GpuWrites ticket (0: it writes nothing), given
  // its fence, or dropped when it never reaches the host.
  // Pushes what `targets` name (nullopt: every twin).
  abi::NvError PushPlanned(const std::optional<std::vector<WriteTarget>>& targets);
  Result SubmitChecked(Call& call, std::span<const abi::channel::GpfifoEntry> entries,
                       std::optional<uint64_t>& span, abi::l4t::nvgpu_channel::SubmitGpfifo h,
                       bool later, uint64_t writes);
  // FENCE_WAIT for the host: a guest count of a kept syncpoint becomes the host value of the job
  // that makes it (or no wait when reached; `*later` when no job on the host makes it yet); a
  // host syncpoint's fence passes as it is.
  abi::NvError HostFenceWait(const abi::channel::Fence& f, abi::l4t::nvgpu_channel::SubmitGpfifo* h,
                             bool* later);
  // Sends the submissions held back, in order, while their waits can be named on the host (run by
  // the mirror's poll, HostContext::AddFlusher).
  void FlushDeferred();
  // A submission held back until its FENCE_WAIT's value is made by a job on the host: its checked
  // words wait in the private copy's span meanwhile.
  struct Deferred {
    std::vector<abi::channel::GpfifoEntry> sent;
    abi::l4t::nvgpu_channel::SubmitGpfifo h;
    std::optional<uint64_t> span;  // the private copy's
    abi::channel::Fence wait;      // the guest's, on a kept syncpoint
    uint32_t own;
    uint64_t writes = 0;  // its GpuWrites ticket
  };
  // The channel's syncpoint, named by an empty job once the host channel has a gpfifo; the guest's
  // count of it starts then.
  abi::NvError ProbeSyncpoint(const Call& call);
  Result SetErrorNotifier(Call& call);
  Result Wait(Call& call);
  Result ErrorQuery(Call& call);
  Result Sentry(Call& call);    // the calls the sentry answers itself
  Result Schedule(Call& call);  // SET_PRIORITY, SET_TIMESLICE: the TSG's
  // FORCE_RESET, and the new host channel that follows it (channel_renew.cc).
  Result ForceReset(Call& call);
  abi::NvError Renew(const Call& call);
  abi::NvError ReplaySetup(const Call& call);
  abi::NvError ReplaySchedule(const Call& call);
  HostCallResult Tsg(const Call& call, uint32_t code, std::span<uint8_t> arg);
  // The host's GET_TIMEDOUT and the notifier record, for the error queries.
  abi::NvError HostError(const Call& call, HostChannelError* e);
  void LearnSyncpoint(uint32_t id);
  // A span of the private copy for `words` words (the copy made on first use, in `space`).
  abi::NvError ReserveCopy(const Call& call, const std::shared_ptr<HostAddressSpace>& space,
                           uint64_t words, uint64_t* span)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(submit_mu_);
  // A submission the sentry refused: the channel stops (notifier, event) with `e`.
  void Stop(sim::ChannelError e);

  const std::unique_ptr<BudgetHold> charge_;
  const UniqueFd tsg_;  // its number stays; Renew puts a new TSG under it
  // Held across a submission's check and its host call, so that the check's state (bound
  // classes, macros) follows the submissions in the host's order. Before mu_.
  absl::Mutex submit_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  StreamCheck check_ ABSL_GUARDED_BY(submit_mu_);
  std::deque<Deferred> deferred_ ABSL_GUARDED_BY(submit_mu_);
  EventSet events_;
  const std::shared_ptr<HostFaultWatch> fault_watch_ = std::make_shared<HostFaultWatch>();
  mutable absl::Mutex mu_;
  std::shared_ptr<HostAddressSpace> space_ ABSL_GUARDED_BY(mu_);
  std::optional<uint32_t> syncpoint_ ABSL_GUARDED_BY(mu_);
  uint32_t obj_class_ ABSL_GUARDED_BY(mu_) = 0;
  std::optional<sim::ChannelError> stopped_ ABSL_GUARDED_BY(mu_);  // by the sentry's check
  bool reset_check_ ABSL_GUARDED_BY(mu_) = false;  // FORCE_RESET: check_ starts over
  // Weak: the channel's notifier must not keep a freed object (and its twin, its agreed copy and
  // its host memory) alive after its pinned_bytes went back to the guest's budget.
  std::weak_ptr<sim::NvmapObject> notifier_ ABSL_GUARDED_BY(mu_);
  // What the host fetches: the checked words, in the sentry's own memory (pushbuffer_copy.h).
  // Made at the first submission with an address space bound.
  std::unique_ptr<PushbufferCopy> copy_ ABSL_GUARDED_BY(submit_mu_);
  uint64_t notifier_offset_ ABSL_GUARDED_BY(mu_) = 0;
  // What the host channel was told, for a new one after FORCE_RESET.
  bool nvmap_fd_set_ ABSL_GUARDED_BY(mu_) = false;
  std::optional<uint32_t> timeout_ ABSL_GUARDED_BY(mu_);
  uint32_t ring_entries_ ABSL_GUARDED_BY(mu_) = 0;  // the host's ALLOC_GPFIFO_EX's; 0: none
  std::optional<uint32_t> priority_ ABSL_GUARDED_BY(mu_);
  std::optional<uint32_t> timeslice_us_ ABSL_GUARDED_BY(mu_);
  uint64_t user_data_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace nvsentry::hostshim::host
