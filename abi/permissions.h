// What a guest's NvDrvPermission mask grants. Every part of nvsentry that asks "may this guest do
// X" because of its service's mask asks here (the open check, the nvdrv service commands, nvmap's
// imports and exports, the address-space windows), so the meaning of each bit is written once.
// The bits and the masks per service and firmware: abi/services.h; docs/guest-abi.md.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "abi/catalogue.h"
#include "abi/services.h"

namespace nvsentry::abi {

class Permissions {
 public:
  constexpr Permissions() = default;  // nothing granted
  constexpr explicit Permissions(uint32_t mask) : mask_(mask) {}
  constexpr uint32_t mask() const { return mask_; }
  constexpr bool Has(PermissionBit bit) const { return ((mask_ >> bit) & 1u) != 0; }

  // The device's node opens (a device no bit guards always does).
  constexpr bool MayOpen(const DeviceDesc& dev) const {
    return dev.permission_bit == kNoPermissionBit ||
           Has(static_cast<PermissionBit>(dev.permission_bit));
  }
  // nvmap FROM_ID of another process's object: any object (bit 9), or one exported to this
  // guest's applet resource user id (bit 12). The caller's own objects need neither.
  constexpr bool MayImportAnyObject() const { return Has(kPermImportMemory); }
  constexpr bool MayImportExportedObject() const { return Has(kPermImportExported); }
  // nvmap EXPORT_FOR_ARUID and REMOVE_EXPORT_FOR_ARUID (bit 14).
  constexpr bool MayExportForAruid() const { return Has(kPermExportForAruid); }
  // nvdrv SetAruid without the aruid check (bit 10), SetGraphicsFirmwareMemoryMarginEnabled
  // (bit 11).
  constexpr bool MaySetUncheckedAruid() const { return Has(kPermNoCheckedAruid); }
  constexpr bool MaySetMemoryMargin() const { return Has(kPermGraphicsFirmwareMemoryMargin); }
  // Address spaces: the high GPU VA window (bit 13; docs/guest-abi.md says how nvsentry reads it
  // so that every service keeps a big-page region), and the wide device window (bit 15).
  constexpr bool HighGpuVa() const { return Has(kPermGpuVaHigh); }
  constexpr bool FullVaRanges() const { return Has(kPermFullVaRanges); }

 private:
  uint32_t mask_ = 0;
};

// The bit an ioctl needs beyond its device's open, when a refusal of it can be the mask's:
// nvmap FROM_ID of another process's object (9; bit 12 grants those exported to the aruid),
// EXPORT_FOR_ARUID and REMOVE_EXPORT_FOR_ARUID (14), nvdrv SetAruidWithoutCheck (10) and
// SetGraphicsFirmwareMemoryMarginEnabled (11); kNoPermissionBit for every other ioctl.
int IoctlPermissionBit(const DeviceDesc& dev, const IoctlDesc& desc);

// An open or a call refused because the guest's mask lacks `bit`: what the log and the trace say
// of it, so that the refusal says what would grant it.
struct MissingPermission {
  std::string_view service;  // the guest's
  uint32_t mask;             // the guest's NvDrvPermission mask
  Firmware fw;
  int bit;
  std::string_view policy_file;  // empty: the default policy, which the command line adjusts

  std::string_view BitName() const;
  // The services whose mask on `fw` holds the bit (none for bit 6, TSEC).
  std::vector<std::string_view> GrantedBy() const;
  // The mask with the bit added, for a policy's permission_mask.
  uint32_t MaskWithBit() const { return mask | (1u << bit); }
  // "service nvdrv (mask 0xA83B) lacks permission bit 8 (Display), which nvdrv:s and nvdrv:t
  // hold: run with --service=nvdrv:t, or a policy file (--policy) whose [guest] has
  // permission_mask = 0xA93B". The service named is one that holds the guest's other bits too,
  // where one does; with a policy file, the line of that file to change.
  std::string Hint() const;
};

}  // namespace nvsentry::abi
