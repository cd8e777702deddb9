// One open of a device node by the guest: which catalogue device it is and the backend serving it.
// Shared by every guest fd that refers to the same open (dup, fork, fd passing).
#pragma once

#include <memory>

#include "abi/catalogue.h"
#include "hostshim/backend.h"

namespace nvsentry::proxy {

class Session {
 public:
  Session(const abi::DeviceDesc& device, std::unique_ptr<hostshim::DeviceBackend> backend)
      : device_(device), backend_(std::move(backend)) {}
  const abi::DeviceDesc& device() const { return device_; }
  hostshim::DeviceBackend& backend() { return *backend_; }

 private:
  const abi::DeviceDesc& device_;
  std::unique_ptr<hostshim::DeviceBackend> backend_;
};

}  // namespace nvsentry::proxy
