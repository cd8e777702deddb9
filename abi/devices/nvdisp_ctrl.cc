#include "abi/devices/nvdisp_ctrl.h"

#include "abi/layout_check.h"

namespace nvsentry::abi::nvdisp_ctrl {

std::span<const IoctlDesc> Ioctls() { return {}; }

}  // namespace nvsentry::abi::nvdisp_ctrl
