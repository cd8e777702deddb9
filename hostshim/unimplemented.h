// The defined answer for a catalogued ioctl that no backend implements yet: NotSupported
// (EOPNOTSUPP for the guest) and one log line naming the device and the call. The seven channel
// nodes share one table (Switchbrew), GPU channel calls (magics 'H', 'G') and host1x engine
// channel calls (magic 0) alike: one of the other kind is said to be that, not "not implemented
// yet" under the name of a call the device does not make (NVGPU_IOCTL_CHANNEL_SUBMIT_GPFIFO on
// /dev/nvhost-vic, say).
#pragma once

#include "hostshim/backend.h"
#include "hostshim/events.h"

namespace nvsentry::hostshim {

Result Unimplemented(const Call& call);

// Serves a device whose ioctls are not simulated yet: every call is Unimplemented. QueryEvent
// already answers as Switchbrew says for the device (the events exist; nothing signals them yet).
class UnimplementedDevice : public DeviceBackend {
 public:
  // `budget` (may be null) is charged for the session's event fds (open_fds).
  explicit UnimplementedDevice(const abi::DeviceDesc& device, BudgetAccount* budget = nullptr)
      : device_(device), events_(budget) {}
  Result Ioctl(Call& call) override { return Unimplemented(call); }
  abi::NvError QueryEvent(uint32_t id, int* eventfd) override;

 private:
  const abi::DeviceDesc& device_;
  EventSet events_;
};

}  // namespace nvsentry::hostshim
