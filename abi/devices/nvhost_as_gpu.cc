#include "abi/devices/nvhost_as_gpu.h"

#include "abi/layout_check.h"

namespace nvsentry::abi::nvhost_as_gpu {

std::span<const IoctlDesc> Ioctls() { return {}; }

}  // namespace nvsentry::abi::nvhost_as_gpu
