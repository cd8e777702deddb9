// The guest's as sessions forwarded to the host (docs/host-passthrough.md).
#pragma once

#include "hostshim/host/host_session.h"

namespace nvsentry::hostshim::host {

class AsSession : public HostSession {
 public:
  AsSession(HostContext& ctx, const abi::DeviceDesc& device, UniqueFd host_fd)
      : HostSession(ctx, device, abi::l4t::L4tNode::kNvhostAsGpu, std::move(host_fd)) {}
  Result Ioctl(Call& call) override;
};

}  // namespace nvsentry::hostshim::host
