#include "hostshim/host/ctrl_session.h"

#include "abi/devices/nvhost_ctrl.h"
#include "abi/l4t/nvhost_ctrl.h"
#include "hostshim/host/host_context.h"
#include "hostshim/rate_limited_log.h"

namespace nvsentry::hostshim::host {

namespace g = abi::nvhost_ctrl;
namespace l4t = abi::l4t::nvhost_ctrl;
using abi::NvError;

CtrlSession::CtrlSession(HostContext& ctx, const abi::DeviceDesc& device, UniqueFd host_fd)
    : HostSession(ctx, device, abi::l4t::L4tNode::kNvhostCtrl, std::move(host_fd)),
      sim_(ctx.syncpoints(), ctx.mutexes(), ctx.options().budget) {}

NvError CtrlSession::Refresh(const Call& call, uint32_t id) {
  l4t::SyncptRead r{id, 0};
  if (HostCallResult res = HostOf(call, l4t::kSyncptRead, r); res.err != 0) return res.nv();
  ctx_.mirror().Observe(id, r.value);
  return NvError::kSuccess;
}

Result CtrlSession::Increment(Call& call) {
  auto& a = ArgAs<g::SyncptIncr>(call.arg);
  if (!sim::Syncpoints::ValidId(a.id)) return Result::Done(NvError::kBadParameter);
  if (ctx_.kept().Kept(a.id)) {
    // The guest's count only: r32.7.4 drops a CPU increment of a channel's syncpoint that is
    // at its max and lets one below it complete a job early (L4T-SYNC-10).
    ctx_.syncpoints().Increment(a.id);
    return Result::Done(NvError::kSuccess);
  }
  HostCallResult res;
  if (!ctx_.IncrementOwned(a.id, [&] {
        l4t::SyncptIncr r{a.id};
        res = HostOf(call, l4t::kSyncptIncr, r);
      })) {
    NVS_LOG_LIMITED(spdlog::level::warn,
                    "host backend: SYNCPT_INCR of syncpoint {}, which no channel of the guest "
                    "owns, refused (it would move a fence outside the sandbox)",
                    a.id);
    return Result::Done(NvError::kAccessDenied);
  }
  if (res.err != 0) return Result::Done(res.nv());
  return Result::Done(Refresh(call, a.id));
}

Result CtrlSession::Ioctl(Call& call) {
  switch (call.desc.code) {
    case g::kSyncptRead: {
      auto& a = ArgAs<g::SyncptIdValue>(call.arg);
      if (!sim::Syncpoints::ValidId(a.id)) return Result::Done(NvError::kBadParameter);
      l4t::SyncptRead r{a.id, 0};
      if (HostCallResult res = HostOf(call, l4t::kSyncptRead, r); res.err != 0)
        return Result::Done(res.nv());
      ctx_.mirror().Observe(a.id, r.value);
      // A kept syncpoint answers the guest's count, which the host's value moved (above).
      a.value = ctx_.kept().Kept(a.id) ? ctx_.syncpoints().Read(a.id) : r.value;
      return Result::Done(NvError::kSuccess);
    }
    case g::kSyncptReadMax: {
      auto& a = ArgAs<g::SyncptIdValue>(call.arg);
      if (!sim::Syncpoints::ValidId(a.id)) return Result::Done(NvError::kBadParameter);
      if (ctx_.kept().Kept(a.id)) {  // the guest's promises, not the kernel's
        a.value = ctx_.syncpoints().ReadMax(a.id);
        return Result::Done(NvError::kSuccess);
      }
      l4t::SyncptRead r{a.id, 0};
      if (HostCallResult res = HostOf(call, l4t::kSyncptReadMax, r); res.err != 0)
        return Result::Done(res.nv());
      a.value = r.value;
      return Result::Done(NvError::kSuccess);
    }
    case g::kSyncptIncr: return Increment(call);
    case g::kSyncptWait:
    case g::kSyncptWaitEx:
    case g::kSyncptWaitEvent:
    case g::kSyncptWaitEventEx: {
      // Every one of these starts with {id, thresh}: the mirror must hold the host's value before
      // the simulator's wait compares the threshold with it, unless it is there already (the
      // mirror's poll pulled what the host's GPU wrote before it moved the value; a fence the
      // guest just got is often passed by then).
      const auto& w = ArgAs<g::SyncptWait>(call.arg);
      if (sim::Syncpoints::ValidId(w.id) &&
          !sim::SyncptReached(ctx_.syncpoints().Read(w.id), w.thresh))
        if (NvError e = Refresh(call, w.id); e != NvError::kSuccess) return Result::Done(e);
      return sim_.Ioctl(call);
    }
    case g::kModuleRegRdWr: return NotTranslated(call);
    default:
      // MODULE_MUTEX, GET_CONFIG, the event slots, GET_SHIFT: the sentry's own answers.
      return sim_.Ioctl(call);
  }
}

}  // namespace nvsentry::hostshim::host
