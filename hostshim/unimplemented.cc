#include "hostshim/unimplemented.h"

#include "abi/device_events.h"
#include "abi/ioctl_code.h"
#include "hostshim/rate_limited_log.h"
#include "spdlog/spdlog.h"

namespace nvsentry::hostshim {

namespace {

// For a channel node: which kind of channel call `code` is, when it is not the node's own kind;
// null otherwise (not a channel node, or its own kind).
const char* ForeignChannelCall(const abi::DeviceDesc& dev, uint32_t code) {
  using abi::DeviceId;
  const bool gpu_call = abi::IocMagic(code) == 'H' || abi::IocMagic(code) == 'G';
  switch (dev.id) {
    case DeviceId::kNvhostGpu:
      return gpu_call ? nullptr
                      : "a host1x engine channel call, which /dev/nvhost-gpu does not make";
    case DeviceId::kNvhostMsenc:
    case DeviceId::kNvhostNvdec:
    case DeviceId::kNvhostNvjpg:
    case DeviceId::kNvhostVic:
    case DeviceId::kNvhostDisplay:
    case DeviceId::kNvhostTsec:
      return gpu_call ? "a GPU channel call (/dev/nvhost-gpu's), which a host1x engine channel "
                        "does not make"
                      : nullptr;
    default: return nullptr;
  }
}

}  // namespace

Result Unimplemented(const Call& call) {
  const std::string_view device = call.device != nullptr ? call.device->path : "?";
  const char* foreign =
      call.device != nullptr ? ForeignChannelCall(*call.device, call.desc.code) : nullptr;
  if (foreign != nullptr)
    NVS_LOG_LIMITED(spdlog::level::warn,
                    "{}: ioctl 0x{:08X} ({} in the channel nodes' shared table) is {}: answering "
                    "NotSupported",
                    device, call.desc.code, call.desc.name, foreign);
  else
    NVS_LOG_LIMITED(spdlog::level::warn,
                    "{}: {} (0x{:08X}) is not implemented yet: answering NotSupported", device,
                    call.desc.name, call.desc.code);
  return Result::Done(abi::NvError::kNotSupported);
}

abi::NvError UnimplementedDevice::QueryEvent(uint32_t id, int* eventfd) {
  abi::NvError v = abi::EventIdVerdict(device_, id);
  if (v != abi::NvError::kSuccess) return v;
  int fd = events_.Get(abi::SingleEvent(device_) ? 0 : id);
  if (fd < 0) return abi::NvError::kInsufficientMemory;
  *eventfd = fd;
  return abi::NvError::kSuccess;
}

}  // namespace nvsentry::hostshim
