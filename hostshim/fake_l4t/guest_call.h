// How the fake Jetson serves an L4T call: as the guest-ABI call of the simulated GPU's own device
// backend (hostshim/sim), made in the catalogue's layout by the fake itself. The fake is the
// calling process (its own memory backs the nvmap objects it allocates), and the fds a call names
// are the fake's sessions, looked up before the call.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "abi/catalogue.h"
#include "abi/nverror.h"
#include "hostshim/backend.h"

namespace nvsentry::hostshim::fake_l4t {

// The guest-ABI caller the sim sees: this process, with the sessions a call names under the
// numbers the call uses for them.
class SelfCaller : public Caller {
 public:
  pid_t tid() const override;
  pid_t tgid() override;
  std::shared_ptr<DeviceBackend> BackendOf(int32_t fd) override;
  int PlaceFd(int fd, bool cloexec) override;  // -EOPNOTSUPP: nobody to place it in
  void Name(int32_t fd, std::shared_ptr<DeviceBackend> backend);

 private:
  std::vector<std::pair<int32_t, std::shared_ptr<DeviceBackend>>> named_;
};

// Parked calls at once, over every session (each holds an argument copy and a reply).
inline constexpr size_t kMaxParkedCalls = 1024;

struct GuestCallSpec {
  abi::DeviceId device;
  uint32_t code;             // the guest catalogue's code (variable ones: with the size bits)
  std::vector<uint8_t> arg;  // the guest layout: fixed part, then any inline array
  size_t array_offset = 0;   // variable ioctls: where the inline array starts in `arg`
                             // (the array may be longer than the code's 14 size bits say)
  bool may_park = false;     // a wait: the call may park (counted against kMaxParkedCalls)
  std::function<bool()> abandoned = [] { return false; };
};

// Called exactly once: with the answer and the (guest-layout) argument as the backend left it,
// now or, for a parked call, on the thread that completes it.
using GuestDone = std::function<void(abi::NvError err, std::span<uint8_t> arg)>;

// Runs the call on `backend`. A code the guest catalogue lacks, or an argument of the wrong
// size, answers BadParameter without reaching the backend (a bug of the fake, logged).
void RunGuestCall(DeviceBackend& backend, GuestCallSpec spec, SelfCaller& caller, GuestDone done);

// Parked calls now (for the status line and tests).
size_t ParkedGuestCalls();

}  // namespace nvsentry::hostshim::fake_l4t
