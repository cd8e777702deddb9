#include "abi/devices/nvhdcp_up_ctrl.h"

#include "abi/layout_check.h"

namespace nvsentry::abi::nvhdcp_up_ctrl {

std::span<const IoctlDesc> Ioctls() { return {}; }

}  // namespace nvsentry::abi::nvhdcp_up_ctrl
