// The defined answer for a catalogued ioctl that no backend implements yet: NotSupported
// (EOPNOTSUPP for the guest) and one log line naming it.
#pragma once

#include "hostshim/backend.h"
#include "hostshim/events.h"

namespace nvsentry::hostshim {

Result Unimplemented(const abi::IoctlDesc& desc);

// Serves a device whose ioctls are not simulated yet: every call is Unimplemented. QueryEvent
// already answers as Switchbrew says for the device (the events exist; nothing signals them yet).
class UnimplementedDevice : public DeviceBackend {
 public:
  // `budget` (may be null) is charged for the session's event fds (open_fds).
  explicit UnimplementedDevice(const abi::DeviceDesc& device, BudgetAccount* budget = nullptr)
      : device_(device), events_(budget) {}
  Result Ioctl(Call& call) override { return Unimplemented(call.desc); }
  abi::NvError QueryEvent(uint32_t id, int* eventfd) override;

 private:
  const abi::DeviceDesc& device_;
  EventSet events_;
};

}  // namespace nvsentry::hostshim
