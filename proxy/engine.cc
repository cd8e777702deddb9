#include "proxy/engine.h"

#include <cerrno>

#include "absl/container/inlined_vector.h"
#include "spdlog/spdlog.h"

namespace nvsentry::proxy {
namespace {

// Turns a parked call's argument into a continuation only when the backend asks for it.
class EngineParker : public hostshim::Parker {
 public:
  EngineParker(const abi::IoctlDesc& desc, uint64_t argp, std::span<uint8_t> arg, CallContext& ctx)
      : desc_(desc), argp_(argp), arg_(arg), ctx_(ctx) {}
  std::shared_ptr<hostshim::Continuation> Park() override {
    parked_ = true;
    return ctx_.Detach(desc_, argp_, std::vector<uint8_t>(arg_.begin(), arg_.end()));
  }
  bool parked() const { return parked_; }

 private:
  const abi::IoctlDesc& desc_;
  uint64_t argp_;
  std::span<uint8_t> arg_;
  CallContext& ctx_;
  bool parked_ = false;
};

}  // namespace

int FinishIoctl(const abi::IoctlDesc& desc, uint64_t argp, std::span<const uint8_t> arg,
                abi::NvError err, GuestIo& io) {
  if (err != abi::NvError::kSuccess) return abi::NvErrorToErrno(err);
  if (abi::DirHasOut(desc.dir()) && !arg.empty() && !io.Write(argp, arg)) return EFAULT;
  return 0;
}

IoctlOutcome RunIoctl(Session& session, uint32_t code, uint64_t argp, CallContext& ctx) {
  const abi::DeviceDesc& dev = session.device();
  const abi::IoctlDesc* desc = abi::FindIoctl(dev, code);
  if (desc == nullptr) {
    if (dev.ioctls.empty()) {
      spdlog::warn("{}: ioctl 0x{:08X}: the device's ioctl table is not written yet", dev.path, code);
      return {IoctlOutcome::kAnswer, EOPNOTSUPP};
    }
    spdlog::debug("{}: unknown ioctl 0x{:08X}", dev.path, code);
    return {IoctlOutcome::kAnswer, ENOTTY};
  }

  absl::InlinedVector<uint8_t, 512> buf(desc->size(), 0);
  if (abi::DirHasIn(desc->dir()) && !buf.empty() && !ctx.Read(argp, std::span(buf))) {
    return {IoctlOutcome::kAnswer, EFAULT};
  }
  // Nothing may change before we know the guest thread still waits for this call (the copy may
  // also have come from a task that reused its id). A pure call changes nothing, and its
  // write-back is no safer for a check made before it, so it skips the syscall.
  if (!desc->pure() && !ctx.StillValid()) return {IoctlOutcome::kDropped, 0};

  EngineParker parker(*desc, argp, std::span(buf), ctx);
  hostshim::Call call{*desc, std::span(buf), parker};
  hostshim::Result r = session.backend().Ioctl(call);
  if (r.parked) return {IoctlOutcome::kParked, 0};
  return {IoctlOutcome::kAnswer, FinishIoctl(*desc, argp, std::span(buf), r.err, ctx)};
}

}  // namespace nvsentry::proxy
