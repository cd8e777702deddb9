#include "abi/devices/nvdisp.h"

#include "abi/layout_check.h"

namespace nvsentry::abi::nvdisp {

std::span<const IoctlDesc> Ioctls() { return {}; }

}  // namespace nvsentry::abi::nvdisp
