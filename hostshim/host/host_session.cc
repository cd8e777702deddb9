#include "hostshim/host/host_session.h"

#include "hostshim/rate_limited_log.h"

namespace nvsentry::hostshim::host {

bool HostSession::Translates(abi::DeviceId id) {
  return id == abi::DeviceId::kNvhostCtrl || id == abi::DeviceId::kNvhostAsGpu ||
         id == abi::DeviceId::kNvhostCtrlGpu || id == abi::DeviceId::kNvhostGpu;
}

Result HostSession::Ioctl(Call& call) {
  NVS_LOG_LIMITED(spdlog::level::warn, "host backend: {} on {} is not translated; NotSupported",
                  std::string(call.desc.name), std::string(device_.path));
  return Result::Done(abi::NvError::kNotSupported);
}

}  // namespace nvsentry::hostshim::host
