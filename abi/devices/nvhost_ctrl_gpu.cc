#include "abi/devices/nvhost_ctrl_gpu.h"

#include "abi/layout_check.h"

namespace nvsentry::abi::nvhost_ctrl_gpu {

std::span<const IoctlDesc> Ioctls() { return {}; }

}  // namespace nvsentry::abi::nvhost_ctrl_gpu
