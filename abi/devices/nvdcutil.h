// /dev/nvdcutil-disp0/1: display test hooks (CRC, virtual EDID, DSI packets, DP tests)
// (Switchbrew).
#pragma once

#include <cstdint>
#include <span>

#include "abi/catalogue.h"

namespace nvsentry::abi::nvdcutil {

constexpr uint32_t kEnableCrc = 0x40010501;
constexpr uint32_t kVirtualEdidEnable = 0x40010502;
constexpr uint32_t kVirtualEdidSetData = 0x42040503;
constexpr uint32_t kGetMode = 0x803C0504;
constexpr uint32_t kBeginTelemetryTest = 0x40010505;
constexpr uint32_t kDsiPacketTestShortWrite = 0x400C0506;
constexpr uint32_t kDsiPacketTestLongWrite = 0x40F80507;
constexpr uint32_t kDsiPacketTestRead = 0xC0F40508;
constexpr uint32_t kDpElectricTestEn = 0x40010509;        // 10.0.0+
constexpr uint32_t kDpElectricTestSettings = 0xC020050A;  // 10.0.0+
constexpr uint32_t kDpConfRead = 0x8070050B;              // 11.0.0+

// Switchbrew gives no argument layouts for this device: every entry is opaque.

std::span<const IoctlDesc> Ioctls();

}  // namespace nvsentry::abi::nvdcutil
