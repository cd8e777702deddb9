#include "proxy/engine.h"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <vector>

#include "hostshim/rate_limited_log.h"
#include "proxy/refusal.h"
#include "spdlog/spdlog.h"

namespace nvsentry::proxy {

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
  CallObserver* observer;               // null when nothing watches
  const GuestConfig* config = nullptr;  // the guest's (whose mask a refusal may be)
  pid_t tid;
  Clock::time_point start;
  bool parked = false;

  // `undelivered`: the backend's answer could not reach the guest (hostshim::Result); nothing is
  // written back and the syscall fails with it.
  int Finish(std::span<uint8_t> arg, abi::NvError err, GuestIo& io, int undelivered = 0) {
    const bool writes_back =
        undelivered == 0 &&
        (err == abi::NvError::kSuccess ||
         (err == abi::NvError::kTimeout && (desc->flags & abi::kOutputsOnTimeout)));
    int e = undelivered;
    if (writes_back && out_end > 0 && !io.Write(req.buf.out, arg.first(out_end))) e = EFAULT;
    if (e == 0 && writes_back && !out2.empty() && !io.Write(req.buf.out2, out2)) e = EFAULT;
    if (e == 0) e = answer(err, io);
    std::optional<abi::MissingPermission> missing =
        config != nullptr ? RefusedCall(*config, *device, desc, err) : std::nullopt;
    if (observer != nullptr) {
      std::span<const uint8_t> out = writes_back && e == 0
                                         ? std::span<const uint8_t>(arg.first(out_end))
                                         : std::span<const uint8_t>();
      observer->Finished({tid, req.fd, device, desc, req.code, req.via, in_copy, in2, out,
                          writes_back ? std::span<const uint8_t>(out2) : std::span<const uint8_t>(),
                          err, e, parked, Clock::now() - start, std::move(missing)});
    }
    return e;
  }
};

namespace {

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
  EngineCaller(CallContext& ctx, const FdSpace* fd_space) : ctx_(ctx), fd_space_(fd_space) {}
  pid_t tid() const override { return ctx_.tid(); }
  pid_t tgid() override {
    if (tgid_ == 0) tgid_ = ctx_.tgid();
    return tgid_;
  }
  std::shared_ptr<hostshim::DeviceBackend> BackendOf(int32_t fd) override {
    std::shared_ptr<Session> s =
        fd_space_ != nullptr ? fd_space_->SessionOf(fd) : ctx_.SessionOfFd(fd);
    return s ? s->shared_backend() : nullptr;
  }
  int PlaceFd(int fd, bool cloexec) override { return ctx_.PlaceFd(fd, cloexec); }

 private:
  CallContext& ctx_;
  const FdSpace* fd_space_;
  pid_t tgid_ = 0;
};

// The answer to a call that never reached a known ioctl.
IoctlOutcome Reject(const Session& s, const IoctlRequest& req, CallContext& ctx,
                    const Answer& answer, abi::NvError err, int direct_errno,
                    const abi::IoctlDesc* desc, Clock::time_point t0,
                    std::span<const uint8_t> in = {}) {
  int e = req.via == abi::Via::kDirect && direct_errno != 0 ? direct_errno : answer(err, ctx);
  std::optional<abi::MissingPermission> missing = RefusedCall(s.config(), s.device(), desc, err);
  if (ObserverSet& o = *s.config().services.observers; !o.empty())
    o.Finished({ctx.tid(),
                req.fd,
                &s.device(),
                desc,
                req.code,
                req.via,
                in,
                {},
                {},
                {},
                err,
                e,
                false,
                Clock::now() - t0,
                std::move(missing)});
  return {IoctlOutcome::kAnswer, e};
}

// The call with its buffers as Switchbrew's entry reads them. What is read and written is the
// entry's (its direction and fields); which of the call's buffers hold the argument is the
// guest's code's. A direction variant (a catalogue alias) carried by an nvdrv Ioctl passes its
// argument only in the buffers its own direction names (libnx nvIoctl: the input buffer for
// "write", the output buffer for "read"), so a direction the variant lacks uses the one buffer it
// gave. For Switchbrew's own code, and for a Linux ioctl (one pointer for both), nothing changes.
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

IoctlCall::IoctlCall(Session& session, const IoctlRequest& sent, CallContext& ctx,
                     const Answer& answer)
    : session_(session),
      dev_(session.device()),
      config_(session.config()),
      observers_(*config_.services.observers),
      req_(sent),
      ctx_(ctx),
      answer_(answer),
      t0_(Clock::now()) {}

IoctlCall::~IoctlCall() = default;

std::optional<IoctlOutcome> IoctlCall::Check() {
  for (auto stage : {&IoctlCall::Lookup, &IoctlCall::Admit, &IoctlCall::CopyIn,
                     &IoctlCall::CheckRules, &IoctlCall::Commit}) {
    if (std::optional<IoctlOutcome> end = (this->*stage)()) return end;
  }
  return std::nullopt;
}

// 1. The catalogue entry the code selects on the guest's firmware; an unknown code ends here.
std::optional<IoctlOutcome> IoctlCall::Lookup() {
  desc_ = abi::FindIoctl(dev_, req_.code, config_.policy.firmware());
  if (desc_ == nullptr) {
    NVS_LOG_LIMITED(spdlog::level::debug, "{}: unknown ioctl 0x{:08X}", dev_.path, req_.code);
    return Reject(abi::NvError::kNotImplemented, ENOTTY);
  }
  req_ = ArgumentBuffers(req_, *desc_);
  observers_.Called(*desc_);
  return std::nullopt;
}

// 2. Whether the guest may make this call at all: the service command that carried it, the
// policy's verdict for the ioctl, and Switchbrew's answers that follow from its identity.
std::optional<IoctlOutcome> IoctlCall::Admit() {
  if ((req_.via == abi::Via::kIoctl2 && !(desc_->flags & abi::kUsesIoctl2)) ||
      (req_.via == abi::Via::kIoctl3 && !(desc_->flags & abi::kUsesIoctl3)))
    return Reject(abi::NvError::kNotSupported);
  rule_ = FindRule(config_, dev_, *desc_);
  if (rule_.verdict == policy::Verdict::kDeny) {
    if (auto end = Violated("ioctl denied", "the policy denies this ioctl", {})) return end;
  }
  if (abi::NvError id = IdentityAnswer(config_, dev_, *desc_); id != abi::NvError::kSuccess) {
    NVS_LOG_LIMITED(spdlog::level::debug, "{}: {}: {} for service {} (mask 0x{:X}{})", dev_.path,
                    desc_->name, abi::NvErrorName(id), config_.policy.service(),
                    config_.policy.permission_mask(),
                    config_.policy.rules().production_mode ? ", production mode" : "");
    return Reject(id);
  }
  return std::nullopt;
}

// 3. The main buffer copied into sentry memory (8-byte aligned, so backends may view it as
// their struct) and its variable-length arrays laid out within the catalogue's limits.
std::optional<IoctlOutcome> IoctlCall::CopyIn() {
  size_ = abi::IocSize(req_.code);
  has_in_ = abi::DirHasIn(desc_->dir());
  has_out_ = abi::DirHasOut(desc_->dir());
  if ((has_in_ && req_.buf.in_size < size_) || (has_out_ && req_.buf.out_size < size_))
    return Reject(abi::NvError::kInvalidSize);
  storage_.assign((size_ + 7) / 8, 0);
  main_ = std::span<uint8_t>(reinterpret_cast<uint8_t*>(storage_.data()), size_);
  if (has_in_ && size_ > 0 && !ctx_.Read(req_.buf.in, main_))
    return IoctlOutcome{IoctlOutcome::kAnswer, EFAULT};
  const abi::BufferSizes sizes{size_, req_.via == abi::Via::kIoctl2 ? req_.buf.in2_size : 0,
                               req_.via == abi::Via::kIoctl3 ? req_.buf.out2_size : 0};
  // The catalogue's limits here; the policy's lower ones are checked in CheckRules.
  const std::vector<uint32_t> limits =
      desc_->arrays.empty() ? std::vector<uint32_t>() : LayoutLimits(config_, *desc_);
  layout_ = abi::LayOutArrays(*desc_, req_.via, main_, sizes, limits);
  if (layout_.err != abi::NvError::kSuccess) {
    NVS_LOG_LIMITED(spdlog::level::debug, "{}: {}: {}{}{}", dev_.path, desc_->name, layout_.problem,
                    layout_.culprit ? " in " : "", layout_.culprit ? layout_.culprit->name : "");
    // The header was copied: the trace shows the counts that did not fit.
    return Reject(layout_.err, 0, Input());
  }
  return std::nullopt;
}

// 4. The policy's rules on the arguments (array limits, field rules), after the observers saw
// them (--learn records what the guest passed, whatever the rules say).
std::optional<IoctlOutcome> IoctlCall::CheckRules() {
  const std::span<const uint8_t> in = Input();
  const std::span<const uint8_t> fixed = in.first(std::min<size_t>(in.size(), desc_->fixed_size()));
  observers_.Checked(*desc_, fixed, layout_.slices);
  if (!config_.policy.LowersArrayLimits() && rule_.rule == nullptr) return std::nullopt;
  if (std::optional<Breach> b = CheckArguments(config_, *desc_, rule_.rule, fixed, layout_))
    return Violated(b->rule, b->detail, in);
  return std::nullopt;
}

// 5. The rest of the guest's data (the Ioctl2 buffer), and the last check before anything may
// change: the guest thread still waits for this call (the copy may also have come from a task
// that reused its id). A pure call changes nothing and its write-back is no safer for a check
// made before it, so it skips the syscall; so does Switchbrew's fixed answer.
std::optional<IoctlOutcome> IoctlCall::Commit() {
  done_ = std::make_shared<Completion>();
  done_->desc = desc_;
  done_->device = &dev_;
  done_->req = req_;
  done_->out_end = has_out_ ? layout_.out_end : 0;
  done_->answer = answer_;
  done_->observer = observers_.empty() ? nullptr : &observers_;
  done_->config = &config_;
  done_->tid = ctx_.tid();
  done_->start = t0_;
  if (layout_.in2_bytes > 0) {
    done_->in2.resize(layout_.in2_bytes);
    if (!ctx_.Read(req_.buf.in2, done_->in2)) return IoctlOutcome{IoctlOutcome::kAnswer, EFAULT};
  }
  done_->out2.resize(layout_.out2_bytes);
  if (observers_.WantsInput())
    done_->in_copy.assign(main_.begin(), has_in_ ? main_.end() : main_.begin());
  if (!desc_->pure() && !(desc_->flags & abi::kFixedAnswer) && !ctx_.StillValid())
    return IoctlOutcome{IoctlOutcome::kDropped, 0};
  return std::nullopt;
}

// 6. The answer: Switchbrew's fixed one or the backend's (which may park the call); outputs
// written back once, on success only.
IoctlOutcome IoctlCall::Dispatch() {
  if (desc_->flags & abi::kFixedAnswer)
    return {IoctlOutcome::kAnswer, done_->Finish(main_, desc_->answer, ctx_)};
  absl::InlinedVector<std::span<uint8_t>, 5> arrays;
  for (const abi::ArraySlice& sl : layout_.slices) {
    std::span<uint8_t> buf = sl.buffer == abi::Buffer::kMain  ? main_
                             : sl.buffer == abi::Buffer::kIn2 ? std::span<uint8_t>(done_->in2)
                                                              : std::span<uint8_t>(done_->out2);
    arrays.push_back(buf.subspan(sl.offset, sl.bytes));
  }
  EngineParker parker(main_, ctx_, done_);
  EngineCaller caller(ctx_, req_.fd_space);
  hostshim::Call call{*desc_,     main_,       parker,  req_.via, arrays,
                      done_->in2, done_->out2, &caller, &dev_};
  hostshim::Result r = session_.backend().Ioctl(call);
  if (r.parked) return {IoctlOutcome::kParked, 0};
  return {IoctlOutcome::kAnswer, done_->Finish(main_, r.err, ctx_, r.undelivered)};
}

// What the guest passed in the main buffer, as copied (empty for an ioctl that reads nothing).
std::span<const uint8_t> IoctlCall::Input() const {
  return has_in_ ? std::span<const uint8_t>(main_) : std::span<const uint8_t>();
}

std::optional<IoctlOutcome> IoctlCall::Reject(abi::NvError err, int direct_errno,
                                              std::span<const uint8_t> in) {
  return proxy::Reject(session_, req_, ctx_, answer_, err, direct_errno, desc_, t0_, in);
}

// A policy violation: refused (AccessDenied), audited (the call goes on) or the guest killed
// (the call is never answered: the guest dies waiting for it).
std::optional<IoctlOutcome> IoctlCall::Violated(std::string_view rule, std::string_view detail,
                                                std::span<const uint8_t> in) {
  switch (Violation(config_, ctx_.tid(), dev_, desc_, rule, detail)) {
    case ViolationOutcome::kProceed: return std::nullopt;
    case ViolationOutcome::kKilled: return IoctlOutcome{IoctlOutcome::kDropped, 0};
    case ViolationOutcome::kRefuse: break;
  }
  return Reject(abi::NvError::kAccessDenied, 0, in);
}

int DirectAnswer(abi::NvError err, GuestIo&) { return abi::NvErrorToErrno(err); }

IoctlOutcome RunIoctl(Session& session, const IoctlRequest& sent, CallContext& ctx,
                      const Answer& answer) {
  IoctlCall call(session, sent, ctx, answer);
  if (std::optional<IoctlOutcome> end = call.Check()) return *end;
  return call.Dispatch();
}

}  // namespace nvsentry::proxy
