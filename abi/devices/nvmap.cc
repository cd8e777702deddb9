#include "abi/devices/nvmap.h"

#include "abi/layout_check.h"

namespace nvsentry::abi::nvmap {

std::span<const IoctlDesc> Ioctls() { return {}; }

}  // namespace nvsentry::abi::nvmap
