#include "hostshim/sim/engines/gpu_channel.h"

#include <bit>
#include <cstring>

#include "abi/device_events.h"
#include "abi/devices/channel.h"
#include "abi/gpu_classes.h"
#include "hostshim/sim/engines/gpu_clock.h"
#include "hostshim/sim/memory/nvmap_device.h"
#include "hostshim/unimplemented.h"

namespace nvsentry::hostshim::sim {
namespace ch = abi::channel;
using abi::NvError;

namespace {

constexpr uint32_t kMaxRingEntries = 1u << 16;
// SUBMIT_GPFIFO flag bit 8 (public emulators; libnx): the entries increment the channel's
// syncpoint fence.value times, so the fence moves by that much.
constexpr uint32_t kIncrementByValue = 1u << 8;
// WAIT's "no timeout" (Linux NVGPU_NO_TIMEOUT).
constexpr uint32_t kNoTimeout = 0xFFFFFFFFu;

// GET_ERROR_INFO's access word of an MMU fault: deko3d reads 2 as a write and anything else as
// a read.
// [offset, offset + len) inside an object of `size` bytes, without overflow.
bool Inside(uint64_t offset, uint64_t len, uint64_t size) {
  return len <= size && offset <= size - len;
}

}  // namespace

NvError GpuChannel::Create(const ChannelDeps& deps, std::unique_ptr<GpuChannel>* out) {
  if (deps.budget) {
    NvError err = deps.budget->Charge(BudgetKind::kChannels);
    if (err != NvError::kSuccess) return err;
  }
  uint32_t id = 0;
  NvError err = deps.syncpoints.Allocate(&id);
  if (err != NvError::kSuccess) {
    if (deps.budget) deps.budget->Release(BudgetKind::kChannels);
    return err;
  }
  // From here the engine owns the syncpoint and the charge.
  auto engine = std::make_shared<ChannelEngine>(
      ChannelEngine::Deps{deps.syncpoints, deps.runlist, deps.budget, deps.gpu_time_ns,
                          deps.policy},
      id);
  out->reset(new GpuChannel(deps.nvmap, deps.syncpoints, std::move(engine)));
  return NvError::kSuccess;
}

GpuChannel::~GpuChannel() { engine_->Close(); }

NvError GpuChannel::BindAddressSpace(std::shared_ptr<AddressSpace> as) {
  return engine_->BindAddressSpace(std::move(as));
}

NvError GpuChannel::QueryEvent(uint32_t id, int* eventfd) {
  if (NvError v = abi::EventIdVerdict(abi::Device(abi::DeviceId::kNvhostGpu), id);
      v != NvError::kSuccess)
    return v;
  int fd = engine_->EventFd(id);
  if (fd < 0) return NvError::kInsufficientMemory;
  *eventfd = fd;
  return NvError::kSuccess;
}

pid_t GpuChannel::CallerTgid(Call& call) const { return call.caller ? call.caller->tgid() : -1; }

Result GpuChannel::Ioctl(Call& call) {
  switch (call.desc.code) {
    case ch::kSetNvmapFd: return SetNvmapFd(call);
    case ch::kSetTimeout: {
      absl::MutexLock l(&mu_);
      timeout_ms_ = ArgAs<ch::U32Arg>(call.arg).value;
      return Result::Done(NvError::kSuccess);
    }
    case ch::kAllocGpfifo:
    case ch::kAllocGpfifoEx:
    case ch::kAllocGpfifoEx2: return AllocGpfifo(call);
    case ch::kAllocObjCtx: return AllocObjCtx(call);
    case ch::kSubmitGpfifo:
    case ch::kSubmitGpfifoRetry:
    case ch::kSubmitGpfifo2:
    case ch::kSubmitGpfifo2Retry: return Submit(call);
    case ch::kWait: return Wait(call);
    case ch::kSetErrorNotifier: return SetErrorNotifier(call);
    case ch::kSetPriority: {
      uint32_t p = ArgAs<ch::U32Arg>(call.arg).value;
      // Low, medium, high (Switchbrew); the Linux driver refuses anything else.
      if (p != 0x32 && p != 0x64 && p != 0x96) return Result::Done(NvError::kBadParameter);
      absl::MutexLock l(&mu_);
      priority_ = p;
      return Result::Done(NvError::kSuccess);
    }
    case ch::kSetTimeslice: {
      uint32_t us = ArgAs<ch::U32Arg>(call.arg).value;
      // The Linux driver's GM20B bounds, in microseconds.
      if (us < 1000 || us > 50000) return Result::Done(NvError::kBadParameter);
      absl::MutexLock l(&mu_);
      timeslice_us_ = us;
      return Result::Done(NvError::kSuccess);
    }
    case ch::kEnable: engine_->SetEnabled(true); return Result::Done(NvError::kSuccess);
    case ch::kDisable: engine_->SetEnabled(false); return Result::Done(NvError::kSuccess);
    case ch::kPreempt:
      // The engine threads switch channels between entries; there is nothing to take off.
      return Result::Done(NvError::kSuccess);
    case ch::kForceReset: engine_->Reset(); return Result::Done(NvError::kSuccess);
    case ch::kEventIdControl: return EventIdControl(call);
    case ch::kGetErrorInfo: return GetErrorInfo(call);
    case ch::kGetErrorNotification: return GetErrorNotification(call);
    case ch::kSetUserData: {
      absl::MutexLock l(&mu_);
      user_data_ = ArgAs<ch::UserData>(call.arg).data;
      return Result::Done(NvError::kSuccess);
    }
    case ch::kGetUserData: {
      absl::MutexLock l(&mu_);
      ArgAs<ch::UserData>(call.arg).data = user_data_;
      return Result::Done(NvError::kSuccess);
    }
    case ch::kZcullBind: {
      const auto a = ArgAs<ch::ZcullBind>(call.arg);
      if (a.mode > 3) return Result::Done(NvError::kBadParameter);  // Switchbrew: modes 0..3
      absl::MutexLock l(&mu_);
      zcull_va_ = a.gpu_va;
      zcull_mode_ = a.mode;
      return Result::Done(NvError::kSuccess);
    }
    case ch::kCycleStats:
    case ch::kCycleStatsSnapshot:
    case ch::kFreeObjCtx:
      // No performance counters are simulated; FREE_OBJ_CTX is NotSupported in Switchbrew.
      return Result::Done(NvError::kNotSupported);
    default:
      // The host1x channel ioctls (SUBMIT, GET_SYNCPOINT, ...) belong to the multimedia engines.
      return Unimplemented(call);
  }
}

Result GpuChannel::SetNvmapFd(Call& call) {
  const int32_t fd = static_cast<int32_t>(ArgAs<ch::U32Arg>(call.arg).value);
  if (!call.caller) return Result::Done(NvError::kSuccess);  // no guest (tests, fuzzers)
  std::shared_ptr<DeviceBackend> backend = call.caller->BackendOf(fd);
  if (!backend) return Result::Done(NvError::kBadParameter);
  if (!dynamic_cast<NvmapDevice*>(backend.get())) return Result::Done(NvError::kBadParameter);
  // Handles are per process (nvmap.h), so the fd names nothing more than the caller's client.
  return Result::Done(NvError::kSuccess);
}

Result GpuChannel::AllocGpfifo(Call& call) {
  uint32_t n;
  bool ex = call.desc.code != ch::kAllocGpfifo;
  if (ex)
    n = ArgAs<ch::AllocGpfifoEx>(call.arg).num_entries;
  else
    n = ArgAs<ch::AllocGpfifo>(call.arg).num_entries;
  if (n == 0 || n > kMaxRingEntries) return Result::Done(NvError::kBadParameter);
  if (!std::has_single_bit(n)) {
    if (ex) return Result::Done(NvError::kBadParameter);
    n = std::bit_ceil(n);
  }
  NvError err = engine_->AllocRing(n);
  if (err != NvError::kSuccess) return Result::Done(err);
  if (ex) {
    // ALLOC_GPFIFO_EX's code is in-only, so only _EX2's fence reaches the guest.
    auto& a = ArgAs<ch::AllocGpfifoEx>(call.arg);
    a.fence.id = engine_->syncpoint_id();
    a.fence.value = syncpoints_.ReadMax(a.fence.id);
  }
  return Result::Done(NvError::kSuccess);
}

Result GpuChannel::AllocObjCtx(Call& call) {
  auto& a = ArgAs<ch::AllocObjCtx>(call.arg);
  if (abi::FindGpuClass(a.class_num) == nullptr) return Result::Done(NvError::kBadParameter);
  if (!engine_->has_address_space()) return Result::Done(NvError::kInvalidState);
  absl::MutexLock l(&mu_);
  if (obj_class_ != 0) return Result::Done(NvError::kAlreadyAllocated);
  obj_class_ = a.class_num;
  engine_->SetObjectClass(a.class_num);
  a.obj_id = a.class_num;
  return Result::Done(NvError::kSuccess);
}

Result GpuChannel::Submit(Call& call) {
  auto& h = ArgAs<ch::SubmitGpfifoHeader>(call.arg);
  std::span<const ch::GpfifoEntry> entries;
  if (!call.arrays.empty()) entries = call.Array<ch::GpfifoEntry>(0);
  if (entries.size() != h.num_entries) return Result::Done(NvError::kCountMismatch);
  const uint32_t flags = h.flags;
  SubmitJob job;
  if (flags & ch::kFenceWait) {
    if (flags & kIncrementByValue) return Result::Done(NvError::kBadParameter);
    if (!Syncpoints::ValidId(h.fence.id)) return Result::Done(NvError::kBadParameter);
    // A fence already reached costs nothing.
    if (!SyncptReached(syncpoints_.Read(h.fence.id), h.fence.value)) {
      job.wait = true;
      job.wait_fence = h.fence;
    }
  }
  uint32_t promised = 0;
  if (flags & ch::kFenceGet) {
    job.increment = true;
    job.wfi = !(flags & ch::kSuppressWfi);
    promised += 2;
  }
  if (flags & kIncrementByValue) promised += h.fence.value;
  // Both GPFIFO formats are Switchbrew's two words per entry: nothing to convert (bit 2).
  job.entries.assign(entries.begin(), entries.end());
  ch::Fence fence{};
  NvError err = engine_->Submit(std::move(job), promised, &fence);
  if (err != NvError::kSuccess) return Result::Done(err);
  h.fence = fence;
  h.flags = 0;  // detailed_error
  return Result::Done(NvError::kSuccess);
}

Result GpuChannel::SetErrorNotifier(Call& call) {
  const auto a = ArgAs<ch::SetErrorNotifier>(call.arg);
  if (a.mem == 0) {
    engine_->DisableNotifier();
    return Result::Done(NvError::kSuccess);
  }
  std::shared_ptr<NvmapObject> obj = nvmap_.Resolve(CallerTgid(call), a.mem);
  if (obj) {
    if (!Inside(a.offset, sizeof(NotifierRecord), obj->size()))
      return Result::Done(NvError::kBadParameter);
    // Cleared when armed, as Linux does; an object without memory cannot be a notifier.
    NotifierRecord zero{};
    if (!obj->Write(a.offset, {reinterpret_cast<const uint8_t*>(&zero), sizeof zero}))
      return Result::Done(NvError::kBadParameter);
  }
  // A value that is not a handle of the caller (libnx passes 1) enables the notifier without
  // memory: the nvdrv model, where the client asks with GET_ERROR_NOTIFICATION.
  engine_->EnableNotifier(std::move(obj), a.offset);
  return Result::Done(NvError::kSuccess);
}

Result GpuChannel::Wait(Call& call) {
  const auto a = ArgAs<ch::Wait>(call.arg);
  if (a.type > 1) return Result::Done(NvError::kBadParameter);
  WaitCondition c;
  c.semaphore = a.type == 1;
  c.offset = a.offset;
  c.payload = a.payload;
  c.object = nvmap_.Resolve(CallerTgid(call), a.dmabuf_fd);
  if (!c.object) return Result::Done(NvError::kBadParameter);
  if (c.semaphore ? (a.offset % 4 != 0 || !Inside(a.offset, 4, c.object->size()))
                  : !Inside(a.offset, sizeof(NotifierRecord), c.object->size()))
    return Result::Done(NvError::kBadParameter);
  // A failed channel does not wait (Linux: ETIMEDOUT).
  if (engine_->failed()) return Result::Done(NvError::kTimeout);
  switch (engine_->CheckWait(c)) {
    case ChannelEngine::WaitState::kMet: return Result::Done(NvError::kSuccess);
    case ChannelEngine::WaitState::kGone: return Result::Done(NvError::kInvalidAddress);
    case ChannelEngine::WaitState::kNotYet: break;
  }
  if (a.timeout == 0) return Result::Done(NvError::kTimeout);
  absl::Duration timeout =
      a.timeout == kNoTimeout ? absl::InfiniteDuration() : absl::Milliseconds(a.timeout);
  std::shared_ptr<Continuation> parked = call.parker.Park();
  if (parked == nullptr) return Result::Done(NvError::kInsufficientMemory);  // parked_waits
  engine_->ParkWait(std::move(c), std::move(parked), timeout);
  return Result::Parked();
}

Result GpuChannel::EventIdControl(Call& call) {
  const auto a = ArgAs<ch::EventIdControl>(call.arg);
  if (a.id < kEventSmBreakpoint || a.id > kEventErrorNotifier)
    return Result::Done(NvError::kBadParameter);
  switch (a.cmd) {
    case 0: engine_->SetEventEnabled(a.id, false); break;
    case 1: engine_->SetEventEnabled(a.id, true); break;
    case 2: engine_->ClearEvent(a.id); break;
    default: return Result::Done(NvError::kBadParameter);
  }
  return Result::Done(NvError::kSuccess);
}

Result GpuChannel::GetErrorInfo(Call& call) {
  ArgAs<ch::ErrorInfo>(call.arg) = ErrorInfoOf(engine_->error());
  return Result::Done(NvError::kSuccess);
}

Result GpuChannel::GetErrorNotification(Call& call) {
  ArgAs<ch::ErrorNotification>(call.arg) = ErrorNotificationOf(engine_->error());
  return Result::Done(NvError::kSuccess);
}

}  // namespace nvsentry::hostshim::sim
