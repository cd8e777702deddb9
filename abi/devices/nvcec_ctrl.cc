#include "abi/devices/nvcec_ctrl.h"

#include "abi/layout_check.h"

namespace nvsentry::abi::nvcec_ctrl {

std::span<const IoctlDesc> Ioctls() { return {}; }

}  // namespace nvsentry::abi::nvcec_ctrl
