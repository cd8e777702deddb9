#include "abi/device_events.h"

namespace nvsentry::abi {

NvError EventIdVerdict(const DeviceDesc& device, uint32_t id) {
  switch (device.id) {
    case DeviceId::kNvhostGpu:  // 1 SM breakpoint, 2 SM pause, 3 error notifier
      return id >= 1 && id <= 3 ? NvError::kSuccess : NvError::kBadParameter;
    case DeviceId::kNvhostCtrlGpu:  // 1 error event, 2 (unnamed in the ABI)
      return id >= 1 && id <= 2 ? NvError::kSuccess : NvError::kBadParameter;
    case DeviceId::kNvhostDbgGpu:
    case DeviceId::kNvhostProfGpu:  // the id is ignored: one event
      return NvError::kSuccess;
    case DeviceId::kNvhostCtrl:  // syncpoint events: 0x10000000 | slot, slot < 64
      return (id >> 28) == 1 && (id & 0x0FFFFFFF) < 64 ? NvError::kSuccess : NvError::kBadParameter;
    default: return NvError::kNotSupported;
  }
}

bool SingleEvent(const DeviceDesc& device) {
  return device.id == DeviceId::kNvhostDbgGpu || device.id == DeviceId::kNvhostProfGpu;
}

}  // namespace nvsentry::abi
