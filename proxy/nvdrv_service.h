// The nvdrv service behind one open of /dev/nvdrv: its own table of nvdrv fds (device sessions
// opened with the Open command), the Initialize budget, the aruid, and Switchbrew's commands. It
// is the backend of /dev/nvdrv's session: the engine copies and checks each command's struct like
// any ioctl's and hands it here. A command that carries a device ioctl (Ioctl, Ioctl2, Ioctl3)
// is not run here: Unwrap turns it into the request a Linux ioctl on the device would make, which
// the front end (proxy/serve.h) runs through the same engine; its NvError lands in the command's
// error word.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "hostshim/backend.h"
#include "proxy/device_open.h"
#include "proxy/engine.h"

namespace nvsentry::proxy {

class NvdrvService : public hostshim::DeviceBackend, public FdSpace {
 public:
  // What the service charges against the Initialize budget for each open nvdrv fd: the page of
  // driver bookkeeping a device session costs. (nvmap memory without a guest address will be
  // charged by its size.)
  static constexpr uint32_t kOpenCost = 0x1000;
  // Most nvdrv fds one session may hold, whatever the budget.
  static constexpr uint32_t kMaxFds = 4096;

  // Device sessions opened with the Open command come from `driver`, which outlives the service.
  NvdrvService(const GuestConfig& config, hostshim::Driver& driver)
      : config_(config), driver_(driver) {}
  ~NvdrvService() override;

  // One service command, copied and checked by the engine. The command's NvError goes into its
  // own error word and the ioctl succeeds; only an event fd the guest cannot take fails it.
  hostshim::Result Ioctl(hostshim::Call& call) override;

  // Whether `code` is a command that carries a device ioctl (Ioctl, Ioctl2, Ioctl3).
  static bool Carries(uint32_t code);
  // A carried device ioctl as the request a Linux ioctl makes, on the session its nvdrv fd
  // names, with the answer that stores its NvError in the command's error word. `command` is the
  // carrying command (already copied and checked), `outer` the request that brought it. Without
  // a session, `refused` says why (NotInitialized, BadParameter) and `answer` delivers it.
  struct Carried {
    std::shared_ptr<Session> session;
    IoctlRequest request;
    Answer answer;
    abi::NvError refused = abi::NvError::kSuccess;
  };
  Carried Unwrap(uint32_t code, std::span<const uint8_t> command, const IoctlRequest& outer) const;

  // The device session behind nvdrv fd `fd`, or null.
  std::shared_ptr<Session> SessionOf(int32_t fd) const override;
  // For tests and DumpStatus.
  size_t open_fds() const;

 private:
  abi::NvError Open(std::span<uint8_t> cmd, pid_t tid);
  abi::NvError Close(std::span<uint8_t> cmd, pid_t tid);
  abi::NvError Initialize(std::span<uint8_t> cmd, bool devtools);
  hostshim::Result QueryEvent(std::span<uint8_t> cmd, hostshim::Caller* caller);
  abi::NvError GetStatus(std::span<uint8_t> cmd);
  abi::NvError SetAruid(std::span<uint8_t> cmd, bool unchecked);
  abi::NvError SetMargin(std::span<uint8_t> cmd);
  void DumpStatus(pid_t tid);

  const GuestConfig& config_;
  hostshim::Driver& driver_;
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
