// /dev/nvhost-ctrl on the simulated GPU: syncpoint read, increment, wait.
#pragma once

#include "hostshim/backend.h"
#include "hostshim/sim/syncpoints.h"

namespace nvsentry::hostshim::sim {

class CtrlDevice : public DeviceBackend {
 public:
  explicit CtrlDevice(Syncpoints& syncpoints) : syncpoints_(syncpoints) {}
  Result Ioctl(Call& call) override;

 private:
  Result Wait(Call& call, bool report_value);
  Syncpoints& syncpoints_;
};

}  // namespace nvsentry::hostshim::sim
