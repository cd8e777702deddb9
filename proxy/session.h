// One open of a device node by the guest: which catalogue device it is and the backend that
// serves it (for /dev/nvdrv, the nvdrv service: proxy/nvdrv_service.h). Shared by every guest fd
// that refers to the same open (dup, fork, fd passing).
#pragma once

#include <functional>
#include <memory>

#include "abi/catalogue.h"
#include "hostshim/backend.h"
#include "proxy/guest_config.h"

namespace nvsentry::proxy {

class Session {
 public:
  Session(const abi::DeviceDesc& device, std::unique_ptr<hostshim::DeviceBackend> backend,
          const GuestConfig& config);
  ~Session();
  const abi::DeviceDesc& device() const { return device_; }
  hostshim::DeviceBackend& backend() { return *backend_; }
  // Shared with the devices that hold on to another session's backend (a channel bound to an
  // address space, an nvmap fd given to a channel).
  std::shared_ptr<hostshim::DeviceBackend> shared_backend() { return backend_; }
  const GuestConfig& config() const { return config_; }
  // The guest fd the session was first placed as (-1: not known); the trace reports its close
  // under that number when the last reference anywhere goes away.
  void TraceCloseAs(int fd) {
    traced_ = true;
    traced_fd_ = fd;
  }
  // Takes one open device fd from the guest's open_fds budget, given back when the session ends
  // (the last reference anywhere goes away). InsufficientMemory when the budget is spent.
  abi::NvError ChargeFd();
  // Runs `gone` as the last step of the session's end, after its trace record, its budget and
  // its backend are gone, on whichever thread drops the last reference (the session table counts
  // the sessions whose end has not finished, so that the sentry's exit can wait for them).
  void WhenGone(std::function<void()> gone) { gone_.run = std::move(gone); }

 private:
  struct RunLast {
    std::function<void()> run;
    ~RunLast() {
      if (run) run();
    }
  };
  RunLast gone_;  // the first member: destroyed after all the others
  const abi::DeviceDesc& device_;
  std::shared_ptr<hostshim::DeviceBackend> backend_;
  const GuestConfig& config_;
  bool traced_ = false;
  int traced_fd_ = -1;
  std::shared_ptr<BudgetAccount> fd_charged_;  // the account ChargeFd charged, if it did
};

}  // namespace nvsentry::proxy
