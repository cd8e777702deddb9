// nvdisp: the ioctl table of seed 000 (filled in by the catalogue work).
#pragma once

#include <span>

#include "abi/catalogue.h"

namespace nvsentry::abi::nvdisp {

std::span<const IoctlDesc> Ioctls();

}  // namespace nvsentry::abi::nvdisp
