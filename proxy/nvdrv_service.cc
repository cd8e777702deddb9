#include "proxy/nvdrv_service.h"

#include <cerrno>
#include <cstring>

#include "abi/devices/nvdrv.h"
#include "abi/services.h"
#include "absl/strings/str_cat.h"
#include "proxy/learn.h"
#include "proxy/trace.h"
#include "hostshim/rate_limited_log.h"
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

std::shared_ptr<Session> NvdrvService::SessionOf(uint32_t fd) const {
  absl::MutexLock l(&mu_);
  auto it = fds_.find(fd);
  return it == fds_.end() ? nullptr : it->second;
}

std::optional<IoctlOutcome> NvdrvService::Command(const abi::IoctlDesc& desc,
                                                  std::span<uint8_t> cmd, const IoctlRequest& req,
                                                  CallContext& ctx) {
  NvError err = NvError::kSuccess;
  switch (desc.code) {
    case nv::kIoctl:
    case nv::kIoctl2:
    case nv::kIoctl3: return Nested(desc.code, cmd, req, ctx);
    case nv::kOpen: err = Open(cmd, ctx); break;
    case nv::kClose: err = Close(cmd, ctx); break;
    case nv::kInitialize: err = Initialize(cmd, false); break;
    case nv::kInitializeDevtools: err = Initialize(cmd, true); break;
    case nv::kQueryEvent: {
      int place_errno = 0;
      err = QueryEvent(cmd, ctx, &place_errno);
      if (place_errno != 0) return IoctlOutcome{IoctlOutcome::kAnswer, place_errno};
      break;
    }
    case nv::kMapSharedMem: {
      // Switchbrew does not say what the mapping does; until nvmap objects exist (issue 5) the
      // command checks its fd and answers NotSupported.
      auto& c = As<nv::MapSharedMem>(cmd);
      err = SessionOf(c.fd) ? NvError::kNotSupported : NvError::kBadParameter;
      break;
    }
    case nv::kGetStatus: err = GetStatus(cmd); break;
    case nv::kSetAruidWithoutCheck: err = SetAruid(cmd, true); break;
    case nv::kSetAruid: err = SetAruid(cmd, false); break;
    case nv::kDumpStatus: DumpStatus(ctx); return std::nullopt;
    case nv::kSetGraphicsFirmwareMemoryMarginEnabled: err = SetMargin(cmd); break;
    default: err = NvError::kNotImplemented; break;
  }
  int off = nv::ErrorOffset(desc.code);
  if (off >= 0) {
    uint32_t v = static_cast<uint32_t>(err);
    std::memcpy(cmd.data() + off, &v, sizeof v);
  }
  return std::nullopt;
}

IoctlOutcome NvdrvService::Nested(uint32_t command, std::span<uint8_t> cmd,
                                  const IoctlRequest& outer, CallContext& ctx) {
  IoctlRequest inner;
  uint32_t fd = 0;
  int err_off = nv::ErrorOffset(command);
  if (command == nv::kIoctl) {
    auto& c = As<nv::Ioctl>(cmd);
    fd = c.fd;
    inner = {c.code, abi::Via::kIoctl, {c.in, c.in_size, c.out, c.out_size}, static_cast<int>(fd)};
  } else if (command == nv::kIoctl2) {
    auto& c = As<nv::Ioctl2>(cmd);
    fd = c.fd;
    inner = {c.code, abi::Via::kIoctl2,
             {c.in, c.in_size, c.out, c.out_size, c.in2, c.in2_size, 0, 0}, static_cast<int>(fd)};
  } else {
    auto& c = As<nv::Ioctl3>(cmd);
    fd = c.fd;
    inner = {c.code, abi::Via::kIoctl3,
             {c.in, c.in_size, c.out, c.out_size, 0, 0, c.out2, c.out2_size}, static_cast<int>(fd)};
  }
  // The carried ioctl's NvError goes into this command's error word in the guest.
  const uint64_t err_addr = outer.buf.out + static_cast<uint64_t>(err_off);
  Answer answer = [err_addr](NvError e, GuestIo& io) {
    uint32_t v = static_cast<uint32_t>(e);
    return io.Write(err_addr, std::span(reinterpret_cast<const uint8_t*>(&v), sizeof v)) ? 0
                                                                                       : EFAULT;
  };
  bool initialized;
  {
    absl::MutexLock l(&mu_);
    initialized = initialized_;
  }
  if (!initialized) return {IoctlOutcome::kAnswer, answer(NvError::kNotInitialized, ctx)};
  std::shared_ptr<Session> session = SessionOf(fd);
  if (!session) return {IoctlOutcome::kAnswer, answer(NvError::kBadParameter, ctx)};
  inner.fd_space = this;
  return RunIoctl(*session, inner, ctx, answer);
}

NvError NvdrvService::Open(std::span<uint8_t> cmd, CallContext& ctx) {
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
    if (!initialized_) verdict = NvError::kNotInitialized;
    else if (fds_.size() >= kMaxFds) verdict = NvError::kResourceError;
    else if (budget_ - used_ < kOpenCost) verdict = NvError::kInsufficientTransferMemory;
    else {
      NewSession made = MakeSession(config_, *dev, factory_);
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
    if (config_.learner != nullptr) config_.learner->Opened(*dev);
  } else if (verdict == NvError::kInsufficientMemory) {
    NVS_LOG_LIMITED(spdlog::level::info, "nvdrv open {}: the driver cannot keep another (open_fds or the device's own budget)",
                 path);
  }
  if (Tracer* t = config_.tracer)
    t->Open({ctx.tid(), path, verdict == NvError::kSuccess ? static_cast<int>(fd) : -1, 0, verdict,
             true});
  return verdict;
}

NvError NvdrvService::Close(std::span<uint8_t> cmd, CallContext& ctx) {
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
  if (Tracer* t = config_.tracer)
    t->Close({ctx.tid(), gone->device().path, static_cast<int>(c.fd), true});
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
  if (config_.learner != nullptr) config_.learner->Initialized(c.size);
  // The policy's transfer-memory budget: the most the guest may lend the driver.
  if (c.size > config_.policy.budgets.transfer_memory) {
    NVS_LOG_LIMITED(spdlog::level::info, "nvdrv initialize: size 0x{:X} above the transfer_memory budget 0x{:X}", c.size,
                 config_.policy.budgets.transfer_memory);
    return NvError::kInsufficientTransferMemory;
  }
  initialized_ = true;
  budget_ = c.size;
  return NvError::kSuccess;
}

NvError NvdrvService::QueryEvent(std::span<uint8_t> cmd, CallContext& ctx, int* place_errno) {
  auto& c = As<nv::QueryEvent>(cmd);
  c.event_fd = -1;
  if (c.flags & ~1u) return NvError::kBadParameter;
  std::shared_ptr<Session> s = SessionOf(c.fd);
  if (!s) return NvError::kBadParameter;
  int efd = -1;
  NvError e = s->backend().QueryEvent(c.event_id, &efd);
  if (e != NvError::kSuccess) return e;
  int g = ctx.PlaceFd(efd, (c.flags & 1) != 0);
  if (g < 0) {
    *place_errno = -g;  // e.g. EMFILE: the guest's own fd table is full
    return NvError::kInsufficientMemory;
  }
  c.event_fd = g;
  return NvError::kSuccess;
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
  if (unchecked && !config_.permissions().MaySetUncheckedAruid()) return NvError::kAccessDenied;
  absl::MutexLock l(&mu_);
  aruid_ = c.aruid;
  return NvError::kSuccess;
}

NvError NvdrvService::SetMargin(std::span<uint8_t> cmd) {
  auto& c = As<nv::SetGraphicsFirmwareMemoryMarginEnabled>(cmd);
  if (!config_.permissions().MaySetMemoryMargin()) return NvError::kAccessDenied;
  absl::MutexLock l(&mu_);
  // Switchbrew: only the "nvdrv" service takes the value; the others keep it off.
  margin_enabled_ = config_.service == "nvdrv" && c.value != 0;
  return NvError::kSuccess;
}

void NvdrvService::DumpStatus(CallContext& ctx) {
  std::string text;
  {
    absl::MutexLock l(&mu_);
    text = absl::StrCat("nvdrv status: service ", config_.service, ", initialized ",
                        initialized_ ? "yes" : "no", ", budget ", budget_, " used ", used_,
                        " peak ", peak_used_, ", aruid ", aruid_, ", margin ",
                        margin_enabled_ ? "on" : "off", ", fds:");
    for (const auto& [fd, s] : fds_) absl::StrAppend(&text, " ", fd, "=", std::string(s->device().path));
  }
  if (config_.driver_status) absl::StrAppend(&text, "; ", config_.driver_status());
  NVS_LOG_LIMITED(spdlog::level::info, "{}", text);
  if (Tracer* t = config_.tracer) t->Note(ctx.tid(), text);
}

}  // namespace nvsentry::proxy
