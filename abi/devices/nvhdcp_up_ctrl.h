// /dev/nvhdcp_up-ctrl: HDCP link protection status and control for the external output
// (Switchbrew).
#pragma once

#include <cstdint>
#include <span>

#include "abi/catalogue.h"

namespace nvsentry::abi::nvhdcp_up_ctrl {

constexpr uint32_t kReadStatus = 0xC4880401;
constexpr uint32_t kReadM = 0xC4880402;
constexpr uint32_t kEnable = 0x40010403;
constexpr uint32_t kCtrlStateTransitEventData = 0xC0080404;
constexpr uint32_t kCtrlStateCb = 0xC0010405;

// Switchbrew gives no argument layouts for this device: every entry is opaque.

std::span<const IoctlDesc> Ioctls();

}  // namespace nvsentry::abi::nvhdcp_up_ctrl
