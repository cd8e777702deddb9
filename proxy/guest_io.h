// The sentry's side of one trapped call, as the copy engine sees it: the guest's memory, the
// liveness of the call, and the ways to answer it later or hand the guest an fd. Implemented by
// sentry/ for a seccomp notification; by tests in memory.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "abi/catalogue.h"
#include "hostshim/backend.h"

namespace nvsentry::proxy {

class Session;

// The device sessions a call's fd numbers name: the caller's Linux fds, or the nvdrv fds of one
// open of /dev/nvdrv.
class FdSpace {
 public:
  virtual ~FdSpace() = default;
  // The session behind `fd` in this space, or null.
  virtual std::shared_ptr<Session> SessionOf(int32_t fd) const = 0;
};

class GuestIo {
 public:
  virtual ~GuestIo() = default;
  // Copies exactly dst.size() bytes from guest address `addr`; false if any byte is unreadable.
  virtual bool Read(uint64_t addr, std::span<uint8_t> dst) = 0;
  // Copies all of src to the guest; false if any byte is unwritable.
  virtual bool Write(uint64_t addr, std::span<const uint8_t> src) = 0;
  // True while the guest thread still waits for this call (seccomp's ID_VALID).
  virtual bool StillValid() = 0;
};

// Writes a finished call's outputs back and gives the errno the guest's syscall returns (0 for
// success). Runs exactly once, on the worker for an immediate call or on whoever completes a
// parked one; `arg` is the call's main buffer.
using Finisher = std::function<int(std::span<uint8_t> arg, abi::NvError err, GuestIo& io)>;

class CallContext : public GuestIo {
 public:
  // A continuation owning `arg` that answers this same call later through `finish`; null when
  // the guest may not park another call (its parked_waits budget is spent). The continuation
  // holds the budget's charge until the call ends, however it ends.
  virtual std::shared_ptr<hostshim::Continuation> Detach(std::string_view what,
                                                         std::vector<uint8_t> arg,
                                                         Finisher finish) = 0;
  // Installs a copy of the sentry's `fd` in the calling process (close-on-exec if asked);
  // returns the guest's fd number or -errno.
  virtual int PlaceFd(int fd, bool cloexec) = 0;
  virtual pid_t tid() const = 0;
  // The calling thread's process (thread group id), or -1 if it is gone.
  virtual pid_t tgid() { return -1; }
  // The device session behind the caller's Linux fd `fd`, or null.
  virtual std::shared_ptr<Session> SessionOfFd(int fd) { return nullptr; }
};

}  // namespace nvsentry::proxy
