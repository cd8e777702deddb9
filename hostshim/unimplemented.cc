#include "hostshim/unimplemented.h"

#include "abi/device_events.h"
#include "hostshim/rate_limited_log.h"
#include "spdlog/spdlog.h"

namespace nvsentry::hostshim {

Result Unimplemented(const abi::IoctlDesc& desc) {
  NVS_LOG_LIMITED(spdlog::level::warn,
                  "{} (0x{:08X}) is not implemented yet: answering NotSupported", desc.name,
                  desc.code);
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
