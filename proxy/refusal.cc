#include "proxy/refusal.h"

#include <string>

#include "absl/strings/escaping.h"
#include "hostshim/rate_limited_log.h"
#include "spdlog/spdlog.h"

namespace nvsentry::proxy {

std::optional<abi::MissingPermission> MissingBit(const GuestConfig& c, int bit) {
  if (bit == abi::kNoPermissionBit ||
      c.policy.permissions().Has(static_cast<abi::PermissionBit>(bit)))
    return std::nullopt;
  const std::string& source = c.policy.rules().source;
  // The default policy (adjusted by --service and the like) says "(default)".
  const bool from_file = !source.empty() && source.front() != '(';
  return abi::MissingPermission{c.policy.service(), c.policy.permission_mask(), c.policy.firmware(),
                                bit, from_file ? std::string_view(source) : std::string_view()};
}

std::optional<abi::MissingPermission> RefusedOpen(const GuestConfig& c, const abi::DeviceDesc* dev,
                                                  abi::NvError verdict) {
  if (dev == nullptr || verdict != abi::NvError::kAccessDenied) return std::nullopt;
  return MissingBit(c, dev->permission_bit);
}

std::optional<abi::MissingPermission> RefusedCall(const GuestConfig& c, const abi::DeviceDesc& dev,
                                                  const abi::IoctlDesc* desc, abi::NvError err) {
  if (desc == nullptr || err != abi::NvError::kAccessDenied) return std::nullopt;
  std::optional<abi::MissingPermission> missing =
      MissingBit(c, abi::IoctlPermissionBit(dev, *desc));
  if (missing)
    NVS_LOG_LIMITED(spdlog::level::warn, "{}: {}: AccessDenied: {}", dev.path, desc->name,
                    missing->Hint());
  return missing;
}

void LogRefusedOpen(std::string_view path, const abi::MissingPermission& missing) {
  // The path may be the guest's: escaped, so that it cannot forge a log line.
  NVS_LOG_LIMITED(spdlog::level::warn, "open \"{}\": AccessDenied: {}",
                  absl::CEscape(absl::string_view(path.data(), path.size())), missing.Hint());
}

}  // namespace nvsentry::proxy
