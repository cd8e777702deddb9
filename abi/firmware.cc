#include "abi/firmware.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace nvsentry::abi {

std::string FirmwareString(Firmware v) {
  return absl::StrCat(v >> 16, ".", (v >> 8) & 0xFF, ".", v & 0xFF);
}

std::optional<Firmware> ParseFirmware(std::string_view s) {
  std::vector<std::string> parts = absl::StrSplit(std::string(s), '.');
  if (parts.empty() || parts.size() > 3) return std::nullopt;
  uint32_t v[3] = {0, 0, 0};
  for (size_t i = 0; i < parts.size(); ++i) {
    if (parts[i].empty() || !absl::SimpleAtoi(parts[i], &v[i]) || v[i] > 255) return std::nullopt;
  }
  return Fw(v[0], v[1], v[2]);
}

std::string FwRangeString(const FwRange& r) {
  if (r.always()) return "";
  if (r.end == FwRange{}.end) return absl::StrCat("[", FirmwareString(r.min), "+]");
  return absl::StrCat("[", FirmwareString(r.min), "-", FirmwareString(r.end), ")");
}

}  // namespace nvsentry::abi
