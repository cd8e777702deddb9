#include "proxy/nvdrv_service.h"

#include <cerrno>
#include <cstring>

#include "abi/devices/nvdrv.h"
#include "abi/services.h"
#include "absl/strings/str_cat.h"
#include "hostshim/rate_limited_log.h"
#include "proxy/learn.h"
#include "proxy/refusal.h"
#include "proxy/trace.h"
#include "spdlog/spdlog.h"

namespace nvsentry::proxy {
namespace nv = abi::nvdrv;
using abi::NvError;

namespace {

template <typename T>
T& As(std::span<uint8_t> cmd) {
  return *reinterpret_cast<T*>(cmd.data());
}

}  // namespace

NvdrvService::~NvdrvService() = default;

size_t NvdrvService::open_fds() const {
  absl::MutexLock l(&mu_);
  return fds_.size();
}

std::shared_ptr<Session> NvdrvService::SessionOf(int32_t fd) const {
  absl::MutexLock l(&mu_);
  auto it = fds_.find(static_cast<uint32_t>(fd));
  return it == fds_.end() ? nullptr : it->second;
}

bool NvdrvService::Carries(uint32_t code) {
  return code == nv::kIoctl || code == nv::kIoctl2 || code == nv::kIoctl3;
}

hostshim::Result NvdrvService::Ioctl(hostshim::Call& call) {
  std::span<uint8_t> cmd = call.arg;
  const pid_t tid = call.caller != nullptr ? call.caller->tid() : 0;
  NvError err = NvError::kSuccess;
  switch (call.desc.code) {
    case nv::kOpen: err = Open(cmd, tid); break;
    case nv::kClose: err = Close(cmd, tid); break;
    case nv::kInitialize: err = Initialize(cmd, false); break;
    case nv::kInitializeDevtools: err = Initialize(cmd, true); break;
    case nv::kQueryEvent: {
      hostshim::Result r = QueryEvent(cmd, call.caller);
      if (r.undelivered != 0) return r;
      err = r.err;
      break;
    }
    case nv::kMapSharedMem: {
      // Switchbrew does not say what the mapping does: the command checks its fd and answers
      // NotSupported.
      auto& c = As<nv::MapSharedMem>(cmd);
      err = SessionOf(static_cast<int32_t>(c.fd)) ? NvError::kNotSupported : NvError::kBadParameter;
      break;
    }
    case nv::kGetStatus: err = GetStatus(cmd); break;
    case nv::kSetAruidWithoutCheck: err = SetAruid(cmd, true); break;
    case nv::kSetAruid: err = SetAruid(cmd, false); break;
    case nv::kDumpStatus: DumpStatus(tid); return hostshim::Result::Done(NvError::kSuccess);
    case nv::kSetGraphicsFirmwareMemoryMarginEnabled: err = SetMargin(cmd); break;
    default: err = NvError::kNotImplemented; break;  // the carriers come through Unwrap
  }
  int off = nv::ErrorOffset(call.desc.code);
  if (off >= 0) {
    uint32_t v = static_cast<uint32_t>(err);
    std::memcpy(cmd.data() + off, &v, sizeof v);
  }
  return hostshim::Result::Done(NvError::kSuccess);
}

NvdrvService::Carried NvdrvService::Unwrap(uint32_t code, std::span<const uint8_t> cmd,
                                           const IoctlRequest& outer) const {
  Carried out;
  uint32_t fd = 0;
  if (code == nv::kIoctl) {
    const auto& c = *reinterpret_cast<const nv::Ioctl*>(cmd.data());
    fd = c.fd;
    out.request = {
        c.code, abi::Via::kIoctl, {c.in, c.in_size, c.out, c.out_size}, static_cast<int>(fd)};
  } else if (code == nv::kIoctl2) {
    const auto& c = *reinterpret_cast<const nv::Ioctl2*>(cmd.data());
    fd = c.fd;
    out.request = {c.code,
                   abi::Via::kIoctl2,
                   {c.in, c.in_size, c.out, c.out_size, c.in2, c.in2_size, 0, 0},
                   static_cast<int>(fd)};
  } else {
    const auto& c = *reinterpret_cast<const nv::Ioctl3*>(cmd.data());
    fd = c.fd;
    out.request = {c.code,
                   abi::Via::kIoctl3,
                   {c.in, c.in_size, c.out, c.out_size, 0, 0, c.out2, c.out2_size},
                   static_cast<int>(fd)};
  }
  out.request.fd_space = this;
  // The carried ioctl's NvError goes into this command's error word in the guest.
  const uint64_t err_addr = outer.buf.out + static_cast<uint64_t>(nv::ErrorOffset(code));
  out.answer = [err_addr](NvError e, GuestIo& io) {
    uint32_t v = static_cast<uint32_t>(e);
    return io.Write(err_addr, std::span(reinterpret_cast<const uint8_t*>(&v), sizeof v)) ? 0
                                                                                         : EFAULT;
  };
  bool initialized;
  {
    absl::MutexLock l(&mu_);
    initialized = initialized_;
  }
  if (!initialized)
    out.refused = NvError::kNotInitialized;
  else if (!(out.session = SessionOf(static_cast<int32_t>(fd))))
    out.refused = NvError::kBadParameter;
  return out;
}

NvError NvdrvService::Open(std::span<uint8_t> cmd, pid_t tid) {
  auto& c = As<nv::Open>(cmd);
  c.fd = 0;
  const char* end = static_cast<const char*>(std::memchr(c.path, 0, sizeof c.path));
  if (end == nullptr) return NvError::kBadParameter;
  std::string_view path(c.path, end - c.path);
  const abi::DeviceDesc* dev = abi::FindDeviceByPath(path);
  // The endpoint itself is not a device the service can open.
  if (dev != nullptr && dev->id == abi::DeviceId::kNvdrv) dev = nullptr;
  NvError verdict = MayOpen(config_, dev);
  uint32_t fd = 0;
  if (verdict == NvError::kSuccess) {
    absl::MutexLock l(&mu_);
    if (!initialized_)
      verdict = NvError::kNotInitialized;
    else if (fds_.size() >= kMaxFds)
      verdict = NvError::kResourceError;
    else if (budget_ - used_ < kOpenCost)
      verdict = NvError::kInsufficientTransferMemory;
    else {
      NewSession made = MakeSession(config_, *dev, driver_);
      verdict = made.refused;
      if (made.session) {
        fd = next_fd_++;
        used_ += kOpenCost;
        peak_used_ = std::max(peak_used_, used_);
        fds_[fd] = std::move(made.session);
      }
    }
  }
  if (verdict == NvError::kSuccess) {
    c.fd = fd;
    if (Learner* l = config_.services.learner.get()) l->Opened(*dev);
  }
  std::optional<abi::MissingPermission> missing = RefusedOpen(config_, dev, verdict);
  if (missing) {
    LogRefusedOpen(path, *missing);
  } else if (verdict == NvError::kInsufficientMemory) {
    NVS_LOG_LIMITED(
        spdlog::level::info,
        "nvdrv open {}: the driver cannot keep another (open_fds or the device's own budget)",
        path);
  }
  if (Tracer* t = config_.services.tracer.get())
    t->Open({tid, path, verdict == NvError::kSuccess ? static_cast<int>(fd) : -1, 0, verdict, true,
             std::chrono::nanoseconds(0), false, std::move(missing)});
  return verdict;
}

NvError NvdrvService::Close(std::span<uint8_t> cmd, pid_t tid) {
  auto& c = As<nv::Close>(cmd);
  std::shared_ptr<Session> gone;
  {
    absl::MutexLock l(&mu_);
    auto it = fds_.find(c.fd);
    if (it == fds_.end()) return NvError::kBadParameter;
    gone = std::move(it->second);
    fds_.erase(it);
    used_ -= kOpenCost;
  }
  if (Tracer* t = config_.services.tracer.get())
    t->Close({tid, gone->device().path, static_cast<int>(c.fd), true});
  return NvError::kSuccess;  // the session ends when its last in-flight call lets go of it
}

NvError NvdrvService::Initialize(std::span<uint8_t> cmd, bool devtools) {
  auto& c = As<nv::Initialize>(cmd);
  // Transfer memory is page-granular.
  if (c.size == 0 || c.size % 0x1000 != 0) return NvError::kBadParameter;
  absl::MutexLock l(&mu_);
  if (devtools) {
    if (!initialized_) return NvError::kNotInitialized;
    return NvError::kSuccess;  // the size is the devtools' memory: nothing here keeps it
  }
  if (initialized_) return NvError::kInvalidState;
  if (Learner* l = config_.services.learner.get()) l->Initialized(c.size);
  // The policy's transfer-memory budget: the most the guest may lend the driver.
  if (c.size > config_.policy.rules().budgets.transfer_memory) {
    NVS_LOG_LIMITED(spdlog::level::info,
                    "nvdrv initialize: size 0x{:X} above the transfer_memory budget 0x{:X}", c.size,
                    config_.policy.rules().budgets.transfer_memory);
    return NvError::kInsufficientTransferMemory;
  }
  initialized_ = true;
  budget_ = c.size;
  return NvError::kSuccess;
}

hostshim::Result NvdrvService::QueryEvent(std::span<uint8_t> cmd, hostshim::Caller* caller) {
  using hostshim::Result;
  auto& c = As<nv::QueryEvent>(cmd);
  c.event_fd = -1;
  if (c.flags & ~1u) return Result::Done(NvError::kBadParameter);
  std::shared_ptr<Session> s = SessionOf(static_cast<int32_t>(c.fd));
  if (!s) return Result::Done(NvError::kBadParameter);
  int efd = -1;
  NvError e = s->backend().QueryEvent(c.event_id, &efd);
  if (e != NvError::kSuccess) return Result::Done(e);
  if (caller == nullptr) return Result::Done(NvError::kNotSupported);  // no guest (fuzzers)
  int g = caller->PlaceFd(efd, (c.flags & 1) != 0);
  if (g < 0) return Result::Undelivered(-g);  // e.g. EMFILE: the guest's own fd table is full
  c.event_fd = g;
  return Result::Done(NvError::kSuccess);
}

NvError NvdrvService::GetStatus(std::span<uint8_t> cmd) {
  auto& c = As<nv::GetStatus>(cmd);
  absl::MutexLock l(&mu_);
  if (!initialized_) return NvError::kNotInitialized;
  // One pool without fragmentation: what is free can be allocated in one piece.
  c.status.free_size = budget_ - used_;
  c.status.allocatable_size = budget_ - used_;
  c.status.minimum_free_size = budget_ - peak_used_;
  c.status.minimum_allocatable_size = budget_ - peak_used_;
  std::memset(c.status.reserved, 0, sizeof c.status.reserved);
  return NvError::kSuccess;
}

NvError NvdrvService::SetAruid(std::span<uint8_t> cmd, bool unchecked) {
  auto& c = As<nv::SetAruid>(cmd);
  if (unchecked && !config_.policy.permissions().MaySetUncheckedAruid())
    return NvError::kAccessDenied;
  absl::MutexLock l(&mu_);
  aruid_ = c.aruid;
  return NvError::kSuccess;
}

NvError NvdrvService::SetMargin(std::span<uint8_t> cmd) {
  auto& c = As<nv::SetGraphicsFirmwareMemoryMarginEnabled>(cmd);
  if (!config_.policy.permissions().MaySetMemoryMargin()) return NvError::kAccessDenied;
  absl::MutexLock l(&mu_);
  // Switchbrew: only the "nvdrv" service takes the value; the others keep it off.
  margin_enabled_ = config_.policy.service() == "nvdrv" && c.value != 0;
  return NvError::kSuccess;
}

void NvdrvService::DumpStatus(pid_t tid) {
  std::string text;
  {
    absl::MutexLock l(&mu_);
    text = absl::StrCat("nvdrv status: service ", config_.policy.service(), ", initialized ",
                        initialized_ ? "yes" : "no", ", budget ", budget_, " used ", used_,
                        " peak ", peak_used_, ", aruid ", aruid_, ", margin ",
                        margin_enabled_ ? "on" : "off", ", fds:");
    for (const auto& [fd, s] : fds_)
      absl::StrAppend(&text, " ", fd, "=", std::string(s->device().path));
  }
  absl::StrAppend(&text, "; ", driver_.Status());
  NVS_LOG_LIMITED(spdlog::level::info, "{}", text);
  if (Tracer* t = config_.services.tracer.get()) t->Note(tid, text);
}

}  // namespace nvsentry::proxy
