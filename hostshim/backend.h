// What stands behind the proxy: a backend serves one open device session. The proxy's copy engine
// hands it a call whose argument is already copied into sentry memory and checked against the
// catalogue; the backend either answers now or parks the call and finishes it later.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

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
  // True once the guest thread stopped waiting (a signal interrupted it, or it exited); polled.
  virtual bool Abandoned() = 0;
};

class Parker {
 public:
  virtual ~Parker() = default;
  // Moves the call's argument into a continuation; the call's own span must not be used after.
  virtual std::shared_ptr<Continuation> Park() = 0;
};

struct Call {
  const abi::IoctlDesc& desc;
  std::span<uint8_t> arg;  // sentry-owned copy, exactly desc.size() bytes
  Parker& parker;
};

struct Result {
  bool parked = false;
  abi::NvError err = abi::NvError::kSuccess;
  static Result Done(abi::NvError e) { return {false, e}; }
  static Result Parked() { return {true, abi::NvError::kSuccess}; }
};

class DeviceBackend {
 public:
  virtual ~DeviceBackend() = default;
  virtual Result Ioctl(Call& call) = 0;
};

// Typed view of a call's argument; the catalogue guarantees the size.
template <typename T>
T& ArgAs(std::span<uint8_t> arg) {
  static_assert(std::is_trivially_copyable_v<T>);
  return *reinterpret_cast<T*>(arg.data());
}

}  // namespace nvsentry::hostshim
