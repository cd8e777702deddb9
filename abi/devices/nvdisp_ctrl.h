// /dev/nvdisp-ctrl: display controller queries: outputs, EDID, hotplug, vblank events (Switchbrew).
#pragma once

#include <cstdint>
#include <span>

#include "abi/catalogue.h"

namespace nvsentry::abi::nvdisp_ctrl {

constexpr uint32_t kNumOutputs = 0x80040212;
constexpr uint32_t kGetDisplayProperties = 0xC0140213;
constexpr uint32_t kQueryEdid = 0xC1100214;
constexpr uint32_t kGetExtHpdInOutEvents = 0xC0080216;  // 3.0.0+
constexpr uint32_t kGetExtHpdInEventV1 = 0xC0040216;    // before 3.0.0
constexpr uint32_t kGetExtHpdOutEventV1 = 0xC0040217;   // before 3.0.0
constexpr uint32_t kGetVblankHead0Event = 0xC0100218;
constexpr uint32_t kGetVblankHead1Event = 0xC0100219;
constexpr uint32_t kSuspend = 0xC0040220;
constexpr uint32_t kIsDisplayOled = 0x80010224;  // 11.0.0+

// Switchbrew gives no argument layouts for this device: every entry is opaque.

std::span<const IoctlDesc> Ioctls();

}  // namespace nvsentry::abi::nvdisp_ctrl
