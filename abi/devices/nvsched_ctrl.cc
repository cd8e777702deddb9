#include "abi/devices/nvsched_ctrl.h"

#include "abi/layout_check.h"

namespace nvsentry::abi::nvsched_ctrl {

std::span<const IoctlDesc> Ioctls() { return {}; }

}  // namespace nvsentry::abi::nvsched_ctrl
