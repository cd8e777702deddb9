// /dev/nvhost-gpu on the simulated GPU: one GPU channel per open. (Owned by the channel work:
// GPFIFO submission, fences, the error notifier, events, the command processor on the GPU's
// engine threads.) Other devices reach a channel through the caller's fd: the address space's
// BIND_CHANNEL calls BindAddressSpace.
#pragma once

#include <memory>

#include "hostshim/backend.h"
#include "hostshim/sim/memory/address_space.h"

namespace nvsentry::hostshim::sim {

class ChannelDevice : public DeviceBackend {
 public:
  // Binds the channel to `as` (NVGPU_AS_IOCTL_BIND_CHANNEL). Success, or InvalidState when the
  // channel is already bound to another address space.
  virtual abi::NvError BindAddressSpace(std::shared_ptr<AddressSpace> as) = 0;
};

}  // namespace nvsentry::hostshim::sim
