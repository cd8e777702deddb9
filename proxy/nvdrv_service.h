// The nvdrv service behind one open of /dev/nvdrv: its own table of nvdrv fds (device sessions
// opened with the Open command), the Initialize budget, the aruid, and the commands of Switchbrew.
// Device ioctls carried by Ioctl/Ioctl2/Ioctl3 run through the same copy engine as Linux ioctls;
// their NvError lands in the command's error word.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "proxy/device_open.h"
#include "proxy/service_endpoint.h"

namespace nvsentry::proxy {

class NvdrvService : public ServiceEndpoint {
 public:
  // What the service charges against the Initialize budget for each open nvdrv fd: the page of
  // driver bookkeeping a device session costs. (nvmap memory without a guest address will be
  // charged by its size.)
  static constexpr uint32_t kOpenCost = 0x1000;
  // Most nvdrv fds one session may hold, whatever the budget.
  static constexpr uint32_t kMaxFds = 4096;

  NvdrvService(const GuestConfig& config, BackendFactory factory)
      : config_(config), factory_(std::move(factory)) {}
  ~NvdrvService() override;

  std::optional<IoctlOutcome> Command(const abi::IoctlDesc& desc, std::span<uint8_t> cmd,
                                      const IoctlRequest& req, CallContext& ctx) override;

  // For tests and DumpStatus.
  size_t open_fds() const;

 private:
  abi::NvError Open(std::span<uint8_t> cmd, CallContext& ctx);
  abi::NvError Close(std::span<uint8_t> cmd, CallContext& ctx);
  abi::NvError Initialize(std::span<uint8_t> cmd, bool devtools);
  abi::NvError QueryEvent(std::span<uint8_t> cmd, CallContext& ctx, int* place_errno);
  abi::NvError GetStatus(std::span<uint8_t> cmd);
  abi::NvError SetAruid(std::span<uint8_t> cmd, bool unchecked);
  abi::NvError SetMargin(std::span<uint8_t> cmd);
  void DumpStatus(CallContext& ctx);
  std::shared_ptr<Session> SessionOf(uint32_t fd) const override;
  IoctlOutcome Nested(uint32_t command, std::span<uint8_t> cmd, const IoctlRequest& outer,
                      CallContext& ctx);

  const GuestConfig& config_;
  BackendFactory factory_;
  mutable absl::Mutex mu_;
  bool initialized_ ABSL_GUARDED_BY(mu_) = false;
  uint32_t budget_ ABSL_GUARDED_BY(mu_) = 0;
  uint32_t used_ ABSL_GUARDED_BY(mu_) = 0;
  uint32_t peak_used_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t aruid_ ABSL_GUARDED_BY(mu_) = 0;
  bool margin_enabled_ ABSL_GUARDED_BY(mu_) = false;
  uint32_t next_fd_ ABSL_GUARDED_BY(mu_) = 1;
  absl::flat_hash_map<uint32_t, std::shared_ptr<Session>> fds_ ABSL_GUARDED_BY(mu_);
};

}  // namespace nvsentry::proxy
