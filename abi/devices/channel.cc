#include "abi/devices/channel.h"

#include "abi/layout_check.h"

namespace nvsentry::abi::channel {

std::span<const IoctlDesc> Ioctls() { return {}; }

}  // namespace nvsentry::abi::channel
