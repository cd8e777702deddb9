#include "abi/devices/nvdcutil.h"

#include "abi/layout_check.h"

namespace nvsentry::abi::nvdcutil {

std::span<const IoctlDesc> Ioctls() { return {}; }

}  // namespace nvsentry::abi::nvdcutil
