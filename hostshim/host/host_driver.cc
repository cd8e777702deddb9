#include "hostshim/host/host_driver.h"

#include <fcntl.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "hostshim/host/host_context.h"
#include "hostshim/host/host_port.h"
#include "hostshim/host/host_session.h"
#include "hostshim/host/host_tsg.h"
#include "hostshim/rate_limited_log.h"
#include "hostshim/sim/memory/nvmap_device.h"

namespace nvsentry::hostshim::host {

HostDriver::HostDriver(HostOptions options) : options_(std::move(options)) {}
HostDriver::~HostDriver() = default;

HostContext* HostDriver::Context(abi::NvError& refused) {
  absl::MutexLock l(&mu_);
  if (context_ == nullptr) {
    absl::StatusOr<std::unique_ptr<HostContext>> c = HostContext::Make(options_);
    if (!c.ok()) {
      NVS_LOG_LIMITED(spdlog::level::warn, "host backend: {}", std::string(c.status().message()));
      refused = abi::NvError::kDeviceNotFound;
      return nullptr;
    }
    context_ = *std::move(c);
  }
  return context_.get();
}

std::unique_ptr<DeviceBackend> HostDriver::Open(const abi::DeviceDesc& device,
                                                abi::NvError& refused) {
  if (device.id == abi::DeviceId::kNvmap)
    return std::make_unique<sim::NvmapDevice>(*options_.nvmap);
  if (!HostNodeOf(device.id)) {
    refused = abi::NvError::kNotSupported;
    return nullptr;
  }
  HostContext* ctx = Context(refused);
  if (ctx == nullptr) return nullptr;
  // A channel is charged before the host makes one, as the simulated GPU charges it at the open;
  // the charge covers its TSG too.
  auto charge = std::make_unique<BudgetHold>();
  if (device.id == abi::DeviceId::kNvhostGpu &&
      !charge->Take(options_.budget, BudgetKind::kChannels)) {
    refused = abi::NvError::kInsufficientMemory;
    return nullptr;
  }
  if (device.id == abi::DeviceId::kNvhostGpu) {
    // In a TSG of its own at once: r32.7.4's channel refuses everything until it is in one, and
    // the error queries read its GET_TIMEDOUT (L4T-TSG-1..4).
    HostChannelFds fds;
    refused = OpenHostChannel(options_.dev_dir, options_.note, 0, &fds);
    if (refused != abi::NvError::kSuccess) return nullptr;
    return MakeHostSession(*ctx, device, std::move(fds.channel), std::move(charge),
                           std::move(fds.tsg));
  }
  const std::string path = absl::StrCat(options_.dev_dir, std::string(device.path).substr(4));
  UniqueFd fd(OpenHostNode(path));
  if (!fd) {
    const int e = errno;
    NVS_LOG_LIMITED(spdlog::level::warn, "host backend: cannot open {}: {}", path, strerror(e));
    refused = e == ENOENT ? abi::NvError::kDeviceNotFound : NvErrorOfHostErrno(e);
    return nullptr;
  }
  return MakeHostSession(*ctx, device, std::move(fd), std::move(charge));
}

std::string HostDriver::Status() const {
  return absl::StrCat("host backend: nodes under ", options_.dev_dir);
}

}  // namespace nvsentry::hostshim::host
