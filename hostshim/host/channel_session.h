// The guest's channel sessions forwarded to the host (docs/host-passthrough.md).
#pragma once

#include "hostshim/host/host_session.h"

namespace nvsentry::hostshim::host {

class ChannelSession : public HostSession {
 public:
  ChannelSession(HostContext& ctx, const abi::DeviceDesc& device, UniqueFd host_fd)
      : HostSession(ctx, device, abi::l4t::L4tNode::kNvhostGpu, std::move(host_fd)) {}
  Result Ioctl(Call& call) override;
};

}  // namespace nvsentry::hostshim::host
