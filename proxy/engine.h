// The copy engine: one path, driven by the catalogue, for every ioctl on a device session, whether
// it arrives as a Linux ioctl on a device fd or through the /dev/nvdrv Ioctl/Ioctl2/Ioctl3
// commands. It finds the ioctl's description, copies the guest's buffers once into sentry memory
// (main buffer, and the Ioctl2 input buffer), lays out and checks the variable-length arrays,
// confirms the call is still live before anything can change (pure calls change nothing),
// dispatches to the backend (or answers Switchbrew's fixed answer), and writes the outputs back once,
// on success only. Backends only ever see the sentry's copy.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <span>

#include "abi/nverror.h"
#include "proxy/guest_io.h"
#include "proxy/session.h"

namespace nvsentry::proxy {

class ServiceEndpoint;

// Where the call's data lives in guest memory. A Linux ioctl has in = out = its argument.
struct GuestBuffers {
  uint64_t in = 0, in_size = 0;
  uint64_t out = 0, out_size = 0;
  uint64_t in2 = 0, in2_size = 0;
  uint64_t out2 = 0, out2_size = 0;
};

struct IoctlRequest {
  uint32_t code;
  abi::Via via = abi::Via::kDirect;
  GuestBuffers buf;
  int fd = -1;  // the guest's fd (or nvdrv fd), for the trace
  // Where fds named in the arguments live: null for the caller's Linux fds, else the /dev/nvdrv
  // session whose fd numbers the carried call uses.
  ServiceEndpoint* fd_space = nullptr;

  static IoctlRequest Direct(uint32_t code, uint64_t argp, int fd = -1) {
    uint64_t n = abi::IocSize(code);
    return {code, abi::Via::kDirect, {argp, n, argp, n}, fd};
  }
};

struct IoctlOutcome {
  enum Kind {
    kAnswer,   // answer the guest now with `err` (0 = success)
    kParked,   // a continuation will answer later
    kDropped,  // the guest thread is gone; nothing to answer
  };
  Kind kind;
  int err;
};

// Turns the driver's verdict into the guest's syscall answer, after the outputs are written:
// for a Linux ioctl the errno of the guest contract; for a service command, the NvError stored
// in the command's own error field.
using Answer = std::function<int(abi::NvError err, GuestIo& io)>;
int DirectAnswer(abi::NvError err, GuestIo& io);

// One ioctl on `session`, however it arrived. A code the catalogue lists as an alias of an entry
// (a client's direction variant) is served as that entry; carried by an nvdrv Ioctl, its argument
// is taken from the buffers the variant's own direction names (abi/catalogue.h CodeAlias).
IoctlOutcome RunIoctl(Session& session, const IoctlRequest& req, CallContext& ctx,
                      const Answer& answer = DirectAnswer);

}  // namespace nvsentry::proxy
