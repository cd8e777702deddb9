#include "hostshim/host/submission_check.h"

#include <vector>

#include "abi/gpu_classes.h"
#include "hostshim/rate_limited_log.h"
#include "hostshim/sim/pushbuffer.h"

namespace nvsentry::hostshim::host {

namespace {

sim::ChannelError Unmapped(uint64_t va, std::string what) {
  sim::ChannelError e;
  e.kind = sim::ChannelErrorKind::kMmu;
  e.notifier_code = sim::kNotifierMmuFault;
  e.fault = sim::MmuFault{sim::MmuFault::Kind::kUnmapped, va, false};
  e.what = std::move(what);
  return e;
}

}  // namespace

sim::ChannelError ErrorOfRefusal(const StreamRefusal& r) {
  sim::ChannelError e;
  const bool engine = abi::FindGpuClass(r.error_class) != nullptr;
  e.kind = engine ? sim::ChannelErrorKind::kGr : sim::ChannelErrorKind::kPbdma;
  e.notifier_code = engine ? sim::kNotifierGrException : sim::kNotifierPbdmaError;
  e.method_class = r.error_class;
  e.method = r.method;
  e.method_value = r.value;
  e.what = r.what;
  return e;
}

std::optional<sim::ChannelError> CheckSubmission(const HostAddressSpace* space, Twins& twins,
                                                 std::span<const abi::channel::GpfifoEntry> entries,
                                                 StreamCheck& check) {
  check.BeginSubmission();
  // The budget first, from the lengths alone: nothing is read for a submission past it.
  uint64_t total = 0;
  for (const abi::channel::GpfifoEntry& e : entries) total += sim::pb::EntryLength(e.entry1);
  if (total > StreamCheck::kMaxWords) {
    return ErrorOfRefusal(
        {0, 0, 0, "a submission of more pushbuffer words than the sentry checks"});
  }
  std::vector<HostAddressSpace::Piece> pieces;
  std::vector<uint32_t> words;
  for (const abi::channel::GpfifoEntry& e : entries) {
    const uint64_t va = sim::pb::EntryVa(e.entry0, e.entry1);
    const uint64_t n = sim::pb::EntryLength(e.entry1);
    if (n == 0) {
      if (auto r = check.Segment({})) return ErrorOfRefusal(*r);
      continue;
    }
    if (space == nullptr) return Unmapped(va, "a pushbuffer fetch with no address space bound");
    if (!space->Resolve(va, n * 4, &pieces)) {
      uint64_t at = va;
      for (const HostAddressSpace::Piece& p : pieces) at += p.size;
      return Unmapped(at, fmt::format("pushbuffer fetch at 0x{:X}: unmapped", at));
    }
    words.resize(n);
    uint8_t* out = reinterpret_cast<uint8_t*>(words.data());
    for (const HostAddressSpace::Piece& p : pieces) {
      if (absl::Status s = twins.ReadAgreed(*p.object, p.offset, {out, p.size}); !s.ok()) {
        // A mapping always has a twin that was filled when it was made: not expected.
        NVS_LOG_LIMITED(spdlog::level::warn,
                        "host backend: pushbuffer at 0x{:X}: its object's host copy: {}", va,
                        s.ToString());
        return Unmapped(va, "pushbuffer fetch: the object's host copy is unknown");
      }
      out += p.size;
    }
    if (auto r = check.Segment(words)) return ErrorOfRefusal(*r);
  }
  return std::nullopt;
}

}  // namespace nvsentry::hostshim::host
