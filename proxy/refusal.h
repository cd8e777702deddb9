// Refusals that come from the guest's NvDrvPermission mask, made to say what would grant them: an
// open of a device whose permission bit the mask lacks, and a call answered AccessDenied whose
// bit (abi::IoctlPermissionBit) it lacks. The log line (warn, rate-limited: shown by default) and
// the trace's record (proxy/trace.h) both carry the service, the bit and what grants it.
#pragma once

#include <optional>
#include <string_view>

#include "abi/catalogue.h"
#include "abi/nverror.h"
#include "abi/permissions.h"
#include "proxy/guest_config.h"

namespace nvsentry::proxy {

// What the guest's mask lacks for `bit`; nullopt when `bit` is kNoPermissionBit or held.
std::optional<abi::MissingPermission> MissingBit(const GuestConfig& c, int bit);

// An open answered `verdict` (proxy::MayOpen): the missing bit when the mask refused it.
std::optional<abi::MissingPermission> RefusedOpen(const GuestConfig& c, const abi::DeviceDesc* dev,
                                                  abi::NvError verdict);

// A call answered `err`: the missing bit when the mask refused it, logged ("PATH: NAME:
// AccessDenied: service ... lacks permission bit ...").
std::optional<abi::MissingPermission> RefusedCall(const GuestConfig& c, const abi::DeviceDesc& dev,
                                                  const abi::IoctlDesc* desc, abi::NvError err);

// The log line of an open the mask refused ("open PATH: AccessDenied: service ...").
void LogRefusedOpen(std::string_view path, const abi::MissingPermission& missing);

}  // namespace nvsentry::proxy
