#include "hostshim/host/host_context.h"

#include <fcntl.h>

#include <cerrno>
#include <cstring>

#include "abi/l4t/nvhost_ctrl.h"
#include "absl/strings/str_cat.h"
#include "hostshim/host/host_port.h"
#include "hostshim/rate_limited_log.h"

namespace nvsentry::hostshim::host {

absl::StatusOr<std::unique_ptr<HostContext>> HostContext::Make(const HostOptions& options) {
  auto open_node = [&](std::string_view name) -> absl::StatusOr<UniqueFd> {
    const std::string path = absl::StrCat(options.dev_dir, "/", std::string(name));
    UniqueFd fd(OpenHostNode(path));
    if (!fd) return absl::NotFoundError(absl::StrCat("cannot open ", path, ": ", strerror(errno)));
    return fd;
  };
  absl::StatusOr<UniqueFd> nvmap = open_node("nvmap");
  if (!nvmap.ok()) return nvmap.status();
  absl::StatusOr<UniqueFd> ctrl = open_node("nvhost-ctrl");
  if (!ctrl.ok()) return ctrl.status();
  return std::unique_ptr<HostContext>(
      new HostContext(options, *std::move(nvmap), *std::move(ctrl)));
}

HostContext::HostContext(const HostOptions& options, UniqueFd nvmap_fd, UniqueFd ctrl_fd)
    : options_(options),
      nvmap_fd_(std::move(nvmap_fd)),
      ctrl_fd_(std::move(ctrl_fd)),
      host_nvmap_(nvmap_fd_.get()),
      twins_(host_nvmap_, options.budget) {
  memory_waits_ = std::make_unique<MemoryWaits>(host_nvmap_, [this] { PullGuestMemory(); });
  mirror_ = std::make_unique<SyncpointMirror>(
      syncpoints_, [this](uint32_t id) { return ReadHostSyncpoint(id); },
      [this] { PullGuestMemory(); });
  mirror_->SetGuestSyncpoints(&kept_);
  // Only while a job that may wait for memory the CPU writes runs: each push compares every
  // page the guest touched, and the poll runs every 20 us to 1 ms.
  mirror_->SetBeforePoll([this] {
    if (gpu_writes_.AnyWaits()) PushGuestMemory();
  });
  mirror_->SetAfterPoll([this] { FlushDeferred(); });
}

absl::StatusOr<uint32_t> HostContext::ReadHostSyncpoint(uint32_t id) {
  abi::l4t::nvhost_ctrl::SyncptRead r{id, 0};
  HostCallResult res = HostIoctlOf(ctrl_fd_.get(), abi::l4t::L4tNode::kNvhostCtrl,
                                   abi::l4t::nvhost_ctrl::kSyncptRead, r);
  if (res.err != 0)
    return absl::UnavailableError(absl::StrCat("host SYNCPT_READ: ", strerror(res.err)));
  return r.value;
}

std::optional<uint32_t> HostContext::Mirrored(uint32_t id) {
  if (!sim::Syncpoints::ValidId(id)) return std::nullopt;
  // A kept syncpoint's table value is the guest's count: the host's is the last one seen.
  if (kept_.Kept(id)) return kept_.LastHost(id);
  return syncpoints_.Read(id);
}

uint64_t HostContext::GuestIncrements(uint32_t id) {
  if (kept_.Kept(id)) return 0;  // the guest's increments of it never reach the host
  absl::MutexLock l(&owned_mu_);
  auto it = guest_increments_.find(id);
  return it == guest_increments_.end() ? 0 : it->second;
}

std::optional<uint32_t> HostContext::Read(uint32_t id) {
  // Not through the mirror's Refresh: this runs inside a submission, after its push, and moving
  // the mirror pulls every twin first. The mirror catches up at its next read.
  absl::StatusOr<uint32_t> v = ReadHostSyncpoint(id);
  if (v.ok()) return *v;
  return std::nullopt;
}

HostContext::~HostContext() {
  mirror_.reset();  // their threads first
  memory_waits_.reset();
}

void HostContext::AddFlusher(const void* key, std::function<void()> flush) {
  absl::MutexLock l(&flushers_mu_);
  flushers_[key] = std::move(flush);
}

void HostContext::RemoveFlusher(const void* key) {
  absl::MutexLock l(&flushers_mu_);
  flushers_.erase(key);
}

void HostContext::FlushDeferred() {
  // RemoveFlusher waits for this; a flush already running (this thread's, from inside a flush, or
  // another's) is left to finish: the next poll flushes again.
  if (!flushers_mu_.TryLock()) return;
  for (const auto& [key, flush] : flushers_) flush();
  flushers_mu_.Unlock();
}

abi::NvError HostContext::PushGuestMemory(const SyncPlan* plan) {
  absl::StatusOr<TwinCounts> c = plan != nullptr ? twins_.PushAll(*plan) : twins_.PushAll();
  if (c.ok()) return abi::NvError::kSuccess;
  NVS_LOG_LIMITED(spdlog::level::warn, "host backend: guest memory to the host: {}",
                  c.status().ToString());
  // Past twin_bytes: the budget's answer, as every budget gives (docs/policy.md).
  if (c.status().code() == absl::StatusCode::kResourceExhausted)
    return abi::NvError::kInsufficientMemory;
  return abi::NvError::kInvalidAddress;
}

void HostContext::PullGuestMemory() {
  // Which jobs are done is asked before anything is read: a job done then wrote all it will.
  const SyncPlan plan = gpu_writes_.Plan(
      [this](uint32_t id, uint32_t value) { return FencePassed(id, value, false); });
  absl::StatusOr<TwinCounts> c = twins_.PullAll(plan);
  if (c.ok()) {
    gpu_writes_.Retire(plan);
    return;
  }
  NVS_LOG_LIMITED(spdlog::level::warn, "host backend: host memory to the guest: {}",
                  c.status().ToString());
}

}  // namespace nvsentry::hostshim::host
