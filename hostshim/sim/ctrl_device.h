// /dev/nvhost-ctrl on the simulated GPU: syncpoint read, increment, wait.
#pragma once

#include "hostshim/backend.h"
#include "hostshim/events.h"
#include "hostshim/sim/syncpoints.h"

namespace nvsentry::hostshim::sim {

class CtrlDevice : public DeviceBackend {
 public:
  explicit CtrlDevice(Syncpoints& syncpoints) : syncpoints_(syncpoints) {}
  Result Ioctl(Call& call) override;
  // Syncpoint events 0x10000000 | slot (slot < 64); signalled by the event ioctls (issue 5).
  abi::NvError QueryEvent(uint32_t id, int* eventfd) override;

 private:
  Result Wait(Call& call, bool report_value);
  Syncpoints& syncpoints_;
  EventSet events_;
};

}  // namespace nvsentry::hostshim::sim
