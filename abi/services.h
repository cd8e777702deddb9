// The nvdrv services of Switchbrew and the NvDrvPermission mask each grants per firmware version.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "abi/firmware.h"

namespace nvsentry::abi {

// NvDrvPermission bits (Switchbrew).
enum PermissionBit : int {
  kPermGpu = 0,
  kPermGpuDebug = 1,
  kPermGpuSchedule = 2,
  kPermVic = 3,
  kPermVideoEncoder = 4,
  kPermVideoDecoder = 5,
  kPermTsec = 6,
  kPermJpeg = 7,
  kPermDisplay = 8,
  kPermImportMemory = 9,
  kPermNoCheckedAruid = 10,
  kPermGraphicsFirmwareMemoryMargin = 11,
  kPermImportExported = 12,
  kPermGpuVaHigh = 13,
  kPermExportForAruid = 14,
  kPermFullVaRanges = 15,
};

struct PermissionBitDesc {
  int bit;
  std::string_view name;
  std::string_view grants;
};
std::span<const PermissionBitDesc> PermissionBits();

// nvdrv's mask on the latest firmware: what the simulated GPU assumes when nobody says.
inline constexpr uint32_t kDefaultServiceMask = 0xA83B;

// "nvdrv", "nvdrv:a", "nvdrv:s", "nvdrv:t".
std::span<const std::string_view> ServiceNames();

// The mask `service` has on firmware `fw`, or nullopt for an unknown service. Switchbrew gives no
// mask for the factory service nvdrv:t; nvsentry gives it the union of the other three services'
// masks on the same firmware (a factory tool exercises every block).
std::optional<uint32_t> ServiceMask(std::string_view service, Firmware fw);

}  // namespace nvsentry::abi
