#include "hostshim/sim/engines/channel_engine.h"

#include <time.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "abi/gpu_classes.h"
#include "hostshim/rate_limited_log.h"
#include "hostshim/sim/engines/gpu_clock.h"
#include "spdlog/spdlog.h"

namespace nvsentry::hostshim::sim {
namespace {

// A channel runs at most this many steps or this long before it lets other channels have the
// thread (the host's timeslice, roughly).
constexpr int kSliceSteps = 64;
constexpr absl::Duration kSliceTime = absl::Milliseconds(2);
// A semaphore acquire that is not yet satisfied is retried after 1 ms, backing off to 8 ms while
// nothing else happens on the channel (the memory may be written by the CPU or another channel,
// which no event announces).
constexpr absl::Duration kFirstRetry = absl::Milliseconds(1);
constexpr absl::Duration kMaxRetry = absl::Milliseconds(8);
// Parked WAITs are polled every millisecond; whether their guest thread still waits is asked
// every 64 polls (that costs a system call).
constexpr absl::Duration kPollPeriod = absl::Milliseconds(1);
constexpr uint64_t kAbandonCheckPolls = 64;
constexpr size_t kMaxParkedWaits = 64;

// The error notifier's timestamp is wall-clock time (the Linux layout), not the GPU's clock.
uint64_t RealtimeNs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(ts.tv_nsec);
}

// The Linux driver's GM20B fence increment: optional WFI, SYNCPOINTA (payload ignored), then
// SYNCPOINTB INCR twice (a hardware workaround; the fence moves by 2).
std::vector<uint32_t> IncrementWords(uint32_t id, bool wfi) {
  std::vector<uint32_t> w;
  if (wfi) w.insert(w.end(), {0x2001001Eu, 0u});
  w.insert(w.end(), {0x2001001Cu, 0u, 0x2001001Du, (id << 8) | 1u, 0x2001001Du, (id << 8) | 1u});
  return w;
}

}  // namespace

class ChannelEngine::Requeue : public SyncpointWaiter {
 public:
  Requeue(std::weak_ptr<ChannelEngine> engine, uint64_t epoch)
      : engine_(std::move(engine)), epoch_(epoch) {}
  void Reached(uint32_t) override {
    if (auto e = engine_.lock()) e->Unblock(epoch_);
  }
  void TimedOut() override { Reached(0); }
  // A waiter of dropped work (reset, fault, close) is not needed any more.
  bool Abandoned() override {
    auto e = engine_.lock();
    return !e || e->epoch() != epoch_;
  }

 private:
  std::weak_ptr<ChannelEngine> engine_;
  uint64_t epoch_;
};

bool ChannelEngine::BoundMemory::Read(uint64_t va, std::span<uint8_t> dst, MmuFault* fault) {
  if (AddressSpace* a = as.load(std::memory_order_acquire)) return a->Read(va, dst, fault);
  *fault = {MmuFault::Kind::kUnmapped, va, false};
  return false;
}

bool ChannelEngine::BoundMemory::ReadMany(std::span<const GpuRead> reads) {
  if (AddressSpace* a = as.load(std::memory_order_acquire)) return a->ReadMany(reads);
  return false;
}

bool ChannelEngine::BoundMemory::Write(uint64_t va, std::span<const uint8_t> src, MmuFault* fault) {
  writes.fetch_add(1, std::memory_order_relaxed);
  if (AddressSpace* a = as.load(std::memory_order_acquire)) return a->Write(va, src, fault);
  *fault = {MmuFault::Kind::kUnmapped, va, true};
  return false;
}

ChannelEngine::ChannelEngine(const Deps& deps, uint32_t syncpoint_id)
    : syncpoints_(deps.syncpoints),
      runlist_(deps.runlist),
      budget_(deps.budget),
      syncpoint_id_(syncpoint_id),
      clock_(deps.gpu_time_ns ? deps.gpu_time_ns : GpuTimeNs),
      events_(deps.budget),
      retry_delay_(kFirstRetry) {
  ChannelEnv env;
  env.memory = &memory_;
  env.syncpoints = &syncpoints_;
  env.syncpoint_id = syncpoint_id_;
  // Non-stall interrupts wake the Linux driver's WAITs; ours are polled, so nothing to do but
  // the hook (SetNonstallHook).
  env.nonstall_interrupt = [this] {
    std::function<void()> hook;
    {
      absl::MutexLock l(&hook_mu_);
      hook = nonstall_hook_;
    }
    if (hook) hook();
  };
  env.gpu_time_ns = clock_;
  env.policy = deps.policy;
  env.object_class = &object_class_;
  cp_ = std::make_unique<CommandProcessor>(std::move(env));
}

void ChannelEngine::SetNonstallHook(std::function<void()> hook) {
  absl::MutexLock l(&hook_mu_);
  nonstall_hook_ = std::move(hook);
}

ChannelEngine::~ChannelEngine() {
  std::vector<ParkedWait> waits;
  {
    absl::MutexLock l(&mu_);
    waits.swap(waits_);
  }
  for (auto& w : waits) w.call->Finish(abi::NvError::kTimeout);
  // Fences of work that will never run must not hold anyone up; then the id is free again.
  syncpoints_.SetMinEqMax(syncpoint_id_);
  syncpoints_.Free(syncpoint_id_);
  {
    absl::MutexLock l(&mu_);
    for (const Job& j : jobs_) ReleaseQueued(j);
    jobs_.clear();
  }
  if (budget_) budget_->Release(BudgetKind::kChannels);
}

void ChannelEngine::ReleaseQueued(const Job& j) {
  if (budget_ && j.charged != 0) budget_->Release(BudgetKind::kQueuedBytes, j.charged);
}

abi::NvError ChannelEngine::AllocRing(uint32_t entries) {
  absl::MutexLock l(&mu_);
  if (ring_size_ != 0) return abi::NvError::kAlreadyAllocated;
  ring_size_ = entries;
  return abi::NvError::kSuccess;
}

uint32_t ChannelEngine::ring_size() const {
  absl::MutexLock l(&mu_);
  return ring_size_;
}

abi::NvError ChannelEngine::BindAddressSpace(std::shared_ptr<AddressSpace> as) {
  if (!as) return abi::NvError::kBadParameter;
  absl::MutexLock l(&mu_);
  if (as_) return as_ == as ? abi::NvError::kSuccess : abi::NvError::kInvalidState;
  as_ = std::move(as);
  memory_.as.store(as_.get(), std::memory_order_release);
  return abi::NvError::kSuccess;
}

bool ChannelEngine::has_address_space() const {
  absl::MutexLock l(&mu_);
  return as_ != nullptr;
}

abi::NvError ChannelEngine::Submit(SubmitJob job, uint32_t promised, abi::channel::Fence* fence) {
  // Every job holds at least one ring slot (the Linux driver spends entries on its own wait and
  // increment commands too), so a stream of empty submits cannot grow the queue without bound.
  uint64_t cost = job.entries.size() + (job.wait ? 1 : 0) + (job.increment ? 1 : 0);
  cost = std::max<uint64_t>(cost, 1);
  {
    absl::MutexLock l(&mu_);
    if (failed_ || closed_) return abi::NvError::kTimeout;
    if (ring_size_ == 0) return abi::NvError::kInvalidState;
    if (cost > ring_size_) return abi::NvError::kInsufficientMemory;
    if (ring_used_ + cost > ring_size_) return abi::NvError::kBusy;
    const uint64_t bytes = sizeof(Job) + job.entries.capacity() * sizeof(job.entries[0]);
    if (budget_ && budget_->Charge(BudgetKind::kQueuedBytes, bytes) != abi::NvError::kSuccess)
      return abi::NvError::kBusy;
    ring_used_ += static_cast<uint32_t>(cost);
    // Under the lock, so that fences of one channel grow in submission order.
    fence->id = syncpoint_id_;
    fence->value = syncpoints_.IncrementMax(syncpoint_id_, promised);
    jobs_.push_back(Job{std::move(job), static_cast<uint32_t>(cost), 0, budget_ ? bytes : 0});
  }
  runlist_.Schedule(shared_from_this());
  return abi::NvError::kSuccess;
}

void ChannelEngine::EnableNotifier(std::shared_ptr<NvmapObject> object, uint64_t offset) {
  absl::MutexLock l(&mu_);
  notifier_enabled_ = true;
  notifier_ = std::move(object);
  notifier_offset_ = offset;
}

void ChannelEngine::DisableNotifier() {
  std::shared_ptr<NvmapObject> old;
  absl::MutexLock l(&mu_);
  notifier_enabled_ = false;
  old.swap(notifier_);
}

bool ChannelEngine::failed() const {
  absl::MutexLock l(&mu_);
  return failed_;
}

ChannelError ChannelEngine::error() const {
  absl::MutexLock l(&mu_);
  return error_;
}

void ChannelEngine::DropAllLocked() {
  for (const Job& j : jobs_) ReleaseQueued(j);
  jobs_.clear();
  ring_used_ = 0;
  ++epoch_;
  blocked_ = Block::kNone;
  retry_delay_ = kFirstRetry;
}

void ChannelEngine::Fail(ChannelError e) {
  std::shared_ptr<NvmapObject> notifier;
  uint64_t offset = 0;
  bool signal = false;
  std::vector<ParkedWait> waits;
  {
    absl::MutexLock l(&mu_);
    if (failed_ || closed_) return;
    failed_ = true;
    if (e.timestamp_ns == 0) e.timestamp_ns = RealtimeNs();
    if (e.monotonic_ns == 0) e.monotonic_ns = GpuTimeNs();
    DropAllLocked();
    if (notifier_enabled_) {
      notifier = notifier_;
      offset = notifier_offset_;
    }
    signal = (events_enabled_ >> kEventErrorNotifier) & 1;
    waits.swap(waits_);
  }
  NVS_LOG_LIMITED(spdlog::level::warn, "simulated GPU: channel (syncpoint {}) stopped: {}",
                  syncpoint_id_, e.what);
  // The notifier first: a client woken by the event or by its fence then sees why.
  if (notifier) {
    NotifierRecord rec{e.timestamp_ns, e.notifier_code, 0, kNotifierStatusError};
    if (!notifier->Write(offset, {reinterpret_cast<const uint8_t*>(&rec), sizeof rec}))
      NVS_LOG_LIMITED(spdlog::level::warn,
                      "simulated GPU: channel (syncpoint {}): error notifier memory is gone",
                      syncpoint_id_);
  }
  // GET_ERROR_NOTIFICATION/INFO report the error only once the notifier memory says the same.
  {
    absl::MutexLock l(&mu_);
    if (failed_) error_ = e;  // unless a FORCE_RESET came in between
  }
  if (signal) events_.Signal(kEventErrorNotifier);
  syncpoints_.SetMinEqMax(syncpoint_id_);
  for (auto& w : waits) w.call->Finish(abi::NvError::kTimeout);
}

void ChannelEngine::FailWith(ChannelErrorKind kind, uint32_t code, MmuFault fault,
                             std::string what) {
  ChannelError e;
  e.kind = kind;
  e.notifier_code = code;
  e.fault = fault;
  e.what = std::move(what);
  Fail(std::move(e));
}

void ChannelEngine::FailOnError(const RunResult& r) {
  ChannelError e;
  // A method an engine class refused is the graphics engine's error (its exception), as the
  // hardware reports an illegal method or class; the host class's and the pusher's own errors
  // are PBDMA errors.
  const bool engine = abi::FindGpuClass(r.error_class) != nullptr;
  e.kind = engine ? ChannelErrorKind::kGr : ChannelErrorKind::kPbdma;
  e.notifier_code = engine ? kNotifierGrException : kNotifierPbdmaError;
  e.method_class = r.error_class;
  e.method = r.error_method;
  e.method_value = r.error_value;
  e.what = r.error;
  Fail(std::move(e));
}

void ChannelEngine::Reset() {
  {
    absl::MutexLock l(&mu_);
    failed_ = false;
    error_ = ChannelError{};
    DropAllLocked();
    cp_reset_pending_ = true;  // the engine thread resets the processor before its next step
  }
  syncpoints_.SetMinEqMax(syncpoint_id_);
}

void ChannelEngine::SetEnabled(bool enabled) {
  {
    absl::MutexLock l(&mu_);
    enabled_ = enabled;
  }
  if (enabled) runlist_.Schedule(shared_from_this());
}

void ChannelEngine::Close() {
  std::vector<ParkedWait> waits;
  {
    absl::MutexLock l(&mu_);
    closed_ = true;
    DropAllLocked();
    waits.swap(waits_);
  }
  syncpoints_.SetMinEqMax(syncpoint_id_);
  for (auto& w : waits) w.call->Finish(abi::NvError::kTimeout);
}

void ChannelEngine::SetEventEnabled(uint32_t id, bool enabled) {
  absl::MutexLock l(&mu_);
  if (enabled)
    events_enabled_ |= 1u << id;
  else
    events_enabled_ &= ~(1u << id);
}

uint64_t ChannelEngine::entries_done() const {
  absl::MutexLock l(&mu_);
  return entries_done_;
}

size_t ChannelEngine::pending_jobs() const {
  absl::MutexLock l(&mu_);
  return jobs_.size();
}

uint64_t ChannelEngine::epoch() const {
  absl::MutexLock l(&mu_);
  return epoch_;
}

void ChannelEngine::Unblock(uint64_t epoch) {
  {
    absl::MutexLock l(&mu_);
    if (epoch != epoch_ || blocked_ == Block::kNone) return;
    blocked_ = Block::kNone;
  }
  runlist_.Schedule(shared_from_this());
}

bool ChannelEngine::NextStepLocked(Step* s) {
  while (!jobs_.empty()) {
    Job& j = jobs_.front();
    if (j.spec.wait) {
      s->what = Do::kWait;
      s->fence = j.spec.wait_fence;
      return true;
    }
    if (j.next < j.spec.entries.size()) {
      s->what = Do::kEntry;
      s->entry = j.spec.entries[j.next];
      return true;
    }
    if (j.spec.increment) {
      s->what = Do::kIncrement;
      s->wfi = j.spec.wfi;
      return true;
    }
    ring_used_ -= j.cost;
    ReleaseQueued(j);
    jobs_.pop_front();
  }
  return false;
}

void ChannelEngine::StepDone(uint64_t epoch, Do what) {
  absl::MutexLock l(&mu_);
  if (epoch != epoch_ || jobs_.empty()) return;
  Job& j = jobs_.front();
  switch (what) {
    case Do::kWait: j.spec.wait = false; break;
    case Do::kEntry:
      ++j.next;
      ++entries_done_;
      break;
    case Do::kIncrement: j.spec.increment = false; break;
    case Do::kResetCp: break;
  }
  retry_delay_ = kFirstRetry;
}

bool ChannelEngine::BlockOnSyncpoint(uint64_t epoch, uint32_t id, uint32_t thresh) {
  {
    absl::MutexLock l(&mu_);
    if (epoch != epoch_) return true;  // dropped meanwhile: stop here, the loop looks again
    // Set before registering: the waiter may fire before Wait returns.
    blocked_ = Block::kSyncpoint;
  }
  uint32_t value;
  auto start = syncpoints_.Wait(
      id, thresh, -1, [&] { return std::make_shared<Requeue>(weak_from_this(), epoch); }, &value);
  if (start == Syncpoints::WaitStart::kParked) return true;
  absl::MutexLock l(&mu_);
  if (epoch == epoch_) blocked_ = Block::kNone;
  return false;
}

void ChannelEngine::BlockOnSemaphore(uint64_t epoch) {
  absl::Duration delay;
  {
    absl::MutexLock l(&mu_);
    if (epoch != epoch_) return;
    blocked_ = Block::kSemaphore;
    delay = retry_delay_;
    retry_delay_ = std::min(retry_delay_ * 2, kMaxRetry);
  }
  runlist_.After(delay, [w = weak_from_this(), epoch] {
    if (auto e = w.lock()) e->Unblock(epoch);
  });
}

RunResult ChannelEngine::RunEntry(uint64_t epoch, const abi::channel::GpfifoEntry& entry) {
  std::span<const uint32_t> words;
  if (!batch_.Next(epoch, entry, &words)) {
    upcoming_.clear();
    {
      absl::MutexLock l(&mu_);
      // The rest of the front job: its entries run back to back unless one stops. (Not past
      // it: the next job may start with a fence wait, after which the guest may have written.)
      if (epoch == epoch_ && !jobs_.empty()) {
        const Job& j = jobs_.front();
        const size_t n = std::min(j.spec.entries.size() - j.next, PushbufferBatch::kMaxEntries);
        upcoming_.assign(j.spec.entries.begin() + j.next, j.spec.entries.begin() + j.next + n);
      }
    }
    batch_.Fill(&memory_, epoch, upcoming_);
    batch_.Next(epoch, entry, &words);
  }
  const uint64_t writes = memory_.writes.load(std::memory_order_relaxed);
  RunResult r = words.empty() ? cp_->Run(entry) : cp_->Run(entry, words);
  // Later segments are read again after the GPU wrote (it may have written them) or stopped.
  if (r.stop != RunResult::Stop::kDone ||
      memory_.writes.load(std::memory_order_relaxed) != writes) {
    batch_.Clear();
  }
  return r;
}

void ChannelEngine::Run() {
  const absl::Time slice_end = absl::Now() + kSliceTime;
  int steps = 0;
  bool yield = false;
  for (;;) {
    Step s;
    uint64_t epoch;
    {
      absl::MutexLock l(&mu_);
      epoch = epoch_;
      if (std::exchange(cp_reset_pending_, false)) {
        s.what = Do::kResetCp;
      } else if (closed_ || failed_ || !enabled_ || blocked_ != Block::kNone ||
                 !NextStepLocked(&s)) {
        break;
      } else if (steps >= kSliceSteps || absl::Now() >= slice_end) {
        yield = true;
        break;
      }
    }
    ++steps;
    switch (s.what) {
      case Do::kResetCp: cp_->Reset(); continue;
      case Do::kWait:
        if (BlockOnSyncpoint(epoch, s.fence.id, s.fence.value)) break;
        StepDone(epoch, Do::kWait);
        continue;
      case Do::kIncrement: {
        std::vector<uint32_t> words = IncrementWords(syncpoint_id_, s.wfi);
        RunResult r = cp_->RunWords(words);
        if (r.stop != RunResult::Stop::kDone) {
          r.error = "fence increment did not complete: " + r.error;
          FailOnError(r);
          break;
        }
        StepDone(epoch, Do::kIncrement);
        continue;
      }
      case Do::kEntry: {
        RunResult r = RunEntry(epoch, s.entry);
        switch (r.stop) {
          case RunResult::Stop::kDone: StepDone(epoch, Do::kEntry); continue;
          case RunResult::Stop::kWaitSyncpoint:
            if (!Syncpoints::ValidId(r.id)) {
              FailWith(ChannelErrorKind::kPbdma, kNotifierPbdmaError, {},
                       "syncpoint wait on invalid syncpoint " + std::to_string(r.id));
              break;
            }
            if (BlockOnSyncpoint(epoch, r.id, r.threshold)) break;
            continue;  // reached meanwhile: resume the same entry
          case RunResult::Stop::kWaitSemaphore: BlockOnSemaphore(epoch); break;
          case RunResult::Stop::kFault: {
            std::string what = std::string("MMU fault (") + MmuFaultKindName(r.fault.kind) +
                               ") on " + (r.fault.write ? "write" : "read") + " at GPU VA 0x";
            char va[24];
            snprintf(va, sizeof va, "%llx", static_cast<unsigned long long>(r.fault.va));
            FailWith(ChannelErrorKind::kMmu, kNotifierMmuFault, r.fault, what + va);
            break;
          }
          case RunResult::Stop::kError: FailOnError(r); break;
        }
        break;
      }
    }
    break;  // a `break` out of the switch: the channel is blocked, failed or dropped
  }
  // Whatever happens before the channel runs again (the CPU writing, say) comes before the
  // rest of its entries are read.
  batch_.Clear();
  if (yield) runlist_.Schedule(shared_from_this());
}

ChannelEngine::WaitState ChannelEngine::CheckWait(const WaitCondition& c) {
  if (!c.object) return WaitState::kGone;
  if (c.semaphore) {
    uint32_t v;
    if (!c.object->Read(c.offset, {reinterpret_cast<uint8_t*>(&v), sizeof v}))
      return WaitState::kGone;
    return v == c.payload ? WaitState::kMet : WaitState::kNotYet;
  }
  NotifierRecord rec;
  if (!c.object->Read(c.offset, {reinterpret_cast<uint8_t*>(&rec), sizeof rec}))
    return WaitState::kGone;
  if (rec.status != 0) return WaitState::kNotYet;
  // The Linux driver stamps the time into a notifier it found done.
  uint64_t now = RealtimeNs();
  c.object->Write(c.offset, {reinterpret_cast<const uint8_t*>(&now), sizeof now});
  return WaitState::kMet;
}

void ChannelEngine::ParkWait(WaitCondition c, std::shared_ptr<Continuation> call,
                             absl::Duration timeout) {
  abi::NvError refuse = abi::NvError::kSuccess;
  bool arm = false;
  {
    absl::MutexLock l(&mu_);
    if (failed_ || closed_) {
      refuse = abi::NvError::kTimeout;
    } else if (waits_.size() >= kMaxParkedWaits) {
      refuse = abi::NvError::kBusy;
    } else {
      absl::Time deadline =
          timeout == absl::InfiniteDuration() ? absl::InfiniteFuture() : absl::Now() + timeout;
      waits_.push_back(ParkedWait{std::move(c), call, deadline});
      arm = ArmPollLocked();
    }
  }
  if (refuse != abi::NvError::kSuccess) call->Finish(refuse);
  if (arm) StartPollTimer();
}

bool ChannelEngine::ArmPollLocked() {
  if (poll_armed_ || waits_.empty()) return false;
  poll_armed_ = true;
  return true;
}

void ChannelEngine::StartPollTimer() {
  runlist_.After(kPollPeriod, [w = weak_from_this()] {
    if (auto e = w.lock()) e->PollWaits();
  });
}

void ChannelEngine::PollWaits() {
  std::vector<ParkedWait> waits;
  bool ask_abandoned;
  {
    absl::MutexLock l(&mu_);
    poll_armed_ = false;
    waits.swap(waits_);
    ask_abandoned = ++polls_ % kAbandonCheckPolls == 0;
  }
  std::vector<std::pair<std::shared_ptr<Continuation>, abi::NvError>> done;
  std::vector<ParkedWait> keep;
  const absl::Time now = absl::Now();
  for (auto& w : waits) {
    switch (CheckWait(w.cond)) {
      case WaitState::kMet: done.emplace_back(w.call, abi::NvError::kSuccess); continue;
      case WaitState::kGone: done.emplace_back(w.call, abi::NvError::kInvalidAddress); continue;
      case WaitState::kNotYet: break;
    }
    if (now >= w.deadline) {
      done.emplace_back(w.call, abi::NvError::kTimeout);
    } else if (ask_abandoned && w.call->Abandoned()) {
      // Nobody to answer.
    } else {
      keep.push_back(std::move(w));
    }
  }
  bool arm = false;
  {
    absl::MutexLock l(&mu_);
    if (failed_ || closed_) {
      for (auto& w : keep) done.emplace_back(w.call, abi::NvError::kTimeout);
    } else {
      for (auto& w : keep) waits_.push_back(std::move(w));
      arm = ArmPollLocked();
    }
  }
  for (auto& [call, err] : done) call->Finish(err);
  if (arm) StartPollTimer();
}

abi::channel::ErrorInfo ErrorInfoOf(const ChannelError& e) {
  abi::channel::ErrorInfo a;
  std::memset(&a, 0, sizeof a);
  // Word 0 is Switchbrew's error kind, word 1 the notifier code. The rest as deko3d's error decoder
  // (Queue::checkError) reads it, clients over Switchbrew (docs/guest-abi.md has the layout):
  // - an MMU fault: the VA's high word, its low word, the access (2 a write, 1 a read), and the
  //   fault kind (MmuFault::Kind);
  // - a method the GPU refused: its byte offset, 0, its value, its class.
  constexpr uint32_t kErrorInfoRead = 1, kErrorInfoWrite = 2;
  a.error_info[0] = static_cast<uint32_t>(e.kind);
  if (e.kind == ChannelErrorKind::kNone) return a;
  a.error_info[1] = e.notifier_code;
  if (e.kind == ChannelErrorKind::kMmu) {
    a.error_info[2] = static_cast<uint32_t>(e.fault.va >> 32);
    a.error_info[3] = static_cast<uint32_t>(e.fault.va);
    a.error_info[4] = e.fault.write ? kErrorInfoWrite : kErrorInfoRead;
    a.error_info[5] = static_cast<uint32_t>(e.fault.kind);
  } else if (e.method_class != 0) {
    a.error_info[2] = e.method;
    a.error_info[4] = e.method_value;
    a.error_info[5] = e.method_class;
  }
  return a;
}

abi::channel::ErrorNotification ErrorNotificationOf(const ChannelError& e) {
  abi::channel::ErrorNotification a;
  std::memset(&a, 0, sizeof a);
  if (e.kind == ChannelErrorKind::kNone) return a;
  // The system tick (Switchbrew: armGetSystemTick) when the error happened.
  a.timestamp = CpuTicksFromNs(e.monotonic_ns);
  a.info32 = e.notifier_code;
  a.info16 = 0;
  a.status = kNotifierStatusError;
  return a;
}

}  // namespace nvsentry::hostshim::sim
