#include "hostshim/sim/engines/ctrl_gpu_device.h"

#include <cstring>

#include "abi/catalogue.h"
#include "abi/device_events.h"
#include "abi/devices/nvhost_ctrl_gpu.h"
#include "hostshim/sim/engines/gm20b.h"
#include "hostshim/sim/engines/gpu_clock.h"
#include "hostshim/sim/memory/channel_device.h"
#include "hostshim/sim/memory/guest_process.h"
#include "hostshim/unimplemented.h"

namespace nvsentry::hostshim::sim {
namespace cg = abi::nvhost_ctrl_gpu;
using abi::NvError;

namespace {

// Channel fds name the caller's own sessions; anything else (or no caller) is BadParameter, never
// an unchecked cast.
NvError CheckChannelFd(Call& call, int32_t fd) {
  if (call.caller == nullptr) return NvError::kBadParameter;
  std::shared_ptr<DeviceBackend> b = call.caller->BackendOf(fd);
  return dynamic_cast<ChannelDevice*>(b.get()) != nullptr ? NvError::kSuccess
                                                          : NvError::kBadParameter;
}

// The simulated SMs run no warps, so a pause finds every warp mask empty: valid, trapped and
// paused per SM, in the order of the inline (6.1.0+) layout.
constexpr cg::WaitForPause kNoWarps{};

// FLUSH_L2's word: bit 0 L2 flush, bit 1 L2 invalidate, bit 2 FB flush.
constexpr uint32_t kL2Flush = 1u << 0, kL2Invalidate = 1u << 1, kFbFlush = 1u << 2;

constexpr uint32_t kMaxCorrelationSamples = 16;
constexpr uint32_t kCorrelationSourceTsc = 1;

}  // namespace

void GpuControlState::SetCgControls(uint32_t mask, uint32_t value) {
  absl::MutexLock l(&mu_);
  cg_ = (cg_ & ~mask) | (value & mask);
}
uint32_t GpuControlState::CgControls(uint32_t mask) const {
  absl::MutexLock l(&mu_);
  return cg_ & mask;
}
void GpuControlState::SetPgControls(uint32_t mask, uint32_t value) {
  absl::MutexLock l(&mu_);
  pg_ = (pg_ & ~mask) | (value & mask);
}
uint32_t GpuControlState::PgControls(uint32_t mask) const {
  absl::MutexLock l(&mu_);
  return pg_ & mask;
}

NvError CtrlGpuDevice::QueryEvent(uint32_t id, int* eventfd) {
  NvError v = abi::EventIdVerdict(abi::Device(abi::DeviceId::kNvhostCtrlGpu), id);
  if (v != NvError::kSuccess) return v;
  int fd = events_.Get(id);
  if (fd < 0) return NvError::kInsufficientMemory;
  *eventfd = fd;
  return NvError::kSuccess;
}

Result CtrlGpuDevice::Ioctl(Call& call) {
  NvError err = NvError::kSuccess;
  switch (call.desc.code) {
    case cg::kZcullGetCtxSize:
      ArgAs<cg::ZcullGetCtxSize>(call.arg).size = gm20b::kZcullCtxSize;
      break;
    case cg::kZcullGetInfo: ArgAs<cg::ZcullGetInfo>(call.arg) = gm20b::ZcullInfo(); break;
    case cg::kZbcSetTable: err = state_.zbc().Set(ArgAs<cg::ZbcSetTable>(call.arg)); break;
    case cg::kZbcQueryTable: err = state_.zbc().Query(ArgAs<cg::ZbcQueryTable>(call.arg)); break;
    case cg::kGetCharacteristics: err = GetCharacteristics(call); break;
    case cg::kGetTpcMasks: err = GetTpcMasks(call); break;
    case cg::kFlushL2: {
      // As nvgpu: something must be flushed, and an invalidate only comes with an L2 flush.
      // The simulated GPU writes memory directly, so there is nothing to write back.
      const uint32_t f = ArgAs<cg::FlushL2>(call.arg).flush;
      if (!(f & kL2Flush) && (!(f & kFbFlush) || (f & kL2Invalidate))) err = NvError::kBadParameter;
      break;
    }
    case cg::kInvalIcache:
      // No shader instruction cache to invalidate; the fd must still be one of the caller's
      // channels.
      err = CheckChannelFd(call, ArgAs<cg::InvalIcache>(call.arg).channel_fd);
      break;
    case cg::kSetMmuDebugMode:
      state_.SetMmuDebugMode(ArgAs<cg::SetMmuDebugMode>(call.arg).state == 1);
      break;
    case cg::kSetSmDebugMode:
      // nvgpu ignores `sms` bits past the last SM; the simulated SMs run no shaders to debug.
      err = CheckChannelFd(call, ArgAs<cg::SetSmDebugMode>(call.arg).channel_fd);
      break;
    case cg::kWaitForPauseV1: err = WaitForPauseV1(call); break;
    case cg::kWaitForPause: ArgAs<cg::WaitForPause>(call.arg) = kNoWarps; break;
    case cg::kGetTpcExceptionEnStatus:
      ArgAs<cg::GetTpcExceptionEnStatus>(call.arg).tpc_exception_en_sm_mask =
          gm20b::kTpcExceptionEnSmMask;
      break;
    case cg::kNumVsms: ArgAs<cg::NumVsms>(call.arg) = {gm20b::kNumSm, 0}; break;
    case cg::kVsmsMapping:
      // SM i sits in GPC 0, TPC i.
      ArgAs<cg::VsmsMapping>(call.arg) = {0, 0, 0, 1};
      break;
    case cg::kZbcGetActiveSlotMask:
      ArgAs<cg::ZbcGetActiveSlotMask>(call.arg) = {gm20b::kZbcActiveSlot, gm20b::kZbcActiveMask};
      break;
    case cg::kPmuGetGpuLoad:
      // The simulated GPU has no PMU sampling its busy time: it reports idle.
      ArgAs<cg::PmuGetGpuLoad>(call.arg).pmu_gpu_load = 0;
      break;
    case cg::kSetCgControls: {
      const auto& a = ArgAs<cg::CgControls>(call.arg);
      state_.SetCgControls(a.cg_mask, a.cg_value);
      break;
    }
    case cg::kGetCgControls: {
      auto& a = ArgAs<cg::CgControls>(call.arg);
      a.cg_value = state_.CgControls(a.cg_mask);
      break;
    }
    case cg::kSetPgControls: {
      const auto& a = ArgAs<cg::PgControls>(call.arg);
      state_.SetPgControls(a.pg_mask, a.pg_value);
      break;
    }
    case cg::kGetPgControls: {
      auto& a = ArgAs<cg::PgControls>(call.arg);
      a.pg_value = state_.PgControls(a.pg_mask);
      break;
    }
    case cg::kPmuGetElpgResidencyGating:
      // Never power-gated: no time in or out of gating, no gating events.
      ArgAs<cg::PmuGetElpgResidencyGating>(call.arg) = {0, 0, 0};
      break;
    case cg::kGetErrorChannelUserData:
      ArgAs<cg::GetErrorChannelUserData>(call.arg).data = state_.error_channel_user_data();
      break;
    case cg::kGetGpuTime: ArgAs<cg::GetGpuTime>(call.arg) = {GpuTimeNs(), 0}; break;
    case cg::kGetCpuTimeCorrelationInfo: {
      auto& a = ArgAs<cg::GetCpuTimeCorrelationInfo>(call.arg);
      if (a.count > kMaxCorrelationSamples || a.source_id != kCorrelationSourceTsc) {
        err = NvError::kBadParameter;
        break;
      }
      std::memset(a.samples, 0, sizeof a.samples);
      for (uint32_t i = 0; i < a.count; ++i) {
        const ClockSample s = SampleClocks();
        a.samples[i] = {s.cpu_ticks, s.gpu_ns};
      }
      break;
    }
    default: return Unimplemented(call);
  }
  return Result::Done(err);
}

NvError CtrlGpuDevice::GetCharacteristics(Call& call) {
  auto& a = ArgAs<cg::GetCharacteristics>(call.arg);
  // Switchbrew: the size and the (unused) address must both be nonzero.
  if (a.gpu_characteristics_buf_size == 0 || a.gpu_characteristics_buf_addr == 0)
    return NvError::kBadParameter;
  a.gc = gm20b::Characteristics();
  a.gpu_characteristics_buf_size = sizeof(cg::GpuCharacteristics);
  // Through Ioctl3 the characteristics also go to the second output buffer, when it holds them.
  if (!call.arrays.empty()) {
    std::span<cg::GpuCharacteristics> out2 = call.Array<cg::GpuCharacteristics>(0);
    if (!out2.empty()) out2[0] = a.gc;
  }
  return NvError::kSuccess;
}

NvError CtrlGpuDevice::GetTpcMasks(Call& call) {
  auto& a = ArgAs<cg::GetTpcMasks>(call.arg);
  if (a.mask_buf_size == 0) return NvError::kBadParameter;  // Switchbrew: must not be zero
  a.mask_buf = gm20b::kTpcMaskGpc0;  // GPC 0 in the low word; there is no GPC 1
  if (!call.arrays.empty()) {
    std::span<uint32_t> out2 = call.Array<uint32_t>(0);  // one mask per GPC
    if (!out2.empty()) out2[0] = gm20b::kTpcMaskGpc0;
  }
  return NvError::kSuccess;
}

NvError CtrlGpuDevice::WaitForPauseV1(Call& call) {
  // Before 6.1.0 the warp state went to guest memory at `pwarpstate`: the same six words the
  // later firmware returns inline.
  const uint64_t addr = ArgAs<cg::WaitForPauseV1>(call.arg).pwarpstate;
  if (addr == 0 || call.caller == nullptr) return NvError::kInvalidAddress;
  std::shared_ptr<GuestProcess> p = GuestProcess::Open(call.caller->tgid());
  if (p == nullptr) return NvError::kInvalidAddress;
  const auto* bytes = reinterpret_cast<const uint8_t*>(&kNoWarps);
  if (!p->Write(addr, {bytes, sizeof kNoWarps})) return NvError::kInvalidAddress;
  return NvError::kSuccess;
}

}  // namespace nvsentry::hostshim::sim
