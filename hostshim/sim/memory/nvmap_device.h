// /dev/nvmap on the simulated GPU: one device session, a thin dispatcher that hands each nvmap
// ioctl to the shared Nvmap on behalf of the calling guest process (handles belong to the
// process, not to the fd). Ioctls Switchbrew answers with NotSupported stay NotSupported.
#pragma once

#include "hostshim/backend.h"
#include "hostshim/ioctl_table.h"
#include "hostshim/sim/memory/nvmap.h"

namespace nvsentry::hostshim::sim {

class NvmapDevice : public DeviceBackend {
 public:
  explicit NvmapDevice(Nvmap& nvmap) : nvmap_(nvmap) {}
  // A call without a live calling process (no caller, tgid < 0) is BadParameter.
  Result Ioctl(Call& call) override;
  // The codes its table binds and those it leaves unimplemented (the catalogue check).
  static IoctlTableInfo Table();

 private:
  using Handler = abi::NvError (NvmapDevice::*)(Call& call, pid_t tgid);
  static std::span<const IoctlHandler<Handler>> Handlers();
  abi::NvError Create(Call& call, pid_t tgid);
  abi::NvError FromId(Call& call, pid_t tgid);
  abi::NvError Alloc(Call& call, pid_t tgid);
  abi::NvError Free(Call& call, pid_t tgid);
  abi::NvError Param(Call& call, pid_t tgid);
  abi::NvError GetId(Call& call, pid_t tgid);
  abi::NvError ExportForAruid(Call& call, pid_t tgid);
  abi::NvError IsOwnedByAruid(Call& call, pid_t tgid);
  abi::NvError RemoveExportForAruid(Call& call, pid_t tgid);

  Nvmap& nvmap_;
};

}  // namespace nvsentry::hostshim::sim
