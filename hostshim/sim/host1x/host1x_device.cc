#include "hostshim/sim/host1x/host1x_device.h"

#include <algorithm>
#include <vector>

#include "abi/devices/channel.h"
#include "hostshim/sim/memory/nvmap_device.h"
#include "hostshim/unimplemented.h"

namespace nvsentry::hostshim::sim {
namespace ch = abi::channel;
using abi::NvError;

namespace {

// No public source gives the engines' boot clock rates; one assumed rate for all
// (docs/simulated-gpu.md).
constexpr uint32_t kAssumedRate = 408000000;

constexpr Host1xEngine kEngines[] = {
    {abi::DeviceId::kNvhostVic, "VIC", 0x5D, 0x0C, kAssumedRate},
    {abi::DeviceId::kNvhostNvdec, "NVDEC", 0xF0, 0x36, kAssumedRate},
    {abi::DeviceId::kNvhostNvjpg, "NVJPG", 0xC0, 0x37, kAssumedRate},
    {abi::DeviceId::kNvhostMsenc, "MSENC", 0x21, 0, kAssumedRate},
    {abi::DeviceId::kNvhostTsec, "TSEC", 0xE0, 0, kAssumedRate},
    // The display's host1x channel: class NV_DISPLAY_CLASS_ID (L4T nvhost); its syncpoint is
    // allocated (the heads' own syncpoints are the display device's).
    {abi::DeviceId::kNvhostDisplay, "DISPLAY", 0x70, 0, kAssumedRate},
};

}  // namespace

const Host1xEngine* FindHost1xEngine(abi::DeviceId device) {
  for (const Host1xEngine& e : kEngines)
    if (e.device == device) return &e;
  return nullptr;
}

NvError Host1xDevice::Create(const Deps& deps, const Host1xEngine& engine,
                             std::unique_ptr<Host1xDevice>* out) {
  if (deps.budget) {
    NvError err = deps.budget->Charge(BudgetKind::kChannels);
    if (err != NvError::kSuccess) return err;
  }
  uint32_t id = engine.syncpoint;
  if (id == 0) {
    NvError err = deps.syncpoints.Allocate(&id);
    if (err != NvError::kSuccess) {
      if (deps.budget) deps.budget->Release(BudgetKind::kChannels);
      return err;
    }
  } else {
    deps.syncpoints.Claim(id);
  }
  out->reset(new Host1xDevice(deps, engine, id));
  return NvError::kSuccess;
}

Host1xDevice::~Host1xDevice() {
  channel_->Close();
  if (engine_.syncpoint == 0)
    deps_.syncpoints.Free(syncpoint_);
  else
    deps_.syncpoints.Unclaim(syncpoint_);
  if (deps_.budget) deps_.budget->Release(BudgetKind::kChannels);
}

Result Host1xDevice::Ioctl(Call& call) {
  switch (call.desc.code) {
    case ch::kSetNvmapFd: return SetNvmapFd(call);
    case ch::kGetSyncpoint: {
      auto& a = ArgAs<ch::IdValue>(call.arg);
      if (a.module_id != 0) return Result::Done(NvError::kBadParameter);
      a.value = syncpoint_;
      return Result::Done(NvError::kSuccess);
    }
    case ch::kGetWaitbase:
      ArgAs<ch::IdValue>(call.arg).value = 0;
      return Result::Done(NvError::kSuccess);
    case ch::kGetModmutex: return Result::Done(NvError::kSuccess);
    case ch::kSetSubmitTimeout: {
      absl::MutexLock l(&mu_);
      submit_timeout_ms_ = ArgAs<ch::U32Arg>(call.arg).value;
      return Result::Done(NvError::kSuccess);
    }
    case ch::kSetTimeout: {
      absl::MutexLock l(&mu_);
      timeout_ms_ = ArgAs<ch::U32Arg>(call.arg).value;
      return Result::Done(NvError::kSuccess);
    }
    case ch::kSetTimeoutEx: return Result::Done(NvError::kSuccess);  // carries no argument
    case ch::kSetClkRate: {
      const auto a = ArgAs<ch::ClkRate>(call.arg);
      absl::MutexLock l(&mu_);
      if (!clock_rates_.contains(a.module_id) && clock_rates_.size() >= kMaxClockModules)
        return Result::Done(NvError::kInsufficientMemory);
      clock_rates_[a.module_id] = a.clk_rate;
      return Result::Done(NvError::kSuccess);
    }
    case ch::kGetClkRate:
    case ch::kGetClkRateV1: {
      auto& a = ArgAs<ch::GetClkRate>(call.arg);
      absl::MutexLock l(&mu_);
      auto it = clock_rates_.find(a.module_id);
      a.clk_rate = it == clock_rates_.end() ? engine_.clock_rate_hz : it->second;
      return Result::Done(NvError::kSuccess);
    }
    case ch::kFreeObjCtx: return Result::Done(NvError::kNotSupported);
    case ch::kMapCmdBuffer: return MapCmdBuffer(call, false);
    case ch::kMapCmdBufferEx: return MapCmdBuffer(call, true);
    case ch::kUnmapCmdBuffer: return UnmapCmdBuffer(call, false);
    case ch::kUnmapCmdBufferEx: return UnmapCmdBuffer(call, true);
    case ch::kSubmit:
    case ch::kSubmitEx: return Submit(call);
    default:
      // The nvgpu channel ioctls (GPFIFO, object contexts, ...) belong to /dev/nvhost-gpu.
      return Unimplemented(call);
  }
}

Result Host1xDevice::SetNvmapFd(Call& call) {
  const int32_t fd = static_cast<int32_t>(ArgAs<ch::U32Arg>(call.arg).value);
  if (!call.caller) return Result::Done(NvError::kSuccess);  // no guest (tests, fuzzers)
  std::shared_ptr<DeviceBackend> backend = call.caller->BackendOf(fd);
  if (!backend || !dynamic_cast<NvmapDevice*>(backend.get()))
    return Result::Done(NvError::kBadParameter);
  return Result::Done(NvError::kSuccess);
}

Result Host1xDevice::MapCmdBuffer(Call& call, bool ex) {
  auto handles = call.Array<ch::CmdBufferHandle>(0);
  const pid_t tgid = CallerTgid(call);
  for (size_t i = 0; i < handles.size(); ++i) {
    std::shared_ptr<NvmapObject> object = deps_.nvmap.Resolve(tgid, handles[i].handle);
    NvError err = object
                      ? channel_->Map(handles[i].handle, std::move(object), &handles[i].phys_addr)
                      : NvError::kBadValue;
    if (err == NvError::kSuccess) continue;
    if (ex)  // all or nothing
      for (size_t j = 0; j < i; ++j) channel_->Unmap(handles[j].handle);
    return Result::Done(err);
  }
  return Result::Done(NvError::kSuccess);
}

Result Host1xDevice::UnmapCmdBuffer(Call& call, bool ex) {
  auto handles = call.Array<ch::CmdBufferHandle>(0);
  if (ex) {
    // Every handle must be mapped (as often as it is named) before any is unmapped.
    std::map<uint32_t, int> named;
    for (const auto& h : handles) ++named[h.handle];
    for (const auto& [handle, n] : named)
      if (!channel_->Mapped(handle)) return Result::Done(NvError::kBadValue);
  }
  for (const auto& h : handles) {
    NvError err = channel_->Unmap(h.handle);
    if (err != NvError::kSuccess) return Result::Done(err);
  }
  return Result::Done(NvError::kSuccess);
}

Result Host1xDevice::Submit(Call& call) {
  const auto& h = ArgAs<ch::SubmitHeader>(call.arg);
  auto cmdbufs = call.Array<ch::Cmdbuf>(0);
  auto relocs = call.Array<ch::Reloc>(1);
  auto shifts = call.Array<ch::RelocShift>(2);
  auto incrs = call.Array<ch::SyncptIncr>(3);
  auto thresholds = call.Array<uint32_t>(4);
  if (cmdbufs.size() != h.num_cmdbufs || relocs.size() != h.num_relocs ||
      shifts.size() != h.num_relocs || incrs.size() != h.num_syncpt_incrs ||
      thresholds.size() != h.num_fences)
    return Result::Done(NvError::kCountMismatch);
  if (h.num_fences > h.num_syncpt_incrs) return Result::Done(NvError::kBadParameter);

  const pid_t tgid = CallerTgid(call);
  Host1xJob job;
  job.tid = call.caller ? call.caller->tid() : 0;
  job.cmdbufs.reserve(cmdbufs.size());
  for (const ch::Cmdbuf& c : cmdbufs) {
    if (c.words > Host1xChannel::kMaxCmdbufWords) return Result::Done(NvError::kBadParameter);
    std::shared_ptr<NvmapObject> object = deps_.nvmap.Resolve(tgid, c.mem);
    if (!object) return Result::Done(NvError::kBadValue);
    // Whether the words fit the object is the engine's to find out: it stops the channel.
    job.cmdbufs.push_back({std::move(object), c.mem, c.offset, c.words});
  }
  job.relocs.reserve(relocs.size());
  for (size_t i = 0; i < relocs.size(); ++i) {
    const ch::Reloc& r = relocs[i];
    if (shifts[i].shift > 31 || r.cmdbuf_offset % 4 != 0)
      return Result::Done(NvError::kBadParameter);
    // The command buffer it patches: the first of the submit with that handle whose words hold
    // the offset (Linux matches relocations to gathers by handle and offset).
    auto c = std::find_if(job.cmdbufs.begin(), job.cmdbufs.end(), [&](const Host1xCmdbuf& b) {
      return b.handle == r.cmdbuf_mem && r.cmdbuf_offset >= b.offset &&
             (r.cmdbuf_offset - b.offset) / 4 < b.words;
    });
    if (c == job.cmdbufs.end()) return Result::Done(NvError::kBadParameter);
    job.relocs.push_back({static_cast<size_t>(c - job.cmdbufs.begin()),
                          (r.cmdbuf_offset - c->offset) / 4, r.target, r.target_offset,
                          shifts[i].shift});
  }
  for (const ch::SyncptIncr& in : incrs) {
    if (!Syncpoints::ValidId(in.syncpt_id)) return Result::Done(NvError::kBadParameter);
    if (!deps_.syncpoints.Owned(in.syncpt_id)) return Result::Done(NvError::kAccessDenied);
    if (in.syncpt_incrs > kMaxIncrementsPerEntry) return Result::Done(NvError::kBadParameter);
    job.fences.push_back({in.syncpt_id, in.syncpt_incrs});
  }
  std::vector<Host1xFence> fences;
  NvError err = channel_->Submit(std::move(job), &fences);
  if (err != NvError::kSuccess) return Result::Done(err);
  for (size_t i = 0; i < thresholds.size(); ++i) thresholds[i] = fences[i].threshold;
  return Result::Done(NvError::kSuccess);
}

}  // namespace nvsentry::hostshim::sim
