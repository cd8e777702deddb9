#include "abi/devices/nvhost_dbg_gpu.h"

#include "abi/layout_check.h"

namespace nvsentry::abi::nvhost_dbg_gpu {

std::span<const IoctlDesc> Ioctls() { return {}; }

}  // namespace nvsentry::abi::nvhost_dbg_gpu
