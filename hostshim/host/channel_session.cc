#include "hostshim/host/channel_session.h"

#include <time.h>

#include <cerrno>
#include <cstring>

#include "abi/device_events.h"
#include "abi/devices/channel.h"
#include "abi/gpu_classes.h"
#include "abi/l4t/nvgpu_channel.h"
#include "absl/cleanup/cleanup.h"
#include "hostshim/host/channel_xlate.h"
#include "hostshim/host/host_context.h"
#include "hostshim/host/l4t_nvmap.h"
#include "hostshim/host/submission_check.h"
#include "hostshim/host/twin_handle.h"
#include "hostshim/rate_limited_log.h"
#include "hostshim/sim/engines/gpu_clock.h"
#include "hostshim/sim/engines/pushbuffer.h"
#include "hostshim/sim/memory/nvmap_device.h"

namespace nvsentry::hostshim::host {

namespace ch = abi::channel;
namespace l4t = abi::l4t::nvgpu_channel;
using abi::NvError;

namespace {

// [offset, offset + len) inside an object of `size` bytes, without overflow.
bool Inside(uint64_t offset, uint64_t len, uint64_t size) {
  return len <= size && offset <= size - len;
}

pid_t Tgid(const Call& call) { return call.caller ? call.caller->tgid() : -1; }

uint64_t RealtimeNs() {  // the notifier's clock, as Linux's
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(ts.tv_nsec);
}

}  // namespace

ChannelSession::ChannelSession(HostContext& ctx, const abi::DeviceDesc& device, UniqueFd host_fd,
                               std::unique_ptr<BudgetHold> charge, UniqueFd tsg_fd)
    : HostSession(ctx, device, abi::l4t::L4tNode::kNvhostGpu, std::move(host_fd)),
      charge_(std::move(charge)),
      tsg_(std::move(tsg_fd)),
      // A stream increments only its own channel's syncpoint: a job held back (on a semaphore,
      // say) could otherwise still move another channel's after that channel closed and the host
      // gave it away; nvgpu ends a channel's jobs with the channel.
      check_(StreamRules{ctx.options().stream,
                         [this](uint32_t id) {
                           const std::optional<uint32_t> own = syncpoint();
                           return own && *own == id;
                         },
                         // Every channel's copy in the space: a channel sharing it may write the
                         // other's.
                         [this](uint64_t va, uint64_t size) {
                           absl::MutexLock l(&mu_);
                           return space_ != nullptr && space_->MeetsPrivate(va, size);
                         }}),
      events_(ctx.budget()) {
  ctx_.AddFlusher(this, [this] { FlushDeferred(); });
}

void HostFaultWatch::Landed() {
  absl::MutexLock l(&mu);
  if (events == nullptr || signalled) return;
  l4t::U32Arg t{};
  if (HostIoctlOf(channel_fd, abi::l4t::L4tNode::kNvhostGpu, l4t::kGetTimedout, t).err != 0 ||
      t.value == 0)
    return;
  signalled = true;
  events->Signal(sim::kEventErrorNotifier);
}

ChannelSession::~ChannelSession() {
  ctx_.RemoveFlusher(this);  // first: the poll no longer sends what this holds back
  {
    absl::MutexLock l(&submit_mu_);
    for (Deferred& d : deferred_) {  // never reached the host
      if (d.span) copy_->Abandon(*d.span);
      if (d.writes != 0) ctx_.gpu_writes().Dropped(d.writes);
    }
  }
  ctx_.gpu_writes().SetNotifier(this, std::nullopt);
  {
    absl::MutexLock l(&fault_watch_->mu);
    fault_watch_->events = nullptr;
  }
  {
    // The host may give the syncpoint to another client once the channel closes (below): the
    // guest's SYNCPT_INCR must not reach it then.
    absl::MutexLock l(&mu_);
    if (syncpoint_) {
      ctx_.kept().Release(*syncpoint_);
      ctx_.DisownSyncpoint(*syncpoint_);
    }
  }
  // The host channel closes here rather than after this body, so that its jobs leave the write
  // record only at a pull that starts once they can write nothing more. (An fd something else
  // took keeps the channel open: its jobs then leave at their fences.)
  if (host_fd() >= 0) {
    TakeHostFd().Reset();
    ctx_.gpu_writes().ChannelGone(this);
  }
}

std::optional<uint32_t> ChannelSession::syncpoint() const {
  absl::MutexLock l(&mu_);
  return syncpoint_;
}

NvError ChannelSession::QueryEvent(uint32_t id, int* eventfd) {
  if (NvError v = abi::EventIdVerdict(abi::Device(abi::DeviceId::kNvhostGpu), id);
      v != NvError::kSuccess)
    return v;
  // The sentry's eventfds, as simulated; the host's channel has no events to forward.
  const int fd = events_.Get(id);
  if (fd < 0) return NvError::kInsufficientMemory;
  *eventfd = fd;
  return NvError::kSuccess;
}

NvError ChannelSession::BindAddressSpace(std::shared_ptr<HostAddressSpace> space, pid_t tid) {
  absl::MutexLock l(&mu_);
  if (space_ != nullptr) return space_ == space ? NvError::kSuccess : NvError::kInvalidState;
  if (NvError e = space->Bind(tid, host_fd()); e != NvError::kSuccess) return e;
  space_ = std::move(space);
  return NvError::kSuccess;
}

Result ChannelSession::Ioctl(Call& call) {
  switch (call.desc.code) {
    case ch::kSetNvmapFd: return SetNvmapFd(call);
    case ch::kSetTimeout: return SetTimeout(call);
    case ch::kAllocGpfifo:
    case ch::kAllocGpfifoEx:
    case ch::kAllocGpfifoEx2: return AllocGpfifo(call);
    case ch::kAllocObjCtx: return AllocObjCtx(call);
    case ch::kSubmitGpfifo:
    case ch::kSubmitGpfifoRetry:
    case ch::kSubmitGpfifo2:
    case ch::kSubmitGpfifo2Retry: return Submit(call);
    case ch::kSetErrorNotifier: return SetErrorNotifier(call);
    case ch::kWait: return Wait(call);
    case ch::kZcullBind:
      if (ArgAs<ch::ZcullBind>(call.arg).mode > 3)  // Switchbrew: modes 0..3
        return Result::Done(NvError::kBadParameter);
      return Same(call, l4t::kZcullBind);
    case ch::kEnable: return Result::Done(Host(call, l4t::kEnable, {}).nv());
    case ch::kDisable: return Result::Done(Host(call, l4t::kDisable, {}).nv());
    case ch::kPreempt: return Result::Done(Host(call, l4t::kPreempt, {}).nv());
    case ch::kForceReset: return ForceReset(call);
    case ch::kGetErrorInfo:
    case ch::kGetErrorNotification: return ErrorQuery(call);
    case ch::kSetPriority:
    case ch::kSetTimeslice: return Schedule(call);
    case ch::kEventIdControl:
    case ch::kSetUserData:
    case ch::kGetUserData:
    case ch::kFreeObjCtx: return Sentry(call);
    default:
      // The host1x calls (nvgpu's channel answers ENOTTY to them), the cycle stats,
      // SET_TIMEOUT_EX (no argument in the guest ABI).
      return NotTranslated(call);
  }
}

Result ChannelSession::Wait(Call& call) {
  // The host's WAIT would block this thread: the sentry parks it and polls the twin's host side
  // (memory_waits.h). Checks and answers as the simulated channel's.
  const auto a = ArgAs<ch::Wait>(call.arg);
  if (a.type > 1) return Result::Done(NvError::kBadParameter);
  std::shared_ptr<sim::NvmapObject> object = ctx_.nvmap().Resolve(Tgid(call), a.dmabuf_fd);
  if (!object) return Result::Done(NvError::kBadParameter);
  const bool semaphore = a.type == 1;
  if (semaphore ? (a.offset % 4 != 0 || !Inside(a.offset, 4, object->size()))
                : !Inside(a.offset, 16, object->size()))
    return Result::Done(NvError::kBadParameter);
  absl::StatusOr<uint32_t> twin = ctx_.twins().HandleOf(object);
  if (!twin.ok()) return Result::Done(NvError::kInvalidAddress);
  const MemoryWaitCondition c{*twin, a.offset, semaphore, a.payload, object, true};
  switch (ctx_.memory_waits().Check(c)) {
    case MemoryWaits::State::kMet: ctx_.PullGuestMemory(); return Result::Done(NvError::kSuccess);
    case MemoryWaits::State::kGone: return Result::Done(NvError::kInvalidAddress);
    case MemoryWaits::State::kNotYet: break;
  }
  if (a.timeout == 0) return Result::Done(NvError::kTimeout);
  constexpr uint32_t kNoTimeout = 0xFFFFFFFFu;
  const absl::Time deadline = a.timeout == kNoTimeout ? absl::InfiniteFuture()
                                                      : absl::Now() + absl::Milliseconds(a.timeout);
  std::shared_ptr<Continuation> parked = call.parker.Park();
  if (parked == nullptr) return Result::Done(NvError::kInsufficientMemory);  // parked_waits
  ctx_.memory_waits().Park(c, deadline, std::move(parked));
  return Result::Parked();
}

Result ChannelSession::SetNvmapFd(Call& call) {
  const int32_t fd = static_cast<int32_t>(ArgAs<ch::U32Arg>(call.arg).value);
  // The guest's fd must be one of its nvmap sessions (as simulated); the host gets the sentry's
  // own nvmap fd, whose objects are the guest's twins.
  if (call.caller != nullptr) {
    std::shared_ptr<DeviceBackend> b = call.caller->BackendOf(fd);
    if (dynamic_cast<sim::NvmapDevice*>(b.get()) == nullptr)
      return Result::Done(NvError::kBadParameter);
  }
  l4t::U32Arg h{static_cast<uint32_t>(ctx_.nvmap_fd())};
  if (HostCallResult r = HostOf(call, l4t::kSetNvmapFd, h); r.err != 0) return Result::Done(r.nv());
  absl::MutexLock l(&mu_);
  nvmap_fd_set_ = true;
  return Result::Done(NvError::kSuccess);
}

Result ChannelSession::SetTimeout(Call& call) {
  l4t::U32Arg h{ArgAs<ch::U32Arg>(call.arg).value};
  if (HostCallResult r = HostOf(call, l4t::kSetTimeout, h); r.err != 0) return Result::Done(r.nv());
  absl::MutexLock l(&mu_);
  timeout_ = h.value;
  return Result::Done(NvError::kSuccess);
}

Result ChannelSession::AllocGpfifo(Call& call) {
  const bool ex = call.desc.code != ch::kAllocGpfifo;
  const uint32_t n = ex ? ArgAs<ch::AllocGpfifoEx>(call.arg).num_entries
                        : ArgAs<ch::AllocGpfifo>(call.arg).num_entries;
  l4t::AllocGpfifoEx h;
  if (NvError e = AllocGpfifoToHost(n, ex, &h); e != NvError::kSuccess) return Result::Done(e);
  // ALLOC_GPFIFO_EX for every form: r32.7.4's plain ALLOC_GPFIFO makes a ring of three times the
  // entries, which its hardware setup then takes for the power of two below (L4T-CH-6).
  if (HostCallResult r = HostOf(call, l4t::kAllocGpfifoEx, h); r.err != 0)
    return Result::Done(r.nv());
  {
    absl::MutexLock l(&mu_);
    ring_entries_ = h.num_entries;
  }
  if (NvError e = ProbeSyncpoint(call); e != NvError::kSuccess) return Result::Done(e);
  if (ex) {
    // The channel's syncpoint and the guest's max of it, as the simulated channel answers.
    const uint32_t id = syncpoint().value_or(0);
    ArgAs<ch::AllocGpfifoEx>(call.arg).fence = {id, ctx_.syncpoints().ReadMax(id)};
  }
  return Result::Done(NvError::kSuccess);
}

NvError ChannelSession::ProbeSyncpoint(const Call& call) {
  // r32.7.4 makes the channel's syncpoint with its gpfifo and names it only in a submission's
  // fence (L4T-CH-15): an empty job with FENCE_GET names it now, and counts in the kernel's books
  // as any job does. The guest's count of it starts here (guest_syncpoints.h).
  l4t::GpfifoEntry none{};
  l4t::SubmitGpfifo h{reinterpret_cast<uint64_t>(&none), 0, ch::kFenceGet, {}};
  if (HostCallResult r = HostOf(call, l4t::kSubmitGpfifo, h); r.err != 0) return r.nv();
  if (!sim::Syncpoints::ValidId(h.fence.id) || h.fence.id == 0) {
    NVS_LOG_LIMITED(spdlog::level::warn, "host backend: the host's channel names syncpoint {}",
                    h.fence.id);
    return NvError::kNotSupported;
  }
  {
    absl::MutexLock l(&fault_watch_->mu);
    fault_watch_->channel_fd = host_fd();
    fault_watch_->events = &events_;
    fault_watch_->signalled = false;
  }
  ctx_.kept().Keep(h.fence.id, [w = std::weak_ptr<HostFaultWatch>(fault_watch_)] {
    if (std::shared_ptr<HostFaultWatch> watch = w.lock()) watch->Landed();
  });
  // Kept before it is named: LearnSyncpoint starts the poll on it, and a poll that read it before
  // Keep took the host's value, the probe's increment included, as the guest's count (a channel
  // then started at 1 or 2 instead of 0, by the threads' timing).
  LearnSyncpoint(h.fence.id);
  return NvError::kSuccess;
}

Result ChannelSession::AllocObjCtx(Call& call) {
  auto& a = ArgAs<ch::AllocObjCtx>(call.arg);
  if (abi::FindGpuClass(a.class_num) == nullptr) return Result::Done(NvError::kBadParameter);
  absl::MutexLock l(&mu_);
  if (space_ == nullptr) return Result::Done(NvError::kInvalidState);
  if (obj_class_ != 0) return Result::Done(NvError::kAlreadyAllocated);  // one per channel
  // The guest ABI's flags are not L4T's preemption-mode bits: none are passed.
  l4t::AllocObjCtx h{a.class_num, 0, 0};
  if (HostCallResult r = HostOf(call, l4t::kAllocObjCtx, h); r.err != 0)
    return Result::Done(r.nv());
  obj_class_ = a.class_num;
  a.obj_id = a.class_num;
  return Result::Done(NvError::kSuccess);
}

void ChannelSession::LearnSyncpoint(uint32_t id) {
  if (!sim::Syncpoints::ValidId(id)) {
    NVS_LOG_LIMITED(spdlog::level::warn,
                    "host backend: the host's fence names syncpoint {}, beyond the mirror's {}", id,
                    sim::kNumSyncpoints);
    return;
  }
  {
    absl::MutexLock l(&mu_);
    if (syncpoint_ && *syncpoint_ != id) {
      ctx_.kept().Release(*syncpoint_);
      ctx_.DisownSyncpoint(*syncpoint_);
    }
    syncpoint_ = id;
  }
  ctx_.OwnSyncpoint(id);
  ctx_.mirror().Expect(id);
}

void ChannelSession::Stop(sim::ChannelError e) {
  e.timestamp_ns = RealtimeNs();
  e.monotonic_ns = sim::GpuTimeNs();
  std::shared_ptr<sim::NvmapObject> notifier;
  uint64_t offset;
  {
    absl::MutexLock l(&mu_);
    notifier = notifier_.lock();
    offset = notifier_offset_;
  }
  NVS_LOG_LIMITED(spdlog::level::warn, "host backend: channel stopped by the sentry: {}", e.what);
  // The notifier first: a client woken by the event then sees why (as simulated). The guest's
  // copy only: the host's channel has not failed.
  if (notifier) {
    const sim::NotifierRecord rec{e.timestamp_ns, e.notifier_code, 0, sim::kNotifierStatusError};
    notifier->Write(offset, {reinterpret_cast<const uint8_t*>(&rec), sizeof rec});
  }
  {
    absl::MutexLock l(&mu_);
    stopped_ = std::move(e);
  }
  events_.Signal(sim::kEventErrorNotifier);
}

Result ChannelSession::Submit(Call& call) {
  auto& g = ArgAs<ch::SubmitGpfifoHeader>(call.arg);
  absl::MutexLock submitting(&submit_mu_);
  std::shared_ptr<HostAddressSpace> space;
  {
    absl::MutexLock l(&mu_);
    if (stopped_) return Result::Done(NvError::kTimeout);  // until FORCE_RESET, as simulated
    space = space_;
    if (reset_check_) {
      check_.Reset();
      // The host channel that fetched from the copy is gone, and its jobs with it.
      if (copy_ != nullptr) copy_->Reset();
    }
    reset_check_ = false;
  }
  std::span<ch::GpfifoEntry> entries;
  if (!call.arrays.empty()) entries = call.Array<ch::GpfifoEntry>(0);
  if (entries.size() != g.num_entries) return Result::Done(NvError::kCountMismatch);
  l4t::SubmitGpfifo h{};
  if (NvError e = SubmitFlagsToHost(g.flags, false, &h.flags); e != NvError::kSuccess)
    return Result::Done(e);
  bool later = false;
  if (NvError e = HostFenceWait(g.fence, &h, &later); e != NvError::kSuccess)
    return Result::Done(e);
  // No mapping of the space goes from the check until the host holds the job's buffers.
  HostAddressSpace::SubmitHold no_unmap(space.get());
  // Everything the GPU may read must be on the host before the host sees the job: the
  // pushbuffers first (the check reads what the host got), then what the check finds the words
  // read, or every twin when it cannot say. While a job on the host may wait on memory (a
  // semaphore acquire), this job's writes may release it, and what that job reads next is in no
  // footprint of this one: every twin then goes first, as before the footprints.
  const bool everything = ctx_.gpu_writes().AnyWaits();
  if (NvError e =
          everything ? ctx_.PushGuestMemory() : PushPlanned(FetchTargets(space.get(), entries));
      e != NvError::kSuccess)
    return Result::Done(e);
  // Room in the private copy for what the host will fetch, before the check: a submission the
  // copy cannot take now leaves the check's state as it was.
  uint64_t words = 0;
  for (const ch::GpfifoEntry& e : entries) words += sim::pb::EntryLength(e.entry1);
  std::optional<uint64_t> span;  // the copy's, until the host or a held submission takes it
  if (space != nullptr && words != 0) {
    uint64_t s = 0;
    if (NvError e = ReserveCopy(call, space, words, &s); e != NvError::kSuccess)
      return Result::Done(e);
    span = s;
  }
  absl::Cleanup give_back = [&] {
    if (span) copy_->Abandon(*span);
  };
  // What the host will run, checked after the push (the agreed copies are what it got).
  std::vector<uint32_t> checked;
  SubmissionVerdict verdict = CheckSubmission(space.get(), ctx_.twins(), entries, check_, &checked);
  if (verdict.refused) {
    Stop(std::move(*verdict.refused));
    // A fence already reached, as the simulated channel releases a stopped channel's fences.
    const std::optional<uint32_t> id = syncpoint();
    if (id) ctx_.mirror().Refresh(*id).IgnoreError();
    g.fence = {id.value_or(0), id ? ctx_.syncpoints().Read(*id) : 0};
    g.flags = 0;
    return Result::Done(NvError::kSuccess);
  }
  if (NvError e = everything ? NvError::kSuccess
                             : PushPlanned(GpuReadTargets(space.get(), check_.footprint()));
      e != NvError::kSuccess) {
    check_.Rollback();
    return Result::Done(e);
  }
  // The entries the host gets fetch from the private copy; the guest's own stay as they were
  // (the argument goes back to it).
  std::vector<ch::GpfifoEntry> host_entries(entries.begin(), entries.end());
  if (span) {
    if (NvError e = copy_->Fill(*span, checked, entries, &host_entries); e != NvError::kSuccess) {
      span.reset();  // Fill gave the span back
      check_.Rollback();
      return Result::Done(e);
    }
  }
  // Where its words may make the host's GPU write, for the pulls until the job is done. Such a
  // job keeps the wait for idle before its fence (SUPPRESS_WFI off): its fence then means its
  // writes have landed, which is when GpuWrites may stop pulling them.
  std::optional<std::vector<WriteTarget>> targets =
      GpuWriteTargets(space.get(), check_.footprint());
  uint64_t writes = 0;
  if (!targets)
    writes = ctx_.gpu_writes().AddWritingAnything(this, check_.footprint().waits);
  else if (!targets->empty() || check_.footprint().waits)
    writes = ctx_.gpu_writes().Add(this, *std::move(targets), check_.footprint().waits);
  if (!check_.footprint().empty()) h.flags &= ~ch::kSuppressWfi;
  return SubmitChecked(call, host_entries, span, h, later, writes);
}

NvError ChannelSession::PushPlanned(const std::optional<std::vector<WriteTarget>>& targets) {
  if (!targets) return ctx_.PushGuestMemory();
  if (targets->empty()) return NvError::kSuccess;
  const SyncPlan plan = PlanOf(*targets);
  return ctx_.PushGuestMemory(&plan);
}

Result ChannelSession::SubmitChecked(Call& call, std::span<const ch::GpfifoEntry> entries,
                                     std::optional<uint64_t>& span, l4t::SubmitGpfifo h, bool later,
                                     uint64_t writes) {
  // A submission that does not reach the host (nor waits to): the record forgets it, and the
  // check's state goes back to before its words.
  bool reaches = false;
  absl::Cleanup never_ran = [&] {
    if (reaches) return;
    if (writes != 0) ctx_.gpu_writes().Dropped(writes);
    check_.Rollback();
  };
  auto& g = ArgAs<ch::SubmitGpfifoHeader>(call.arg);
  const uint32_t guest_flags = g.flags, promised_value = g.fence.value;
  const std::optional<uint32_t> own = syncpoint();
  uint64_t stream = 0;
  for (const auto& [id, n] : check_.increments()) {
    if (own && id == *own && ctx_.kept().Kept(id))
      stream += n;
    else
      ctx_.CountGuestIncrements(id, n);  // they reach the host: a fence they reach frees no span
  }
  // The guest's own increments never reach the host (guest_syncpoints.h): the words are cut out
  // of the entries, and they land with the kernel's increment after the job.
  if (!check_.cuttable() || check_.waits_on_own()) {
    NVS_LOG_LIMITED(spdlog::level::warn,
                    "host backend: a submission {} the channel's own syncpoint; NotSupported",
                    check_.waits_on_own() ? "waits in its pushbuffer on"
                                          : "increments, in a command shared with other methods "
                                            "or by a macro,");
    return Result::Done(NvError::kNotSupported);
  }
  std::vector<ch::GpfifoEntry> sent = CutEntries(entries, check_.cuts());
  if (stream != 0) h.flags &= ~ch::kSuppressWfi;  // they land after the job's work is done
  const GuestFenceCount n = GuestFenceCountOf(guest_flags, promised_value, stream);
  if (later || !deferred_.empty()) {
    // Held back (behind the first held one, in order) until a job on the host makes its wait's
    // value: a SYNCPT_INCR of the guest's, or a later submission of another channel, may.
    if (!own || !ctx_.kept().Kept(*own)) return Result::Done(NvError::kNotSupported);
    deferred_.push_back({std::move(sent), h, span, g.fence, *own, writes});
    span.reset();  // the held submission's now
    reaches = true;
    g.fence = {*own, ctx_.kept().Submitted(*own, std::nullopt, n.made, n.promised)};
    g.flags = 0;
    ctx_.mirror().Expect(*own);  // the poll sends it
    return Result::Done(NvError::kSuccess);
  }
  static_assert(sizeof(ch::GpfifoEntry) == sizeof(l4t::GpfifoEntry));
  h.gpfifo = reinterpret_cast<uint64_t>(sent.data());  // the sentry's entries, into the copy
  h.num_entries = static_cast<uint32_t>(sent.size());
  if (HostCallResult r = HostOf(call, l4t::kSubmitGpfifo, h); r.err != 0)
    return Result::Done(r.nv());
  if (span) copy_->Fence(*span, h.fence.id, h.fence.value);  // reused once the host is past it
  span.reset();
  reaches = true;
  if (writes != 0) ctx_.gpu_writes().Fenced(writes, h.fence.id, h.fence.value);
  g.flags = 0;  // detailed_error
  if (own && h.fence.id == *own && ctx_.kept().Kept(*own)) {
    g.fence = {*own, ctx_.kept().Submitted(*own, h.fence.value, n.made, n.promised)};
    ctx_.mirror().Expect(*own);
  } else {
    g.fence = {h.fence.id, h.fence.value};
    LearnSyncpoint(h.fence.id);
  }
  return Result::Done(NvError::kSuccess);
}

NvError ChannelSession::ReserveCopy(const Call& call,
                                    const std::shared_ptr<HostAddressSpace>& space, uint64_t words,
                                    uint64_t* span) {
  if (copy_ == nullptr) {
    NvError err;
    copy_ = PushbufferCopy::Make(ctx_.host_nvmap(), space, ctx_.options().budget,
                                 call.caller ? call.caller->tid() : 0, &err);
    if (copy_ == nullptr) return err;
  }
  return copy_->Reserve(
      words,
      [this](uint32_t id, uint32_t value, bool ask_host) {
        return ctx_.FencePassed(id, value, ask_host);
      },
      span);
}

NvError ChannelSession::HostFenceWait(const ch::Fence& f, l4t::SubmitGpfifo* h, bool* later) {
  if (!(h->flags & ch::kFenceWait)) return NvError::kSuccess;
  if (!sim::Syncpoints::ValidId(f.id)) return NvError::kBadParameter;
  if (!ctx_.kept().Kept(f.id)) {  // a host syncpoint the guest reads as the host's
    h->fence = {f.id, f.value};
    return NvError::kSuccess;
  }
  // A guest count: the host value of the job that makes it.
  ctx_.mirror().Refresh(f.id).IgnoreError();
  const GuestSyncpoints::HostWait w = ctx_.kept().WaitFor(f.id, f.value);
  if (w.reached) {
    h->flags &= ~ch::kFenceWait;
  } else if (w.at) {
    h->fence = {f.id, *w.at};
  } else {
    *later = true;
  }
  return NvError::kSuccess;
}

void ChannelSession::FlushDeferred() {
  // Not when a submission of this channel is under way (perhaps on this thread, whose mirror
  // refresh brought us here): the next poll flushes again.
  if (!submit_mu_.TryLock()) return;
  absl::Cleanup unlock = [this] { submit_mu_.Unlock(); };
  bool pushed = false;
  // Once the host refuses one, the ones held behind it never go: their words were checked
  // against the registers the refused one would have left, which the host does not hold. The
  // channel stops (FORCE_RESET starts the check over).
  int refused = 0;
  while (!deferred_.empty()) {
    Deferred& d = deferred_.front();
    HostCallResult r;
    r.err = refused;
    if (refused == 0) {
      if (d.h.flags & ch::kFenceWait) {
        bool later = false;
        d.h.flags |= ch::kFenceWait;
        HostFenceWait(d.wait, &d.h, &later);
        if (later) return;
      }
      // What the guest's CPU wrote since these were held reaches the host before they start, as
      // their GPU would see it.
      if (!pushed) ctx_.PushGuestMemory();
      pushed = true;
      d.h.gpfifo = reinterpret_cast<uint64_t>(d.sent.data());
      d.h.num_entries = static_cast<uint32_t>(d.sent.size());
      r = HostIoctlOf(host_fd(), abi::l4t::L4tNode::kNvhostGpu, l4t::kSubmitGpfifo, d.h,
                      ctx_.note());
      refused = r.err;
    }
    if (d.writes != 0) {  // a job that ran is done at its fence, whichever syncpoint it names
      if (r.err == 0)
        ctx_.gpu_writes().Fenced(d.writes, d.h.fence.id, d.h.fence.value);
      else
        ctx_.gpu_writes().Dropped(d.writes);
    }
    if (r.err == 0 && d.h.fence.id == d.own) {
      if (d.span) copy_->Fence(*d.span, d.h.fence.id, d.h.fence.value);
      ctx_.kept().Resolve(d.own, d.h.fence.value);
    } else {
      // Never ran: its guest increments land at once (as a stopped simulated channel's fences).
      NVS_LOG_LIMITED(spdlog::level::warn,
                      "host backend: a submission held back for its fence failed on the host: {}",
                      r.err == 0 ? "another syncpoint's fence" : strerror(r.err));
      if (d.span) copy_->Abandon(*d.span);
      ctx_.kept().Resolve(d.own, ctx_.kept().LastHost(d.own).value_or(0));
    }
    ctx_.mirror().Expect(d.own);
    deferred_.pop_front();
  }
  if (refused != 0)
    Stop(ErrorOfRefusal(
        {0, 0, 0, fmt::format("the host refused a held submission ({})", strerror(refused))}));
}

Result ChannelSession::SetErrorNotifier(Call& call) {
  const auto a = ArgAs<ch::SetErrorNotifier>(call.arg);
  if (a.mem == 0) {
    // Disabled: r32.7.4 cannot turn a notifier off (`mem` 0 is EINVAL: L4T-CH-12), so the host's
    // stays on the twin, which the sentry no longer reads.
    absl::MutexLock l(&mu_);
    notifier_.reset();
    ctx_.gpu_writes().SetNotifier(this, std::nullopt);  // what the host writes there stays there
    return Result::Done(NvError::kSuccess);
  }
  std::shared_ptr<sim::NvmapObject> obj = ctx_.nvmap().Resolve(Tgid(call), a.mem);
  if (obj == nullptr) {
    // Not a handle of the caller (libnx passes 1): enabled without memory, the nvdrv model where
    // the client asks with GET_ERROR_NOTIFICATION, as simulated. The host needs memory: nothing
    // for it.
    absl::MutexLock l(&mu_);
    notifier_.reset();
    ctx_.gpu_writes().SetNotifier(this, std::nullopt);  // what the host writes there stays there
    return Result::Done(NvError::kSuccess);
  }
  if (!Inside(a.offset, sizeof(sim::NotifierRecord), obj->size()))
    return Result::Done(NvError::kBadParameter);
  // Cleared when armed, as Linux and the simulator do (the host clears its twin's copy).
  const sim::NotifierRecord zero{};
  if (!obj->Write(a.offset, {reinterpret_cast<const uint8_t*>(&zero), sizeof zero}))
    return Result::Done(NvError::kBadParameter);
  uint32_t twin = 0;
  if (NvError e = TwinHandle(ctx_.twins(), obj, &twin); e != NvError::kSuccess)
    return Result::Done(e);
  l4t::SetErrorNotifier h{a.offset, sizeof(sim::NotifierRecord), twin, 0};
  if (HostCallResult r = HostOf(call, l4t::kSetErrorNotifier, h); r.err != 0)
    return Result::Done(r.nv());
  // The host's kernel writes the record whenever the channel fails: every pull reads it.
  ctx_.gpu_writes().SetNotifier(this, WriteTarget{obj, a.offset, sizeof(sim::NotifierRecord)});
  absl::MutexLock l(&mu_);
  notifier_ = std::move(obj);
  notifier_offset_ = a.offset;
  return Result::Done(NvError::kSuccess);
}

NvError ChannelSession::HostError(const Call& call, HostChannelError* e) {
  l4t::U32Arg t{};
  HostCallResult r = HostOf(call, l4t::kGetTimedout, t);
  // A host without GET_TIMEDOUT still writes the notifier: ENOTTY leaves the record to say it.
  if (r.err != 0 && r.err != ENOTTY) return r.nv();
  std::shared_ptr<sim::NvmapObject> obj;
  uint64_t offset;
  {
    absl::MutexLock l(&mu_);
    obj = notifier_.lock();
    offset = notifier_offset_;
  }
  // The host's own copy of the record: the guest's reaches it only at the next pull, and a failed
  // channel's syncpoint, which would cause one, does not move.
  std::optional<sim::NotifierRecord> record;
  uint32_t twin = 0;
  if (obj != nullptr && TwinHandle(ctx_.twins(), obj, &twin) == NvError::kSuccess) {
    sim::NotifierRecord rec;
    L4tNvmap host_nvmap(ctx_.nvmap_fd());
    if (host_nvmap.Read(twin, offset, {reinterpret_cast<uint8_t*>(&rec), sizeof rec}).ok())
      record = rec;
  }
  *e = ChannelErrorOf(r.err == 0 && t.value != 0, record);
  // What the host wrote reaches the guest's copy now, as the simulated channel writes it at once
  // (the same bytes a later pull brings).
  if (record && record->status == sim::kNotifierStatusError)
    obj->Write(offset, {reinterpret_cast<const uint8_t*>(&*record), sizeof *record});
  // The host's channel events are not seen: the error event fires when the sentry learns of it.
  if (e->failed) events_.Signal(sim::kEventErrorNotifier);
  return NvError::kSuccess;
}

Result ChannelSession::ErrorQuery(Call& call) {
  {
    absl::MutexLock l(&mu_);
    if (stopped_) {  // the sentry's own stop, reported as the simulated channel reports it
      if (call.desc.code == ch::kGetErrorInfo)
        ArgAs<ch::ErrorInfo>(call.arg) = sim::ErrorInfoOf(*stopped_);
      else
        ArgAs<ch::ErrorNotification>(call.arg) = sim::ErrorNotificationOf(*stopped_);
      return Result::Done(NvError::kSuccess);
    }
  }
  HostChannelError e;
  if (NvError err = HostError(call, &e); err != NvError::kSuccess) return Result::Done(err);
  if (call.desc.code == ch::kGetErrorInfo)
    ArgAs<ch::ErrorInfo>(call.arg) = ErrorInfoOf(e);
  else
    ArgAs<ch::ErrorNotification>(call.arg) =
        ErrorNotificationOf(e, sim::CpuTicksFromNs(sim::GpuTimeNs()));
  return Result::Done(NvError::kSuccess);
}

Result ChannelSession::Sentry(Call& call) {
  absl::MutexLock l(&mu_);
  switch (call.desc.code) {
    case ch::kEventIdControl: {
      const auto a = ArgAs<ch::EventIdControl>(call.arg);
      if (a.id < sim::kEventSmBreakpoint || a.id > sim::kEventErrorNotifier || a.cmd > 2)
        return Result::Done(NvError::kBadParameter);
      if (a.cmd == 2) events_.Clear(a.id);
      return Result::Done(NvError::kSuccess);
    }
    case ch::kSetUserData:
      user_data_ = ArgAs<ch::UserData>(call.arg).data;
      return Result::Done(NvError::kSuccess);
    case ch::kGetUserData:
      ArgAs<ch::UserData>(call.arg).data = user_data_;
      return Result::Done(NvError::kSuccess);
    default:  // FREE_OBJ_CTX: NotSupported in Switchbrew, as simulated
      return Result::Done(NvError::kNotSupported);
  }
}

}  // namespace nvsentry::hostshim::host
