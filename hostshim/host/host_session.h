// One guest session of a host-backed device: the sentry's own fd on the host's node and the
// translation of each call the guest makes on it, one subclass per device (ctrl_session.h,
// ctrl_gpu_session.h, as_session.h, channel_session.h). A call a translation does not cover
// answers NotSupported with a log line; it never reaches the host untranslated.
#pragma once

#include <memory>
#include <span>

#include "abi/l4t/nodes.h"
#include "hostshim/backend.h"
#include "hostshim/budget.h"
#include "hostshim/host/host_call.h"
#include "hostshim/unique_fd.h"

namespace nvsentry::hostshim::host {

class HostContext;

class HostSession : public DeviceBackend {
 public:
  HostSession(HostContext& ctx, const abi::DeviceDesc& device, abi::l4t::L4tNode node,
              UniqueFd host_fd)
      : ctx_(ctx), device_(device), node_(node), fd_(std::move(host_fd)) {}

  int host_fd() const { return fd_.get(); }
  const abi::DeviceDesc& device() const { return device_; }

 protected:
  // The host ioctl `code` on this session's fd with `arg` in the host's layout, traced as part of
  // `call`.
  HostCallResult Host(const Call& call, uint32_t code, std::span<uint8_t> arg);
  template <typename T>
  HostCallResult HostOf(const Call& call, uint32_t code, T& arg) {
    return Host(call, code, {reinterpret_cast<uint8_t*>(&arg), sizeof arg});
  }
  // NotSupported, with a (rate-limited) log line naming the call.
  Result NotTranslated(const Call& call);
  // A call whose host layout is the guest's (only the code differs): the guest's fixed part goes
  // to the host as it is and the host's answer is the guest's. NotTranslated if the sizes differ.
  Result Same(Call& call, uint32_t host_code);
  // Hands the host fd to what outlives the session (the address space a channel still uses);
  // host_fd() is -1 afterwards.
  UniqueFd TakeHostFd() { return std::move(fd_); }
  void RestoreHostFd(UniqueFd fd) { fd_ = std::move(fd); }
  // The host session behind guest fd `fd` of the caller (BIND_CHANNEL's channel), if it is one of
  // this backend's sessions of `device`.
  // Shared: the guest may close or dup2 over that fd meanwhile, and the session must outlive the
  // call that uses it.
  static std::shared_ptr<HostSession> SessionOf(const Call& call, int32_t fd, abi::DeviceId device);

  HostContext& ctx_;

 private:
  const abi::DeviceDesc& device_;
  const abi::l4t::L4tNode node_;
  UniqueFd fd_;
};

// The L4T node a guest device is forwarded to, if the backend translates it (nvmap is the
// guest's own table: not a host session).
std::optional<abi::l4t::L4tNode> HostNodeOf(abi::DeviceId id);
// A session of `device` on `host_fd`; `charge` is what the open took from the budget (a channel's
// channels charge), held as long as the session; `tsg_fd` is a channel's TSG (host_tsg.h).
std::unique_ptr<HostSession> MakeHostSession(HostContext& ctx, const abi::DeviceDesc& device,
                                             UniqueFd host_fd,
                                             std::unique_ptr<BudgetHold> charge = nullptr,
                                             UniqueFd tsg_fd = {});

}  // namespace nvsentry::hostshim::host
