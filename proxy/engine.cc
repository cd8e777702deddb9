#include "proxy/engine.h"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <vector>

#include "abi/array_layout.h"
#include "absl/container/inlined_vector.h"
#include "proxy/enforce.h"
#include "proxy/learn.h"
#include "proxy/service_endpoint.h"
#include "proxy/trace.h"
#include "hostshim/rate_limited_log.h"
#include "spdlog/spdlog.h"

namespace nvsentry::proxy {
namespace {

using Clock = std::chrono::steady_clock;

// Everything a finished call needs to write back, answer and trace; shared by the immediate path
// and the continuation of a parked call.
struct Completion {
  const abi::IoctlDesc* desc;
  const abi::DeviceDesc* device;
  IoctlRequest req;
  uint64_t out_end = 0;          // bytes of the main buffer written back on success
  std::vector<uint8_t> in2;      // the Ioctl2 buffer as copied (kept for the trace)
  std::vector<uint8_t> out2;     // the Ioctl3 buffer the backend filled
  std::vector<uint8_t> in_copy;  // the main buffer as copied in, when tracing
  Answer answer;
  Tracer* tracer;
  pid_t tid;
  Clock::time_point start;
  bool parked = false;

  int Finish(std::span<uint8_t> arg, abi::NvError err, GuestIo& io) {
    const bool writes_back = err == abi::NvError::kSuccess ||
                    (err == abi::NvError::kTimeout && (desc->flags & abi::kOutputsOnTimeout));
    int e = 0;
    if (writes_back && out_end > 0 && !io.Write(req.buf.out, arg.first(out_end))) e = EFAULT;
    if (e == 0 && writes_back && !out2.empty() && !io.Write(req.buf.out2, out2)) e = EFAULT;
    if (e == 0) e = answer(err, io);
    if (tracer != nullptr) {
      std::span<const uint8_t> out = writes_back && e == 0 ? std::span<const uint8_t>(arg.first(out_end))
                                                  : std::span<const uint8_t>();
      tracer->Ioctl({tid, req.fd, device, desc, req.code, req.via, in_copy, in2, out,
                     writes_back ? std::span<const uint8_t>(out2) : std::span<const uint8_t>(), err, e,
                     parked, Clock::now() - start});
    }
    return e;
  }
};

class EngineParker : public hostshim::Parker {
 public:
  EngineParker(std::span<uint8_t> arg, CallContext& ctx, std::shared_ptr<Completion> done)
      : arg_(arg), ctx_(ctx), done_(std::move(done)) {}
  std::shared_ptr<hostshim::Continuation> Park() override {
    auto done = done_;
    std::shared_ptr<hostshim::Continuation> c =
        ctx_.Detach(done_->desc->name, std::vector<uint8_t>(arg_.begin(), arg_.end()),
                    [done](std::span<uint8_t> arg, abi::NvError err, GuestIo& io) {
                      return done->Finish(arg, err, io);
                    });
    // Refused (the parked_waits budget): the backend answers on this worker as usual.
    if (c != nullptr) parked_ = done_->parked = true;
    return c;
  }
  bool parked() const { return parked_; }

 private:
  std::span<uint8_t> arg_;
  CallContext& ctx_;
  std::shared_ptr<Completion> done_;
  bool parked_ = false;
};

// The caller as a device sees it, resolving fds in the fd space the call came from.
class EngineCaller : public hostshim::Caller {
 public:
  EngineCaller(CallContext& ctx, ServiceEndpoint* fd_space) : ctx_(ctx), fd_space_(fd_space) {}
  pid_t tid() const override { return ctx_.tid(); }
  pid_t tgid() override {
    if (tgid_ == 0) tgid_ = ctx_.tgid();
    return tgid_;
  }
  std::shared_ptr<hostshim::DeviceBackend> BackendOf(int32_t fd) override {
    std::shared_ptr<Session> s =
        fd_space_ != nullptr ? fd_space_->SessionOf(static_cast<uint32_t>(fd)) : ctx_.SessionOfFd(fd);
    return s && s->endpoint() == nullptr ? s->shared_backend() : nullptr;
  }

 private:
  CallContext& ctx_;
  ServiceEndpoint* fd_space_;
  pid_t tgid_ = 0;
};

// The answer to a call that never reached a known ioctl.
IoctlOutcome Reject(const Session& s, const IoctlRequest& req, CallContext& ctx, const Answer& answer,
                    abi::NvError err, int direct_errno, const abi::IoctlDesc* desc, Clock::time_point t0,
                    std::span<const uint8_t> in = {}) {
  int e = req.via == abi::Via::kDirect && direct_errno != 0 ? direct_errno : answer(err, ctx);
  if (Tracer* t = s.config().tracer)
    t->Ioctl({ctx.tid(), req.fd, &s.device(), desc, req.code, req.via, in, {}, {}, {}, err, e, false,
              Clock::now() - t0});
  return {IoctlOutcome::kAnswer, e};
}

// The call with its buffers as the seed's entry reads them. What is read and written is the
// entry's (its direction and fields); which of the call's buffers hold the argument is the
// guest's code's. A direction variant (a catalogue alias) carried by an nvdrv Ioctl passes its
// argument only in the buffers its own direction names (libnx nvIoctl: the input buffer for
// "write", the output buffer for "read"), so a direction the variant lacks uses the one buffer it
// gave. For the seed's own code, and for a Linux ioctl (one pointer for both), nothing changes.
IoctlRequest ArgumentBuffers(const IoctlRequest& req, const abi::IoctlDesc& desc) {
  IoctlRequest r = req;
  if (desc.variable() || req.code == desc.code) return r;
  const abi::Dir sent = abi::IocDir(req.code);
  if (!abi::DirHasIn(sent) && abi::DirHasOut(sent)) {
    r.buf.in = req.buf.out;
    r.buf.in_size = req.buf.out_size;
  }
  if (!abi::DirHasOut(sent) && abi::DirHasIn(sent)) {
    r.buf.out = req.buf.in;
    r.buf.out_size = req.buf.in_size;
  }
  return r;
}

}  // namespace

int DirectAnswer(abi::NvError err, GuestIo&) { return abi::NvErrorToErrno(err); }

IoctlOutcome RunIoctl(Session& session, const IoctlRequest& sent, CallContext& ctx,
                      const Answer& answer) {
  const Clock::time_point t0 = Clock::now();
  const abi::DeviceDesc& dev = session.device();
  const abi::IoctlDesc* desc = abi::FindIoctl(dev, sent.code, session.config().firmware);
  if (desc == nullptr) {
    NVS_LOG_LIMITED(spdlog::level::debug, "{}: unknown ioctl 0x{:08X}", dev.path, sent.code);
    return Reject(session, sent, ctx, answer, abi::NvError::kNotImplemented, ENOTTY, nullptr, t0);
  }
  const IoctlRequest req = ArgumentBuffers(sent, *desc);
  const GuestConfig& config = session.config();
  if (config.learner != nullptr) config.learner->Called(*desc);
  if ((req.via == abi::Via::kIoctl2 && !(desc->flags & abi::kUsesIoctl2)) ||
      (req.via == abi::Via::kIoctl3 && !(desc->flags & abi::kUsesIoctl3))) {
    return Reject(session, req, ctx, answer, abi::NvError::kNotSupported, 0, desc, t0);
  }
  // The policy: a violation is refused (AccessDenied), audited (goes on) or kills the guest (the
  // call is never answered: the guest dies waiting for it).
  auto violation = [&](std::string_view rule, std::string_view detail,
                       std::span<const uint8_t> in) -> std::optional<IoctlOutcome> {
    switch (Violation(config, ctx.tid(), dev, desc, rule, detail)) {
      case ViolationOutcome::kProceed: return std::nullopt;
      case ViolationOutcome::kKilled: return IoctlOutcome{IoctlOutcome::kDropped, 0};
      case ViolationOutcome::kRefuse: break;
    }
    return Reject(session, req, ctx, answer, abi::NvError::kAccessDenied, 0, desc, t0, in);
  };
  const RuleRef rule = FindRule(config, dev, *desc);
  if (rule.verdict == policy::Verdict::kDeny) {
    if (auto out = violation("ioctl denied", "the policy denies this ioctl", {})) return *out;
  }
  // What the guest's identity (permission mask, production mode) answers, whatever the action.
  if (abi::NvError id = IdentityAnswer(config, dev, *desc); id != abi::NvError::kSuccess) {
    NVS_LOG_LIMITED(spdlog::level::debug, "{}: {}: {} for service {} (mask 0x{:X}{})", dev.path, desc->name,
                  abi::NvErrorName(id), config.service, config.permission_mask,
                  config.policy.production_mode ? ", production mode" : "");
    return Reject(session, req, ctx, answer, id, 0, desc, t0);
  }

  // The main buffer, 8-byte aligned so backends may view it as their struct.
  const uint32_t size = abi::IocSize(req.code);
  const bool has_in = abi::DirHasIn(desc->dir()), has_out = abi::DirHasOut(desc->dir());
  if ((has_in && req.buf.in_size < size) || (has_out && req.buf.out_size < size))
    return Reject(session, req, ctx, answer, abi::NvError::kInvalidSize, 0, desc, t0);
  absl::InlinedVector<uint64_t, 64> storage((size + 7) / 8, 0);
  std::span<uint8_t> main(reinterpret_cast<uint8_t*>(storage.data()), size);
  if (has_in && size > 0 && !ctx.Read(req.buf.in, main)) return {IoctlOutcome::kAnswer, EFAULT};

  const abi::BufferSizes sizes{size, req.via == abi::Via::kIoctl2 ? req.buf.in2_size : 0,
                               req.via == abi::Via::kIoctl3 ? req.buf.out2_size : 0};
  // The catalogue's limits here; the policy's lower ones are checked below, as a violation.
  const std::vector<uint32_t> limits =
      desc->arrays.empty() ? std::vector<uint32_t>() : LayoutLimits(config, *desc);
  abi::ArrayLayout layout = abi::LayOutArrays(*desc, req.via, main, sizes, limits);
  if (layout.err != abi::NvError::kSuccess) {
    NVS_LOG_LIMITED(spdlog::level::debug, "{}: {}: {}{}{}", dev.path, desc->name, layout.problem,
                  layout.culprit ? " in " : "", layout.culprit ? layout.culprit->name : "");
    // The header was copied: the trace shows the counts that did not fit.
    return Reject(session, req, ctx, answer, layout.err, 0, desc, t0,
                  has_in ? std::span<const uint8_t>(main) : std::span<const uint8_t>());
  }

  if (config.learner != nullptr) {
    if (!layout.slices.empty()) config.learner->Arrays(*desc, layout.slices);
    if (has_in) config.learner->Fields(*desc, std::span<const uint8_t>(main).first(
                                                  std::min<size_t>(size, desc->fixed_size())));
  }
  if (!config.array_limits.empty() || rule.rule != nullptr) {
    std::span<const uint8_t> in =
        has_in ? std::span<const uint8_t>(main) : std::span<const uint8_t>();
    std::span<const uint8_t> fixed = in.first(std::min<size_t>(in.size(), desc->fixed_size()));
    if (std::optional<Breach> b = CheckArguments(config, *desc, rule.rule, fixed, layout)) {
      if (auto out = violation(b->rule, b->detail, in)) return *out;
    }
  }

  auto done = std::make_shared<Completion>();
  done->desc = desc;
  done->device = &dev;
  done->req = req;
  done->out_end = has_out ? layout.out_end : 0;
  done->answer = answer;
  done->tracer = config.tracer;
  done->tid = ctx.tid();
  done->start = t0;
  if (layout.in2_bytes > 0) {
    done->in2.resize(layout.in2_bytes);
    if (!ctx.Read(req.buf.in2, done->in2)) return {IoctlOutcome::kAnswer, EFAULT};
  }
  done->out2.resize(layout.out2_bytes);
  if (done->tracer != nullptr) done->in_copy.assign(main.begin(), has_in ? main.end() : main.begin());

  // Nothing may change before we know the guest thread still waits for this call (the copy may
  // also have come from a task that reused its id). A pure call changes nothing, and its
  // write-back is no safer for a check made before it, so it skips the syscall.
  const bool fixed_answer = (desc->flags & abi::kSeedAnswer) != 0;
  if (!desc->pure() && !fixed_answer && !ctx.StillValid()) return {IoctlOutcome::kDropped, 0};

  abi::NvError err = desc->answer;
  if (!fixed_answer) {
    absl::InlinedVector<std::span<uint8_t>, 5> arrays;
    for (const abi::ArraySlice& sl : layout.slices) {
      std::span<uint8_t> buf = sl.buffer == abi::Buffer::kMain  ? main
                               : sl.buffer == abi::Buffer::kIn2 ? std::span<uint8_t>(done->in2)
                                                                : std::span<uint8_t>(done->out2);
      arrays.push_back(buf.subspan(sl.offset, sl.bytes));
    }
    if (ServiceEndpoint* ep = session.endpoint()) {
      std::optional<IoctlOutcome> carried = ep->Command(*desc, main, req, ctx);
      if (carried) return *carried;
      return {IoctlOutcome::kAnswer, done->Finish(main, abi::NvError::kSuccess, ctx)};
    }
    EngineParker parker(main, ctx, done);
    EngineCaller caller(ctx, req.fd_space);
    hostshim::Call call{*desc, main, parker, req.via, arrays, done->in2, done->out2, &caller};
    hostshim::Result r = session.backend().Ioctl(call);
    if (r.parked) return {IoctlOutcome::kParked, 0};
    err = r.err;
  }
  return {IoctlOutcome::kAnswer, done->Finish(main, err, ctx)};
}

}  // namespace nvsentry::proxy
