// One guest session of a host-backed device: the sentry's own fd on the host's node and the
// translation of each call the guest makes on it. A call the translation does not cover answers
// NotSupported with a log line; it never reaches the host untranslated.
#pragma once

#include "hostshim/backend.h"
#include "hostshim/unique_fd.h"

namespace nvsentry::hostshim::host {

class HostSession : public DeviceBackend {
 public:
  // Whether the host backend has a session kind for `id` (the four host nodes; nvmap is the
  // guest's own table).
  static bool Translates(abi::DeviceId id);

  HostSession(const abi::DeviceDesc& device, UniqueFd host_fd)
      : device_(device), fd_(std::move(host_fd)) {}
  Result Ioctl(Call& call) override;

  int host_fd() const { return fd_.get(); }

 private:
  const abi::DeviceDesc& device_;
  UniqueFd fd_;
};

}  // namespace nvsentry::hostshim::host
