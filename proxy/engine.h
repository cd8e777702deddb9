// The copy engine: one path, driven by the catalogue, for every ioctl on a device session.
// It finds the ioctl's description, copies the argument from the guest once into sentry memory,
// confirms the call is still live before anything can change (pure calls change nothing),
// dispatches to the backend, and writes the outputs back once. Backends only ever see the
// sentry's copy.
#pragma once

#include <cstdint>
#include <span>

#include "abi/nverror.h"
#include "proxy/guest_io.h"
#include "proxy/session.h"

namespace nvsentry::proxy {

struct IoctlOutcome {
  enum Kind {
    kAnswer,   // answer the guest now with `err` (0 = success)
    kParked,   // a continuation will answer later
    kDropped,  // the guest thread is gone; nothing to answer
  };
  Kind kind;
  int err;
};

IoctlOutcome RunIoctl(Session& session, uint32_t code, uint64_t argp, CallContext& ctx);

// Writes the outputs of a finished call back (on success, for codes that return data) and gives
// the errno the guest sees. Immediate and parked calls both end here.
int FinishIoctl(const abi::IoctlDesc& desc, uint64_t argp, std::span<const uint8_t> arg,
                abi::NvError err, GuestIo& io);

}  // namespace nvsentry::proxy
