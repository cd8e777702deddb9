// Firmware versions, for the ioctls and devices whose codes or layouts changed between releases.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

namespace nvsentry::abi {

// major.minor.micro packed as 0x00MMmmuu so versions compare as integers.
using Firmware = uint32_t;
constexpr Firmware Fw(uint32_t major, uint32_t minor, uint32_t micro) {
  return (major << 16) | (minor << 8) | micro;
}
constexpr Firmware kLatestFirmware = Fw(20, 0, 0);

// [min, end): Switchbrew writes "[1.0.0-6.1.0]" for a code that 6.1.0 already replaced (its own
// notes say "[6.1.0+] modified"; same for GET_NEXT_OVERRUN_EVENT at 3.0.0), so the upper bound
// of a range is the first version that no longer has it.
struct FwRange {
  Firmware min = 0;
  Firmware end = std::numeric_limits<Firmware>::max();
  constexpr bool Contains(Firmware v) const { return v >= min && v < end; }
  constexpr bool Overlaps(const FwRange& o) const { return min < o.end && o.min < end; }
  constexpr bool always() const { return min == 0 && end == std::numeric_limits<Firmware>::max(); }
};

std::string FirmwareString(Firmware v);
// "11.0.0", "3.0", "20" -> packed; nullopt when malformed or out of range.
std::optional<Firmware> ParseFirmware(std::string_view s);
// "[3.0.0+]", "[1.0.0-3.0.0)", "" for always.
std::string FwRangeString(const FwRange& r);

}  // namespace nvsentry::abi
