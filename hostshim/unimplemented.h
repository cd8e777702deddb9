// The defined answer for a catalogued ioctl that no backend implements yet: NotSupported
// (EOPNOTSUPP for the guest) and one log line naming it.
#pragma once

#include "hostshim/backend.h"

namespace nvsentry::hostshim {

Result Unimplemented(const abi::IoctlDesc& desc);

// Serves a device whose ioctls are not simulated yet: every call is Unimplemented.
class UnimplementedDevice : public DeviceBackend {
 public:
  Result Ioctl(Call& call) override { return Unimplemented(call.desc); }
};

}  // namespace nvsentry::hostshim
