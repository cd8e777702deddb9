// The copy engine: one path, driven by the catalogue, for every ioctl on a session, whether it
// arrives as a Linux ioctl on a device fd, as a /dev/nvdrv service command, or carried by the
// nvdrv Ioctl/Ioctl2/Ioctl3 commands (proxy/serve.h unwraps those into the request a Linux ioctl
// makes). It finds the ioctl's description, copies the guest's buffers once into sentry memory
// (main buffer, and the Ioctl2 input buffer), lays out and checks the variable-length arrays,
// confirms the call is still live before anything can change (pure calls change nothing),
// dispatches to the session's backend (or answers Switchbrew's fixed answer), and writes the
// outputs back once, on success only. Backends only ever see the sentry's copy.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "abi/array_layout.h"
#include "abi/nverror.h"
#include "absl/container/inlined_vector.h"
#include "proxy/call_observer.h"
#include "proxy/enforce.h"
#include "proxy/guest_io.h"
#include "proxy/session.h"

namespace nvsentry::proxy {

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
  // open whose fd numbers the carried call uses.
  const FdSpace* fd_space = nullptr;

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

struct Completion;

// One call through the engine's stages, in order: Check() runs stages 1 to 5 (each lets the call
// go on or ends it with the guest's answer), Dispatch() stage 6. Between the two, the copied
// argument may be read: /dev/nvdrv's front end unwraps a carrying command there.
class IoctlCall {
 public:
  IoctlCall(Session& session, const IoctlRequest& sent, CallContext& ctx,
            const Answer& answer = DirectAnswer);
  ~IoctlCall();
  IoctlCall(const IoctlCall&) = delete;
  IoctlCall& operator=(const IoctlCall&) = delete;

  // Stages 1-5: nullopt when the call may go on to Dispatch, else the outcome it ended with.
  std::optional<IoctlOutcome> Check();
  // After a Check that let the call go on: its catalogue entry and the copied main buffer.
  const abi::IoctlDesc& desc() const { return *desc_; }
  std::span<const uint8_t> argument() const { return main_; }
  // Stage 6: Switchbrew's fixed answer or the session's backend (which may park the call);
  // outputs written back once, on success only.
  IoctlOutcome Dispatch();

 private:
  std::optional<IoctlOutcome> Lookup();      // 1. the catalogue entry on the guest's firmware
  std::optional<IoctlOutcome> Admit();       // 2. carrier, policy verdict, identity answers
  std::optional<IoctlOutcome> CopyIn();      // 3. the main buffer and its arrays' layout
  std::optional<IoctlOutcome> CheckRules();  // 4. the policy's rules on the arguments
  std::optional<IoctlOutcome> Commit();      // 5. the Ioctl2 buffer, then still live?
  std::span<const uint8_t> Input() const;
  std::optional<IoctlOutcome> Reject(abi::NvError err, int direct_errno = 0,
                                     std::span<const uint8_t> in = {});
  std::optional<IoctlOutcome> Violated(std::string_view rule, std::string_view detail,
                                       std::span<const uint8_t> in);

  Session& session_;
  const abi::DeviceDesc& dev_;
  const GuestConfig& config_;
  ObserverSet& observers_;
  IoctlRequest req_;
  CallContext& ctx_;
  const Answer& answer_;
  const std::chrono::steady_clock::time_point t0_;
  const abi::IoctlDesc* desc_ = nullptr;
  RuleRef rule_{policy::Verdict::kAllow, nullptr};
  uint32_t size_ = 0;
  bool has_in_ = false, has_out_ = false;
  absl::InlinedVector<uint64_t, 64> storage_;
  std::span<uint8_t> main_;
  abi::ArrayLayout layout_;
  std::shared_ptr<Completion> done_;
};

// One ioctl on a device session (or one service command on /dev/nvdrv's): Check, then Dispatch.
// A code the catalogue lists as an alias of an entry (a client's direction variant) is served as
// that entry; carried by an nvdrv Ioctl, its argument is taken from the buffers the variant's own
// direction names (abi/catalogue.h CodeAlias). Guests' calls enter through proxy::Serve.
IoctlOutcome RunIoctl(Session& session, const IoctlRequest& req, CallContext& ctx,
                      const Answer& answer = DirectAnswer);

}  // namespace nvsentry::proxy
