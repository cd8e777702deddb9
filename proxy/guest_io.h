// The sentry's side of one trapped call, as the copy engine sees it: the guest's memory and the
// liveness of the call. Implemented by sentry/ for a seccomp notification; by tests in memory.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "abi/catalogue.h"
#include "hostshim/backend.h"

namespace nvsentry::proxy {

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

class CallContext : public GuestIo {
 public:
  // A continuation owning `arg` that answers this same call later (see FinishIoctl).
  virtual std::shared_ptr<hostshim::Continuation> Detach(const abi::IoctlDesc& desc, uint64_t argp,
                                                         std::vector<uint8_t> arg) = 0;
};

}  // namespace nvsentry::proxy
