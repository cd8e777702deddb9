#include "abi/permissions.h"

#include "abi/devices/nvdrv.h"
#include "abi/devices/nvmap.h"
#include "absl/strings/str_format.h"

namespace nvsentry::abi {

int IoctlPermissionBit(const DeviceDesc& dev, const IoctlDesc& desc) {
  if (dev.id == DeviceId::kNvmap) {
    if (desc.code == nvmap::kFromId) return kPermImportMemory;
    if (desc.code == nvmap::kExportForAruid || desc.code == nvmap::kRemoveExportForAruid)
      return kPermExportForAruid;
  }
  if (dev.id == DeviceId::kNvdrv) {
    if (desc.code == nvdrv::kSetAruidWithoutCheck) return kPermNoCheckedAruid;
    if (desc.code == nvdrv::kSetGraphicsFirmwareMemoryMarginEnabled)
      return kPermGraphicsFirmwareMemoryMargin;
  }
  return kNoPermissionBit;
}

std::string_view MissingPermission::BitName() const {
  for (const PermissionBitDesc& p : PermissionBits())
    if (p.bit == bit) return p.name;
  return "?";
}

std::vector<std::string_view> MissingPermission::GrantedBy() const {
  std::vector<std::string_view> out;
  for (std::string_view s : ServiceNames()) {
    std::optional<uint32_t> m = ServiceMask(s, fw);
    if (m && ((*m >> bit) & 1u) != 0) out.push_back(s);
  }
  return out;
}

std::string MissingPermission::Hint() const {
  std::string text = absl::StrFormat("service %s (mask 0x%X) lacks permission bit %d (%s)", service,
                                     mask, bit, BitName());
  if (bit == kPermImportMemory) text += ", or bit 12 and an export to its aruid";
  const std::vector<std::string_view> by = GrantedBy();
  std::string holders;
  for (size_t i = 0; i < by.size(); ++i)
    holders += (i == 0 ? "" : i + 1 == by.size() ? " and " : ", ") + std::string(by[i]);
  if (by.empty())
    text += ", which no service holds on firmware " + FirmwareString(fw);
  else
    text += ", which " + holders + (by.size() == 1 ? " holds" : " hold");
  // The service to suggest: one that also holds every bit the guest has now, if there is one.
  std::string_view suggest = by.empty() ? std::string_view() : by.front();
  for (std::string_view s : by)
    if ((ServiceMask(s, fw).value_or(0) & MaskWithBit()) == MaskWithBit()) {
      suggest = s;
      break;
    }
  const std::string mask_line = absl::StrFormat("permission_mask = 0x%X", MaskWithBit());
  if (policy_file.empty()) {
    text += ": run with ";
    if (!by.empty()) text += "--service=" + std::string(suggest) + ", or ";
    text += "a policy file (--policy) whose [guest] has " + mask_line;
  } else {
    text += ": in " + std::string(policy_file) + ", [guest] ";
    if (!by.empty()) text += "service = \"" + std::string(suggest) + "\" or ";
    text += mask_line;
  }
  return text;
}

}  // namespace nvsentry::abi
