// /dev/nvmap on the simulated GPU: one device session, a thin dispatcher that hands each nvmap
// ioctl to the shared Nvmap on behalf of the calling guest process (handles belong to the
// process, not to the fd). Ioctls seed 000 answers with NotSupported stay NotSupported.
#pragma once

#include "hostshim/backend.h"
#include "hostshim/sim/nvmap.h"

namespace nvsentry::hostshim::sim {

class NvmapDevice : public DeviceBackend {
 public:
  explicit NvmapDevice(Nvmap& nvmap) : nvmap_(nvmap) {}
  // A call without a live calling process (no caller, tgid < 0) is BadParameter.
  Result Ioctl(Call& call) override;

 private:
  Nvmap& nvmap_;
};

}  // namespace nvsentry::hostshim::sim
