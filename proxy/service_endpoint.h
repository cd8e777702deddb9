// A session that serves service commands instead of device ioctls (/dev/nvdrv). The copy engine
// copies and checks the command's struct like any ioctl's, then hands it here.
#pragma once

#include <optional>
#include <span>

#include "abi/catalogue.h"
#include "proxy/engine.h"

namespace nvsentry::proxy {

class ServiceEndpoint {
 public:
  virtual ~ServiceEndpoint() = default;
  // Runs one command whose struct the engine copied and checked (`cmd`). Returns nullopt when the
  // command's results are in `cmd` (the engine writes it back and the ioctl returns 0), or the
  // outcome of the device ioctl the command carried, which answers the guest itself.
  virtual std::optional<IoctlOutcome> Command(const abi::IoctlDesc& desc, std::span<uint8_t> cmd,
                                              const IoctlRequest& req, CallContext& ctx) = 0;
  // The device session behind this endpoint's fd number `fd`, or null.
  virtual std::shared_ptr<Session> SessionOf(uint32_t fd) const = 0;
};

}  // namespace nvsentry::proxy
