// The guest's /dev/nvhost-ctrl sessions on the host backend. Syncpoint values are the host's:
// reads are forwarded (traced) and move the mirror (syncpoint_mirror.h); waits and events park
// in the mirror exactly as with the simulated GPU (the sim's CtrlDevice over the mirror table),
// never in a blocking host call. Two things are never forwarded, because on a real host they
// reach outside the sandbox: SYNCPT_INCR of a syncpoint none of the guest's channels owns (it
// would move another host client's fence: AccessDenied), and MODULE_MUTEX (a host mlock held by a
// guest would stall the host's own drivers: the sentry's own module mutexes answer, as simulated).
#pragma once

#include "hostshim/host/host_session.h"
#include "hostshim/sim/sync/ctrl_device.h"

namespace nvsentry::hostshim::host {

class CtrlSession : public HostSession {
 public:
  CtrlSession(HostContext& ctx, const abi::DeviceDesc& device, UniqueFd host_fd);
  Result Ioctl(Call& call) override;
  abi::NvError QueryEvent(uint32_t id, int* eventfd) override {
    return sim_.QueryEvent(id, eventfd);
  }

 private:
  // Reads `id` on the host (traced for `call`) and moves the mirror to it.
  abi::NvError Refresh(const Call& call, uint32_t id);
  // SYNCPT_INCR: a kept syncpoint's guest count, or an owned host syncpoint.
  Result Increment(Call& call);
  sim::CtrlDevice sim_;
};

}  // namespace nvsentry::hostshim::host
