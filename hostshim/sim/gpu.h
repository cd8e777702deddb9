// The built-in simulated Tegra X1 GPU: one per sentry, shared by every guest process, like the
// hardware of one machine. Opening a device node makes a backend session on it.
#pragma once

#include <memory>

#include "abi/catalogue.h"
#include "hostshim/backend.h"
#include "hostshim/sim/syncpoints.h"

namespace nvsentry::hostshim::sim {

class Gpu {
 public:
  Gpu() = default;
  std::unique_ptr<DeviceBackend> Open(const abi::DeviceDesc& device);
  Syncpoints& syncpoints() { return syncpoints_; }

 private:
  Syncpoints syncpoints_;
};

}  // namespace nvsentry::hostshim::sim
