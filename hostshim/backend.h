// What stands behind the proxy: a backend serves one open device session. The proxy's copy engine
// hands it a call whose argument is already copied into sentry memory and checked against the
// catalogue; the backend either answers now or parks the call and finishes it later.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <type_traits>

#include "abi/catalogue.h"
#include "abi/nverror.h"

namespace nvsentry::hostshim {

// A call that is no longer on a sentry worker's stack: it owns its argument copy and knows how to
// answer the guest. Finish is called at most once by whoever completes the call.
class Continuation {
 public:
  virtual ~Continuation() = default;
  virtual std::span<uint8_t> arg() = 0;
  // Writes the outputs back (on success) and answers the guest thread.
  virtual void Finish(abi::NvError err) = 0;
  // True once the call ended without its holder: the guest thread stopped waiting (a signal
  // interrupted it, or it died) and the sentry answered or dropped it. A flag read, cheap; the
  // holder then forgets the call.
  virtual bool Abandoned() = 0;
};

// Every end of a parked call that its holder did not cause (Abandoned() turned true, or an armed
// event was cancelled) counts here. Holders look for such calls only after the count moved, so
// idle parked calls cost them nothing between ends.
inline std::atomic<uint64_t>& AbandonedCallCount() {
  static std::atomic<uint64_t> count{0};
  return count;
}
inline void NoteAbandonedCall() { AbandonedCallCount().fetch_add(1, std::memory_order_release); }

class Parker {
 public:
  virtual ~Parker() = default;
  // Moves the call's argument into a continuation; the call's own span must not be used after.
  // Null, and the call stays the backend's to answer, when the guest may not park another call
  // (its parked_waits budget is spent): backends then answer InsufficientMemory, as a driver that
  // cannot allocate another waiter does.
  virtual std::shared_ptr<Continuation> Park() = 0;
};

class DeviceBackend;

// Who made a call, for the devices that name other fds or guest memory in their arguments
// (BIND_CHANNEL, SET_NVMAP_FD, nvmap ALLOC with a guest address). Valid during Ioctl only.
class Caller {
 public:
  virtual ~Caller() = default;
  virtual pid_t tid() const = 0;
  // The caller's process (thread group id in the sentry's PID namespace), whose memory a guest
  // address names; -1 if the thread is gone. May cost a /proc read the first time.
  virtual pid_t tgid() = 0;
  // The backend serving device fd `fd` in the fd space this call came from (the caller's Linux
  // fds for a direct ioctl, its /dev/nvdrv fds for a carried one); null when `fd` is not an open
  // device session there.
  virtual std::shared_ptr<DeviceBackend> BackendOf(int32_t fd) = 0;
  // Installs a copy of the sentry's `fd` in the calling process (close-on-exec if asked); the
  // guest's fd number, or -errno (EMFILE: the guest's fd table is full).
  virtual int PlaceFd(int fd, bool cloexec) = 0;
};

// A validated call. Every span is the sentry's own copy, already checked against the catalogue:
// `arg` holds the fixed part (desc.fixed_size() bytes) followed by any inline arrays; `arrays[i]`
// is the i-th ArrayDesc's elements wherever they live (main, Ioctl2 or Ioctl3 buffer); `out2` is
// zeroed and written back to the guest's Ioctl3 buffer on success.
struct Call {
  const abi::IoctlDesc& desc;
  std::span<uint8_t> arg;
  Parker& parker;
  abi::Via via = abi::Via::kDirect;
  std::span<const std::span<uint8_t>> arrays = {};
  std::span<uint8_t> in2 = {};
  std::span<uint8_t> out2 = {};
  Caller* caller = nullptr;  // null only in tests and fuzzers that have no guest
  // The device the call was made on, for what is logged of it; null where nobody says (tests).
  const abi::DeviceDesc* device = nullptr;
  // Typed elements of array i (the catalogue guarantees the element size).
  template <typename T>
  std::span<T> Array(size_t i) const {
    static_assert(std::is_trivially_copyable_v<T>);
    std::span<uint8_t> a = arrays[i];
    return {reinterpret_cast<T*>(a.data()), a.size() / sizeof(T)};
  }
};

struct Result {
  bool parked = false;
  abi::NvError err = abi::NvError::kSuccess;
  // Nonzero: the answer could not be delivered to the guest (an fd it cannot take); nothing is
  // written back and the guest's syscall fails with this errno, whatever `err` says.
  int undelivered = 0;
  static Result Done(abi::NvError e) { return {false, e}; }
  static Result Parked() { return {true, abi::NvError::kSuccess}; }
  static Result Undelivered(int errno_value) {
    return {false, abi::NvError::kSuccess, errno_value};
  }
};

class DeviceBackend {
 public:
  virtual ~DeviceBackend() = default;
  virtual Result Ioctl(Call& call) = 0;
  // The event `id` of this device session for the QueryEvent service command: an eventfd the
  // backend signals (owned by the backend; the caller installs a copy in the guest). Devices
  // without events answer NotSupported; an id the device does not have is BadParameter.
  virtual abi::NvError QueryEvent(uint32_t id, int* eventfd) { return abi::NvError::kNotSupported; }
};

// What serves a guest's device sessions: the simulated GPU (hostshim/sim/gpu.h), later the host.
class Driver {
 public:
  virtual ~Driver() = default;
  // A session on `device`, or null with the reason in `refused` when the driver cannot keep
  // another (a budget, the syncpoints).
  virtual std::unique_ptr<DeviceBackend> Open(const abi::DeviceDesc& device,
                                              abi::NvError& refused) = 0;
  // One paragraph on what the driver holds for the guest (the nvdrv DumpStatus command).
  virtual std::string Status() const = 0;

  // For tests and fuzzers that want a session whatever happens: Open's, or one whose every ioctl
  // answers the reason Open gave.
  std::unique_ptr<DeviceBackend> OpenOrRefusing(const abi::DeviceDesc& device);
};

// Typed view of a call's argument; the catalogue guarantees the size.
template <typename T>
T& ArgAs(std::span<uint8_t> arg) {
  static_assert(std::is_trivially_copyable_v<T>);
  return *reinterpret_cast<T*>(arg.data());
}

}  // namespace nvsentry::hostshim
