// nverpt_ctrl: the ioctl table of seed 000 (filled in by the catalogue work).
#pragma once

#include <span>

#include "abi/catalogue.h"

namespace nvsentry::abi::nverpt_ctrl {

std::span<const IoctlDesc> Ioctls();

}  // namespace nvsentry::abi::nverpt_ctrl
