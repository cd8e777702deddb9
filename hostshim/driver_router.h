// One Driver in front of two: each device's sessions come from the driver its policy names (the
// simulated GPU, or the host backend for the GPU's devices when the policy forwards them).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "hostshim/backend.h"

namespace nvsentry::hostshim {

class DriverRouter : public Driver {
 public:
  // `on_host(device)` says whether a device goes to `host`; `host` may be null when nothing does.
  DriverRouter(Driver& simulated, Driver* host, std::function<bool(abi::DeviceId)> on_host)
      : simulated_(simulated), host_(host), on_host_(std::move(on_host)) {}

  std::unique_ptr<DeviceBackend> Open(const abi::DeviceDesc& device,
                                      abi::NvError& refused) override {
    if (host_ != nullptr && on_host_(device.id)) return host_->Open(device, refused);
    return simulated_.Open(device, refused);
  }
  std::string Status() const override {
    return host_ == nullptr ? simulated_.Status() : simulated_.Status() + "\n" + host_->Status();
  }

 private:
  Driver& simulated_;
  Driver* host_;
  std::function<bool(abi::DeviceId)> on_host_;
};

}  // namespace nvsentry::hostshim
