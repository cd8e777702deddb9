#include "hostshim/host/pushbuffer_copy.h"

#include "hostshim/rate_limited_log.h"
#include "hostshim/sim/engines/pushbuffer.h"

namespace nvsentry::hostshim::host {

std::unique_ptr<PushbufferCopy> PushbufferCopy::Make(HostNvmap& nvmap,
                                                     std::shared_ptr<HostAddressSpace> space,
                                                     std::shared_ptr<BudgetAccount> budget,
                                                     pid_t tid, abi::NvError* err) {
  auto charge = std::make_unique<BudgetHold>();
  if (!charge->Take(std::move(budget), BudgetKind::kPinnedBytes, kBytes)) {
    NVS_LOG_LIMITED(spdlog::level::warn,
                    "host backend: the private pushbuffer copy of a channel ({} bytes of host "
                    "memory) is past the guest's pinned_bytes; InsufficientMemory",
                    kBytes);
    *err = abi::NvError::kInsufficientMemory;
    return nullptr;
  }
  sim::NvmapObject::Attributes attr;
  attr.allocated = true;
  absl::StatusOr<uint32_t> handle = nvmap.Make(kBytes, attr);
  if (!handle.ok()) {
    NVS_LOG_LIMITED(spdlog::level::warn, "host backend: the private pushbuffer copy: {}",
                    handle.status().ToString());
    *err = abi::NvError::kInsufficientMemory;
    return nullptr;
  }
  uint64_t va = 0;
  if (abi::NvError e = space->MapPrivate(tid, *handle, kBytes, &va); e != abi::NvError::kSuccess) {
    nvmap.Free(*handle);
    *err = e;
    return nullptr;
  }
  *err = abi::NvError::kSuccess;
  return std::unique_ptr<PushbufferCopy>(
      new PushbufferCopy(nvmap, std::move(space), std::move(charge), *handle, va));
}

PushbufferCopy::~PushbufferCopy() {
  space_->UnmapPrivate(va_);
  nvmap_.Free(handle_);
}

abi::NvError PushbufferCopy::Reserve(uint64_t words, Passed passed, uint64_t* span) {
  if (words > kBytes / 4) words = kBytes / 4 + 1;  // Take answers OutOfRange, without overflow
  absl::StatusOr<uint64_t> at =
      ring_.Take(words * 4, [&](uint32_t id, uint32_t v) { return passed(id, v, false); });
  if (at.status().code() == absl::StatusCode::kUnavailable)
    at = ring_.Take(words * 4, [&](uint32_t id, uint32_t v) { return passed(id, v, true); });
  if (!at.ok()) {
    NVS_LOG_LIMITED(spdlog::level::warn,
                    "host backend: a submission of {} pushbuffer words: {} (the private copy "
                    "holds {} bytes per channel)",
                    words, std::string(at.status().message()), kBytes);
    return at.status().code() == absl::StatusCode::kUnavailable ? abi::NvError::kBusy
                                                                : abi::NvError::kInsufficientMemory;
  }
  *span = *at;
  return abi::NvError::kSuccess;
}

abi::NvError PushbufferCopy::Fill(uint64_t span, std::span<const uint32_t> words,
                                  std::span<const abi::channel::GpfifoEntry> entries,
                                  std::vector<abi::channel::GpfifoEntry>* host_entries) {
  const auto* bytes = reinterpret_cast<const uint8_t*>(words.data());
  if (absl::Status s = nvmap_.Write(handle_, span, {bytes, words.size_bytes()}); !s.ok()) {
    ring_.Abandon(span);
    NVS_LOG_LIMITED(spdlog::level::warn, "host backend: the private pushbuffer copy: {}",
                    s.ToString());
    return abi::NvError::kInsufficientMemory;
  }
  host_entries->assign(entries.begin(), entries.end());
  uint64_t va = va_ + span;
  for (abi::channel::GpfifoEntry& e : *host_entries) {
    e.entry0 = (static_cast<uint32_t>(va) & ~3u) | (e.entry0 & 3u);
    e.entry1 = (e.entry1 & ~0xFFu) | static_cast<uint32_t>((va >> 32) & 0xFF);
    va += uint64_t{sim::pb::EntryLength(e.entry1)} * 4;
  }
  return abi::NvError::kSuccess;
}

}  // namespace nvsentry::hostshim::host
