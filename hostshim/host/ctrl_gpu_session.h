// The guest's ctrl-gpu sessions forwarded to the host (docs/host-passthrough.md). Queries of the
// GPU go to the host in the L4T layouts (ctrl_gpu_xlate.h). What is GPU-wide on a real host stays
// in the sentry, answered as the simulated GPU answers (the sim's CtrlGpuDevice over the guest's
// own GpuControlState): the ZBC table and the MMU debug mode (other host clients' clears and
// faults), WAIT_FOR_PAUSE (it locks down every SM of the host's GPU and reports every client's
// warps), and the error channel's user data.
#pragma once

#include "hostshim/host/host_session.h"
#include "hostshim/sim/engines/ctrl_gpu_device.h"

namespace nvsentry::hostshim::host {

class CtrlGpuSession : public HostSession {
 public:
  CtrlGpuSession(HostContext& ctx, const abi::DeviceDesc& device, UniqueFd host_fd);
  Result Ioctl(Call& call) override;
  abi::NvError QueryEvent(uint32_t id, int* eventfd) override {
    return sim_.QueryEvent(id, eventfd);
  }

 private:
  abi::NvError GetCharacteristics(Call& call);
  abi::NvError GetTpcMasks(Call& call);
  abi::NvError FlushL2(Call& call);
  abi::NvError SetSmDebugMode(Call& call);
  abi::NvError VsmsMapping(Call& call);
  // The host's NUM_VSMS (traced for `call`).
  abi::NvError NumVsms(const Call& call, uint32_t* n);

  sim::CtrlGpuDevice sim_;
};

}  // namespace nvsentry::hostshim::host
