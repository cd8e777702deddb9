#include "hostshim/sim/gpu.h"

#include "hostshim/sim/ctrl_device.h"
#include "hostshim/unimplemented.h"

namespace nvsentry::hostshim::sim {

std::unique_ptr<DeviceBackend> Gpu::Open(const abi::DeviceDesc& device) {
  switch (device.id) {
    case abi::DeviceId::kNvhostCtrl:
      return std::make_unique<CtrlDevice>(syncpoints_);
    default:
      return std::make_unique<UnimplementedDevice>(device);
  }
}

}  // namespace nvsentry::hostshim::sim
