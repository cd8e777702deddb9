// /dev/nvcec-ctrl: HDMI CEC (consumer electronics control) messages and addresses (Switchbrew).
#pragma once

#include <cstdint>
#include <span>

#include "abi/catalogue.h"

namespace nvsentry::abi::nvcec_ctrl {

constexpr uint32_t kEnable = 0x40010301;
constexpr uint32_t kGetPaddr = 0x804C0302;
constexpr uint32_t kSetLaddr = 0x40040303;
constexpr uint32_t kWrite = 0xC04C0304;
constexpr uint32_t kRead = 0xC04C0305;
constexpr uint32_t kGetConnectionStatus = 0x804C0306;
constexpr uint32_t kGetWriteStatus = 0x804C0307;

// Switchbrew gives no argument layouts for this device: every entry is opaque.

std::span<const IoctlDesc> Ioctls();

}  // namespace nvsentry::abi::nvcec_ctrl
