#include "hostshim/host/host_session.h"

#include "abi/ioctl_code.h"
#include "hostshim/host/as_session.h"
#include "hostshim/host/channel_session.h"
#include "hostshim/host/ctrl_gpu_session.h"
#include "hostshim/host/ctrl_session.h"
#include "hostshim/host/host_context.h"
#include "hostshim/rate_limited_log.h"

namespace nvsentry::hostshim::host {

using abi::l4t::L4tNode;

HostCallResult HostSession::Host(const Call& call, uint32_t code, std::span<uint8_t> arg) {
  return HostIoctl(fd_.get(), node_, code, arg, ctx_.note(), call.caller ? call.caller->tid() : 0);
}

Result HostSession::NotTranslated(const Call& call) {
  NVS_LOG_LIMITED(spdlog::level::warn, "host backend: {} on {} is not translated; NotSupported",
                  std::string(call.desc.name), std::string(device_.path));
  return Result::Done(abi::NvError::kNotSupported);
}

Result HostSession::Same(Call& call, uint32_t host_code) {
  const size_t n = call.desc.fixed_size();
  if (abi::IocSize(host_code) != n || call.arg.size() < n) return NotTranslated(call);
  return Result::Done(Host(call, host_code, call.arg.first(n)).nv());
}

std::shared_ptr<HostSession> HostSession::SessionOf(const Call& call, int32_t fd,
                                                    abi::DeviceId device) {
  if (call.caller == nullptr) return nullptr;
  auto s = std::dynamic_pointer_cast<HostSession>(call.caller->BackendOf(fd));
  return s != nullptr && s->device_.id == device ? s : nullptr;
}

std::optional<L4tNode> HostNodeOf(abi::DeviceId id) {
  switch (id) {
    case abi::DeviceId::kNvhostCtrl: return L4tNode::kNvhostCtrl;
    case abi::DeviceId::kNvhostCtrlGpu: return L4tNode::kNvhostCtrlGpu;
    case abi::DeviceId::kNvhostAsGpu: return L4tNode::kNvhostAsGpu;
    case abi::DeviceId::kNvhostGpu: return L4tNode::kNvhostGpu;
    default: return std::nullopt;
  }
}

std::unique_ptr<HostSession> MakeHostSession(HostContext& ctx, const abi::DeviceDesc& device,
                                             UniqueFd host_fd, std::unique_ptr<BudgetHold> charge,
                                             UniqueFd tsg_fd) {
  switch (device.id) {
    case abi::DeviceId::kNvhostCtrl:
      return std::make_unique<CtrlSession>(ctx, device, std::move(host_fd));
    case abi::DeviceId::kNvhostCtrlGpu:
      return std::make_unique<CtrlGpuSession>(ctx, device, std::move(host_fd));
    case abi::DeviceId::kNvhostAsGpu:
      return std::make_unique<AsSession>(ctx, device, std::move(host_fd));
    case abi::DeviceId::kNvhostGpu:
      return std::make_unique<ChannelSession>(ctx, device, std::move(host_fd), std::move(charge),
                                              std::move(tsg_fd));
    default: return nullptr;
  }
}

}  // namespace nvsentry::hostshim::host
