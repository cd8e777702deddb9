#include "proxy/device_open.h"

#include <cerrno>

#include "proxy/nvdrv_service.h"

namespace nvsentry::proxy {

abi::NvError MayOpen(const GuestConfig& config, const abi::DeviceDesc* dev) {
  if (dev == nullptr || !dev->fw.Contains(config.policy.firmware()))
    return abi::NvError::kDeviceNotFound;
  // The guest's identity first, whatever the policy says of the node: a device its service's
  // mask does not grant is AccessDenied and the debuggers without debug mode NotSupported, so a
  // policy that lists such a device as "deny" (as `policy init` and --learn write them) answers
  // exactly as the service does.
  if (!config.policy.permissions().MayOpen(*dev)) return abi::NvError::kAccessDenied;
  if ((dev->flags & abi::kNeedsDebugMode) && !config.policy.debug_mode())
    return abi::NvError::kNotSupported;
  // backend = "deny" on a device the identity allows: the node does not exist for the guest (not
  // a violation: there is nothing to open, whatever the policy's action).
  if (config.policy.rules().Device(dev->id).backend == policy::Backend::kDeny)
    return abi::NvError::kDeviceNotFound;
  return abi::NvError::kSuccess;
}

NewSession MakeSession(const GuestConfig& config, const abi::DeviceDesc& dev,
                       hostshim::Driver& driver) {
  NewSession out;
  std::unique_ptr<hostshim::DeviceBackend> backend =
      dev.id == abi::DeviceId::kNvdrv ? std::make_unique<NvdrvService>(config, driver)
                                      : driver.Open(dev, out.refused);
  if (!backend) return out;  // the driver cannot keep another session of this kind
  out.session = std::make_shared<Session>(dev, std::move(backend), config);
  // The open_fds budget counts direct sessions and nvdrv fds together.
  if (abi::NvError e = out.session->ChargeFd(); e != abi::NvError::kSuccess) return {nullptr, e};
  return out;
}

int OpenErrno(abi::NvError err) {
  switch (err) {
    case abi::NvError::kSuccess: return 0;
    case abi::NvError::kDeviceNotFound: return ENOENT;
    case abi::NvError::kAccessDenied: return EACCES;
    case abi::NvError::kNotSupported: return EOPNOTSUPP;
    default: return abi::NvErrorToErrno(err);
  }
}

}  // namespace nvsentry::proxy
