#include "hostshim/host/ctrl_gpu_session.h"

#include <vector>

#include "hostshim/host/ctrl_gpu_xlate.h"
#include "hostshim/host/host_context.h"

namespace nvsentry::hostshim::host {

namespace cg = abi::nvhost_ctrl_gpu;
namespace l4t = abi::l4t::nvgpu_ctrl;
using abi::NvError;

namespace {

// More SMs than any Tegra GPU has: a host answer beyond it is not believed (the sentry's buffer
// for VSMS_MAPPING is sized from it).
constexpr uint32_t kMaxSms = 256;
// GPCs the guest's out2 array may take (its catalogue limit).
constexpr uint32_t kMaxGpcs = 16;

}  // namespace

CtrlGpuSession::CtrlGpuSession(HostContext& ctx, const abi::DeviceDesc& device, UniqueFd host_fd)
    : HostSession(ctx, device, abi::l4t::L4tNode::kNvhostCtrlGpu, std::move(host_fd)),
      sim_(ctx.gpu_control(), ctx.budget()) {}

Result CtrlGpuSession::Ioctl(Call& call) {
  switch (call.desc.code) {
    case cg::kZcullGetCtxSize: return Same(call, l4t::kZcullGetCtxSize);
    case cg::kZcullGetInfo: return Same(call, l4t::kZcullGetInfo);
    case cg::kGetTpcExceptionEnStatus: return Same(call, l4t::kGetTpcExceptionEnStatus);
    case cg::kNumVsms: return Same(call, l4t::kNumVsms);
    case cg::kGetGpuTime: return Same(call, l4t::kGetGpuTime);
    case cg::kGetCpuTimeCorrelationInfo: return Same(call, l4t::kGetCpuTimeCorrelationInfo);
    case cg::kGetCharacteristics: return Result::Done(GetCharacteristics(call));
    case cg::kGetTpcMasks: return Result::Done(GetTpcMasks(call));
    case cg::kFlushL2: return Result::Done(FlushL2(call));
    case cg::kSetSmDebugMode: return Result::Done(SetSmDebugMode(call));
    case cg::kVsmsMapping: return Result::Done(VsmsMapping(call));
    // GPU-wide on the host: the sentry's own, as simulated (the header says why).
    case cg::kZbcSetTable:
    case cg::kZbcQueryTable:
    case cg::kSetMmuDebugMode:
    case cg::kWaitForPauseV1:
    case cg::kWaitForPause:
    case cg::kGetErrorChannelUserData: return sim_.Ioctl(call);
    default: return NotTranslated(call);  // no r32.7.4 counterpart (the correspondence rows)
  }
}

NvError CtrlGpuSession::GetCharacteristics(Call& call) {
  auto& a = ArgAs<cg::GetCharacteristics>(call.arg);
  // Switchbrew: the size and the (unused) address must both be nonzero.
  if (a.gpu_characteristics_buf_size == 0 || a.gpu_characteristics_buf_addr == 0)
    return NvError::kBadParameter;
  l4t::GpuCharacteristics buf{};
  l4t::GetCharacteristics h{sizeof buf, reinterpret_cast<uint64_t>(&buf)};
  if (HostCallResult r = HostOf(call, l4t::kGetCharacteristics, h); r.err != 0) return r.nv();
  a.gc = CharacteristicsToGuest(buf);
  a.gpu_characteristics_buf_size = sizeof(cg::GpuCharacteristics);
  if (!call.arrays.empty()) {
    std::span<cg::GpuCharacteristics> out2 = call.Array<cg::GpuCharacteristics>(0);
    if (!out2.empty()) out2[0] = a.gc;
  }
  return NvError::kSuccess;
}

NvError CtrlGpuSession::GetTpcMasks(Call& call) {
  auto& a = ArgAs<cg::GetTpcMasks>(call.arg);
  if (a.mask_buf_size == 0) return NvError::kBadParameter;  // Switchbrew: must not be zero
  uint32_t masks[kMaxGpcs] = {};
  l4t::GetTpcMasks h{sizeof masks, 0, reinterpret_cast<uint64_t>(masks)};
  if (HostCallResult r = HostOf(call, l4t::kGetTpcMasks, h); r.err != 0) return r.nv();
  // The host returns its full size; it wrote no more than the buffer holds.
  const size_t n = std::min<size_t>(h.mask_buf_size / sizeof(uint32_t), kMaxGpcs);
  const std::span<const uint32_t> got(masks, n);
  a.mask_buf = TpcMaskWord(got);
  if (!call.arrays.empty()) {
    std::span<uint32_t> out2 = call.Array<uint32_t>(0);
    for (size_t i = 0; i < std::min(out2.size(), got.size()); ++i) out2[i] = got[i];
  }
  return NvError::kSuccess;
}

NvError CtrlGpuSession::FlushL2(Call& call) {
  l4t::FlushL2 h;
  if (NvError e = FlushL2ToHost(ArgAs<cg::FlushL2>(call.arg), &h); e != NvError::kSuccess) return e;
  return HostOf(call, l4t::kFlushL2, h).nv();
}

NvError CtrlGpuSession::SetSmDebugMode(Call& call) {
  const auto& a = ArgAs<cg::SetSmDebugMode>(call.arg);
  // Only a channel of the caller's own, named by the sentry's host fd of it.
  std::shared_ptr<HostSession> ch = SessionOf(call, a.channel_fd, abi::DeviceId::kNvhostGpu);
  if (ch == nullptr) return NvError::kBadParameter;
  l4t::SmDebugMode h{ch->host_fd(), a.enable, a.sms};
  return HostOf(call, l4t::kSetSmDebugMode, h).nv();
}

NvError CtrlGpuSession::NumVsms(const Call& call, uint32_t* n) {
  l4t::NumVsms h{};
  if (HostCallResult r = HostOf(call, l4t::kNumVsms, h); r.err != 0) return r.nv();
  if (h.num_vsms > kMaxSms) return NvError::kIoctlFailed;
  *n = h.num_vsms;
  return NvError::kSuccess;
}

NvError CtrlGpuSession::VsmsMapping(Call& call) {
  // The host writes one entry per SM: the buffer is sized from its own count.
  uint32_t n = 0;
  if (NvError e = NumVsms(call, &n); e != NvError::kSuccess) return e;
  std::vector<l4t::VsmsMappingEntry> entries(std::max<uint32_t>(n, 1));
  l4t::VsmsMapping h{reinterpret_cast<uint64_t>(entries.data())};
  if (HostCallResult r = HostOf(call, l4t::kVsmsMapping, h); r.err != 0) return r.nv();
  ArgAs<cg::VsmsMapping>(call.arg) = VsmsToGuest(std::span(entries).first(n));
  return NvError::kSuccess;
}

}  // namespace nvsentry::hostshim::host
