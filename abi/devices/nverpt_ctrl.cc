#include "abi/devices/nverpt_ctrl.h"

#include "abi/layout_check.h"

namespace nvsentry::abi::nverpt_ctrl {

std::span<const IoctlDesc> Ioctls() { return {}; }

}  // namespace nvsentry::abi::nverpt_ctrl
