#include "hostshim/unimplemented.h"

#include "hostshim/rate_limited_log.h"
#include "spdlog/spdlog.h"

namespace nvsentry::hostshim {

Result Unimplemented(const abi::IoctlDesc& desc) {
  NVS_LOG_LIMITED(spdlog::level::warn, "{} (0x{:08X}) is not implemented yet: answering NotSupported", desc.name,
               desc.code);
  return Result::Done(abi::NvError::kNotSupported);
}

}  // namespace nvsentry::hostshim

namespace nvsentry::hostshim {

abi::NvError EventIdVerdict(const abi::DeviceDesc& device, uint32_t id) {
  switch (device.id) {
    case abi::DeviceId::kNvhostGpu:  // 1 SM breakpoint, 2 SM pause, 3 error notifier
      return id >= 1 && id <= 3 ? abi::NvError::kSuccess : abi::NvError::kBadParameter;
    case abi::DeviceId::kNvhostCtrlGpu:  // 1 error event, 2 (unnamed in the seed)
      return id >= 1 && id <= 2 ? abi::NvError::kSuccess : abi::NvError::kBadParameter;
    case abi::DeviceId::kNvhostDbgGpu:
    case abi::DeviceId::kNvhostProfGpu:  // the id is ignored: one event
      return abi::NvError::kSuccess;
    case abi::DeviceId::kNvhostCtrl:  // syncpoint events: 0x10000000 | slot, slot < 64
      return (id >> 28) == 1 && (id & 0x0FFFFFFF) < 64 ? abi::NvError::kSuccess
                                                        : abi::NvError::kBadParameter;
    default: return abi::NvError::kNotSupported;
  }
}

abi::NvError UnimplementedDevice::QueryEvent(uint32_t id, int* eventfd) {
  abi::NvError v = EventIdVerdict(device_, id);
  if (v != abi::NvError::kSuccess) return v;
  bool single = device_.id == abi::DeviceId::kNvhostDbgGpu || device_.id == abi::DeviceId::kNvhostProfGpu;
  int fd = events_.Get(single ? 0 : id);
  if (fd < 0) return abi::NvError::kInsufficientMemory;
  *eventfd = fd;
  return abi::NvError::kSuccess;
}

}  // namespace nvsentry::hostshim
