// /dev/nvhost-ctrl and /dev/nvhost-ctrl-gpu of the fake Jetson: L4T calls as the sim's CtrlDevice
// and CtrlGpuDevice calls.
#include <time.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "abi/devices/nvhost_ctrl.h"
#include "abi/devices/nvhost_ctrl_gpu.h"
#include "abi/l4t/nvgpu_ctrl.h"
#include "abi/l4t/nvhost_ctrl.h"
#include "hostshim/fake_l4t/serve_context.h"
#include "hostshim/fake_l4t/translate.h"
#include "spdlog/spdlog.h"

namespace nvsentry::hostshim::fake_l4t {
namespace {

namespace gc = abi::nvhost_ctrl;
namespace gg = abi::nvhost_ctrl_gpu;
namespace hc = abi::l4t::nvhost_ctrl;
namespace hg = abi::l4t::nvgpu_ctrl;
using abi::NvError;
constexpr abi::DeviceId kCtrl = abi::DeviceId::kNvhostCtrl;
constexpr abi::DeviceId kCtrlGpu = abi::DeviceId::kNvhostCtrlGpu;

// The SMs of the simulated GM20B (NUM_VSMS): the pointer calls write one entry per SM.
constexpr uint32_t kSms = 2;

// WAITMEX: WAITEX, plus when the threshold was seen reached (CLOCK_MONOTONIC, the fake's choice).
void WaitMex(L4tCall& c) {
  const auto a = c.As<hc::SyncptWaitMex>();
  ForwardSpec f{kCtrl, gc::kSyncptWaitEx, Bytes(gc::SyncptWaitEx{a.id, a.thresh, a.timeout, 0})};
  f.may_park = f.syncpoint_wait = true;
  f.back = [](NvError err, std::span<const uint8_t> guest, std::span<uint8_t> l4t) {
    if (err != NvError::kSuccess) return ErrnoOf(err, true);
    auto& out = *reinterpret_cast<hc::SyncptWaitMex*>(l4t.data());
    out.value = reinterpret_cast<const gc::SyncptWaitEx*>(guest.data())->value;
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    out.tv_sec = static_cast<uint32_t>(ts.tv_sec);
    out.tv_nsec = static_cast<uint32_t>(ts.tv_nsec);
    out.clock_id = CLOCK_MONOTONIC;
    return 0;
  };
  Forward(c, std::move(f));
}

// Writes `bytes` at the caller's `addr`: false (and the call answered EFAULT) when it cannot.
bool WriteOut(L4tCaller& caller, uint64_t addr, std::span<const uint8_t> bytes) {
  return bytes.empty() || caller.Write(addr, bytes);
}

void GetCharacteristics(L4tCall& c) {
  gg::GetCharacteristics g{};
  g.gpu_characteristics_buf_size = sizeof g.gc;
  g.gpu_characteristics_buf_addr = 1;  // the guest's must be nonzero; its data comes inline
  L4tCaller& caller = c.req.caller;
  const uint32_t big_page_size = c.state.default_big_page_size;
  ForwardSpec f{kCtrlGpu, gg::kGetCharacteristics, Bytes(g)};
  f.back = [&caller, big_page_size](NvError err, std::span<const uint8_t> guest,
                                    std::span<uint8_t> l4t) {
    if (err != NvError::kSuccess) return ErrnoOf(err);
    const auto& ga = *reinterpret_cast<const gg::GetCharacteristics*>(guest.data());
    auto& ha = *reinterpret_cast<hg::GetCharacteristics*>(l4t.data());
    const hg::GpuCharacteristics h = ToL4tCharacteristics(ga.gc, big_page_size);
    // r32.7.4: min(buf_size, its size) bytes written, its size returned; 0 only asks the size.
    const size_t n = std::min<uint64_t>(ha.gpu_characteristics_buf_size, sizeof h);
    if (!WriteOut(caller, ha.gpu_characteristics_buf_addr,
                  {reinterpret_cast<const uint8_t*>(&h), n}))
      return EFAULT;
    ha.gpu_characteristics_buf_size = sizeof h;
    return 0;
  };
  Forward(c, std::move(f));
}

void GetTpcMasks(L4tCall& c) {
  gg::GetTpcMasks g{};
  g.mask_buf_size = sizeof(uint32_t);
  L4tCaller& caller = c.req.caller;
  ForwardSpec f{kCtrlGpu, gg::kGetTpcMasks, Bytes(g)};
  f.back = [&caller](NvError err, std::span<const uint8_t> guest, std::span<uint8_t> l4t) {
    if (err != NvError::kSuccess) return ErrnoOf(err);
    // One GPC: the guest's one mask is its low word.
    const uint32_t mask =
        static_cast<uint32_t>(reinterpret_cast<const gg::GetTpcMasks*>(guest.data())->mask_buf);
    auto& ha = *reinterpret_cast<hg::GetTpcMasks*>(l4t.data());
    const size_t n = std::min<size_t>(ha.mask_buf_size, sizeof mask);
    if (!WriteOut(caller, ha.mask_buf_addr, {reinterpret_cast<const uint8_t*>(&mask), n}))
      return EFAULT;
    ha.mask_buf_size = sizeof mask;
    return 0;
  };
  Forward(c, std::move(f));
}

void WaitForPause(L4tCall& c) {
  L4tCaller& caller = c.req.caller;
  ForwardSpec f{kCtrlGpu, gg::kWaitForPause, std::vector<uint8_t>(sizeof(gg::WaitForPause))};
  f.back = [&caller](NvError err, std::span<const uint8_t> guest, std::span<uint8_t> l4t) {
    if (err != NvError::kSuccess) return ErrnoOf(err);
    const auto& g = *reinterpret_cast<const gg::WaitForPause*>(guest.data());
    // One 48-byte warpstate (128-bit masks) per SM; the guest's masks are 64 bits.
    hg::WarpState w[kSms] = {};
    w[0].valid_warps[0] = g.sm0_valid_warps;
    w[0].trapped_warps[0] = g.sm0_trapped_warps;
    w[0].paused_warps[0] = g.sm0_paused_warps;
    w[1].valid_warps[0] = g.sm1_valid_warps;
    w[1].trapped_warps[0] = g.sm1_trapped_warps;
    w[1].paused_warps[0] = g.sm1_paused_warps;
    const uint64_t addr = reinterpret_cast<const hg::WaitForPause*>(l4t.data())->pwarpstate;
    return caller.Write(addr, {reinterpret_cast<const uint8_t*>(w), sizeof w}) ? 0 : EFAULT;
  };
  Forward(c, std::move(f));
}

void VsmsMapping(L4tCall& c) {
  L4tCaller& caller = c.req.caller;
  ForwardSpec f{kCtrlGpu, gg::kVsmsMapping, std::vector<uint8_t>(sizeof(gg::VsmsMapping))};
  f.back = [&caller](NvError err, std::span<const uint8_t> guest, std::span<uint8_t> l4t) {
    if (err != NvError::kSuccess) return ErrnoOf(err);
    const auto& g = *reinterpret_cast<const gg::VsmsMapping*>(guest.data());
    const hg::VsmsMappingEntry e[kSms] = {{g.sm0_gpc_index, g.sm0_tpc_index},
                                          {g.sm1_gpc_index, g.sm1_tpc_index}};
    const uint64_t addr = reinterpret_cast<const hg::VsmsMapping*>(l4t.data())->vsms_map_buf_addr;
    return caller.Write(addr, {reinterpret_cast<const uint8_t*>(e), sizeof e}) ? 0 : EFAULT;
  };
  Forward(c, std::move(f));
}

// GET_ENGINE_INFO (L4T-CTRL-9): the fake's GPU has the graphics engine and a copy engine on the
// graphics runlist (the sim runs its copy class on graphics channels), both instance 0. Items
// are written while they fit; the size of all of them comes back.
void GetEngineInfo(L4tCall& c) {
  const hg::EngineInfoItem items[] = {{0 /* GR */, 0, 0, 0}, {1 /* GR_COPY */, 0, 0, 0}};
  auto& a = c.As<hg::GetEngineInfo>();
  const size_t n =
      std::min<size_t>(a.engine_info_buf_size / sizeof(hg::EngineInfoItem), std::size(items));
  if (!WriteOut(c.req.caller, a.engine_info_buf_addr,
                {reinterpret_cast<const uint8_t*>(items), n * sizeof(hg::EngineInfoItem)}))
    return c.Answer(EFAULT);
  a.engine_info_buf_size = sizeof items;
  c.Answer(0);
}

// The syncpoint waits refuse syncpoint 0, which no channel has (L4T-SYNC-4).
bool WaitsOnSyncpointZero(L4tCall& c) {
  if (c.As<hc::SyncptWait>().id != 0) return false;
  c.Answer(EINVAL);
  return true;
}

void SetSmDebugMode(L4tCall& c) {
  const auto a = c.As<hg::SmDebugMode>();
  std::shared_ptr<Session> ch = SessionOfFd(c, a.channel_fd, abi::l4t::L4tNode::kNvhostGpu);
  if (ch == nullptr) return c.Answer(EINVAL);
  SelfCaller caller;
  caller.Name(a.channel_fd, ch->backend);
  ForwardSpec f{kCtrlGpu, gg::kSetSmDebugMode,
                Bytes(gg::SetSmDebugMode{a.channel_fd, a.enable, a.sms})};
  f.caller = &caller;
  f.back = [](NvError err, std::span<const uint8_t>, std::span<uint8_t>) { return ErrnoOf(err); };
  Forward(c, std::move(f));
}

// ALLOC_AS (L4T-CTRL-11): a new address space fd; big_page_size 0 is the default (the fake's:
// GM20B's 64 KiB where a caller can take fds, L4T-AS-1), else 64 or 128 KiB.
void AllocAs(L4tCall& c) {
  auto& a = c.As<hg::AllocAs>();
  const uint32_t big = a.big_page_size;
  if (big != 0 && big != 0x10000 && big != 0x20000) return c.Answer(EINVAL);
  auto prepare = [&c, big](Session& s) {
    // 0 is the default, which the open made.
    if (big == 0 || big == c.state.default_big_page_size) return 0;
    // Nobody else has the session yet: its address space is replaced by one of `big`.
    abi::NvError refused = abi::NvError::kSuccess;
    std::shared_ptr<DeviceBackend> as =
        c.state.gpu.Open(abi::Device(abi::DeviceId::kNvhostAsGpu), refused);
    if (as == nullptr) return ErrnoOf(refused);
    if (abi::NvError e = MakeAddressSpace(*as, big); e != abi::NvError::kSuccess) return ErrnoOf(e);
    s.backend = std::move(as);
    return 0;
  };
  int32_t fd = -1;
  if (const int err = HandOutNode(c, abi::l4t::L4tNode::kNvhostAsGpu, prepare, false, &fd))
    return c.Answer(err);
  a.as_fd = fd;
  c.Answer(0);
}

// OPEN_TSG (L4T-TSG-6) and OPEN_CHANNEL (L4T-NODE-7): as opening the node, an fd of the caller's.
void OpenTsg(L4tCall& c) {
  int32_t fd = -1;
  if (const int err = HandOutNode(c, abi::l4t::L4tNode::kTsg, {}, false, &fd)) return c.Answer(err);
  c.As<hg::OpenTsg>().tsg_fd = static_cast<uint32_t>(fd);
  c.Answer(0);
}

void OpenChannel(L4tCall& c) {
  int32_t fd = -1;
  if (const int err = HandOutNode(c, abi::l4t::L4tNode::kNvhostGpu, {}, false, &fd))
    return c.Answer(err);
  c.As<hg::OpenChannel>().channel_fd = fd;
  c.Answer(0);
}

}  // namespace

void ServeCtrl(L4tCall& c) {
  switch (c.desc.code) {
    case hc::kSyncptRead: return ForwardSame(c, kCtrl, gc::kSyncptRead);
    case hc::kSyncptReadMax: return ForwardSame(c, kCtrl, gc::kSyncptReadMax);
    case hc::kSyncptIncr: {
      // A channel's syncpoint is host-managed: at its max r32.7.4 drops a CPU increment and
      // answers 0 (L4T-SYNC-10).
      const uint32_t id = c.As<hc::SyncptIncr>().id;
      sim::Syncpoints& sp = c.state.gpu.syncpoints();
      if (sim::Syncpoints::ValidId(id) && sp.Allocated(id) && sp.Read(id) == sp.ReadMax(id)) {
        spdlog::warn("fake-l4t: SYNCPT_INCR of channel syncpoint {} at its max: dropped", id);
        return c.Answer(0);
      }
      return ForwardSame(c, kCtrl, gc::kSyncptIncr);
    }
    case hc::kSyncptWait:
      if (WaitsOnSyncpointZero(c)) return;
      return ForwardSame(c, kCtrl, gc::kSyncptWait, true);
    case hc::kSyncptWaitEx:
      if (WaitsOnSyncpointZero(c)) return;
      return ForwardSame(c, kCtrl, gc::kSyncptWaitEx, true);
    case hc::kSyncptWaitMex:
      if (WaitsOnSyncpointZero(c)) return;
      return WaitMex(c);
    case hc::kModuleMutex: return ForwardSame(c, kCtrl, gc::kModuleMutex);
    case hc::kGetVersion:  // NVHOST_SUBMIT_VERSION_MAX_SUPPORTED (L4T-SYNC-7)
      c.As<hc::GetParam>().value = 2;
      return c.Answer(0);
    default: return NotServed(c);
  }
}

void ServeCtrlGpu(L4tCall& c) {
  switch (c.desc.code) {
    case hg::kZcullGetCtxSize: return ForwardSame(c, kCtrlGpu, gg::kZcullGetCtxSize);
    case hg::kZcullGetInfo: return ForwardSame(c, kCtrlGpu, gg::kZcullGetInfo);
    case hg::kZbcSetTable: return ForwardSame(c, kCtrlGpu, gg::kZbcSetTable);
    case hg::kZbcQueryTable: return ForwardSame(c, kCtrlGpu, gg::kZbcQueryTable);
    case hg::kGetCharacteristics: return GetCharacteristics(c);
    case hg::kGetTpcMasks: return GetTpcMasks(c);
    case hg::kFlushL2: {
      ForwardSpec f{kCtrlGpu, gg::kFlushL2, Bytes(gg::FlushL2{c.As<hg::FlushL2>().flush, 0})};
      f.back = [](NvError err, std::span<const uint8_t>, std::span<uint8_t>) {
        return ErrnoOf(err);
      };
      return Forward(c, std::move(f));
    }
    case hg::kSetMmuDebugMode: return ForwardSame(c, kCtrlGpu, gg::kSetMmuDebugMode);
    case hg::kSetSmDebugMode: return SetSmDebugMode(c);
    case hg::kWaitForPause: return WaitForPause(c);
    case hg::kGetTpcExceptionEnStatus:
      return ForwardSame(c, kCtrlGpu, gg::kGetTpcExceptionEnStatus);
    case hg::kNumVsms: return ForwardSame(c, kCtrlGpu, gg::kNumVsms);
    case hg::kVsmsMapping: return VsmsMapping(c);
    case hg::kGetCpuTimeCorrelationInfo:
      return ForwardSame(c, kCtrlGpu, gg::kGetCpuTimeCorrelationInfo);
    case hg::kGetGpuTime: return ForwardSame(c, kCtrlGpu, gg::kGetGpuTime);
    case hg::kGetEngineInfo: return GetEngineInfo(c);
    // A new fd each: ENOTTY where the caller cannot take one (FUSE: open the node instead).
    case hg::kAllocAs: return AllocAs(c);
    case hg::kOpenTsg: return OpenTsg(c);
    case hg::kOpenChannel: return OpenChannel(c);
    default: return NotServed(c);
  }
}

}  // namespace nvsentry::hostshim::fake_l4t
