// A device's ioctl handlers, bound to their codes in one table (by the catalogue's constant
// names), so each code is written once: the table dispatches, and a unit test holds every
// device's table against the catalogue (tests/unit/hostshim/sim/memory/ioctl_tables_test.cc): a
// handler for every catalogued code the device does not list as left unimplemented, none for a code
// the catalogue lacks.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace nvsentry::hostshim {

template <typename Fn>
struct IoctlHandler {
  uint32_t code;
  Fn handle;  // a member function of the device
};

// The handler bound to `code`, or null.
template <typename Fn>
const IoctlHandler<Fn>* FindHandler(std::span<const IoctlHandler<Fn>> table, uint32_t code) {
  for (const IoctlHandler<Fn>& h : table)
    if (h.code == code) return &h;
  return nullptr;
}

// The codes a table binds, in its order.
template <typename Fn>
std::vector<uint32_t> BoundCodes(std::span<const IoctlHandler<Fn>> table) {
  std::vector<uint32_t> codes;
  for (const IoctlHandler<Fn>& h : table) codes.push_back(h.code);
  return codes;
}

// What a device says about its table, for the catalogue check: the codes it handles and the
// catalogued codes it leaves unimplemented on purpose (answered NotSupported with a log line).
struct IoctlTableInfo {
  std::span<const uint32_t> handled;
  std::span<const uint32_t> unimplemented;
};

}  // namespace nvsentry::hostshim
