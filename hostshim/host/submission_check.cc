#include "hostshim/host/submission_check.h"

#include <vector>

#include "abi/gpu_classes.h"
#include "hostshim/rate_limited_log.h"
#include "hostshim/sim/engines/pushbuffer.h"

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

std::optional<std::vector<WriteTarget>> GpuWriteTargets(const HostAddressSpace* space,
                                                        const StreamFootprint& f) {
  std::vector<WriteTarget> targets;
  if (space == nullptr || f.empty()) return targets;
  std::vector<HostAddressSpace::Piece> pieces;
  constexpr size_t kLimit = GpuWrites::kMaxTargets;
  if (f.anywhere) {
    if (!space->AllPieces(kLimit, &pieces)) return std::nullopt;
  } else {
    for (const StreamFootprint::Range& r : f.ranges)
      if (!space->MappedPieces(r.va, r.size, kLimit, &pieces)) return std::nullopt;
  }
  targets.reserve(pieces.size());
  for (HostAddressSpace::Piece& p : pieces) targets.push_back({p.object, p.offset, p.size});
  return targets;
}

std::optional<std::vector<WriteTarget>> GpuReadTargets(const HostAddressSpace* space,
                                                       const StreamFootprint& f) {
  if (f.anywhere) return std::nullopt;
  std::vector<WriteTarget> targets;
  if (space == nullptr) return targets;
  std::vector<HostAddressSpace::Piece> pieces;
  constexpr size_t kLimit = GpuWrites::kMaxTargets;
  for (const auto* list : {&f.reads, &f.ranges})
    for (const StreamFootprint::Range& r : *list)
      if (!space->MappedPieces(r.va, r.size, kLimit, &pieces)) return std::nullopt;
  targets.reserve(pieces.size());
  for (HostAddressSpace::Piece& p : pieces) targets.push_back({p.object, p.offset, p.size});
  return targets;
}

std::optional<std::vector<WriteTarget>> FetchTargets(
    const HostAddressSpace* space, std::span<const abi::channel::GpfifoEntry> entries) {
  std::vector<WriteTarget> targets;
  if (space == nullptr) return targets;
  std::vector<HostAddressSpace::Piece> pieces;
  for (const abi::channel::GpfifoEntry& e : entries) {
    const uint64_t n = sim::pb::EntryLength(e.entry1);
    if (n == 0) continue;
    if (!space->MappedPieces(sim::pb::EntryVa(e.entry0, e.entry1), n * 4, GpuWrites::kMaxTargets,
                             &pieces))
      return std::nullopt;
  }
  targets.reserve(pieces.size());
  for (HostAddressSpace::Piece& p : pieces) targets.push_back({p.object, p.offset, p.size});
  return targets;
}

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

SubmissionVerdict CheckSubmission(const HostAddressSpace* space, Twins& twins,
                                  std::span<const abi::channel::GpfifoEntry> entries,
                                  StreamCheck& check, std::vector<uint32_t>* checked_words) {
  check.BeginSubmission();
  // The budget first, from the lengths alone: nothing is read for a submission past it.
  uint64_t total = 0;
  for (const abi::channel::GpfifoEntry& e : entries) total += sim::pb::EntryLength(e.entry1);
  if (total > StreamCheck::kMaxWords) {
    return {
        ErrorOfRefusal({0, 0, 0, "a submission of more pushbuffer words than the sentry checks"})};
  }
  // Where each entry lies, up to the first entry that cannot be fetched, which faults once the
  // entries before it are checked, as the simulator would reach it.
  std::vector<HostAddressSpace::Piece> pieces, entry_pieces;
  std::vector<size_t> first_piece;  // of each entry in `pieces`, and one past the last
  std::optional<sim::ChannelError> fault;
  for (const abi::channel::GpfifoEntry& e : entries) {
    first_piece.push_back(pieces.size());
    const uint64_t va = sim::pb::EntryVa(e.entry0, e.entry1);
    const uint64_t n = sim::pb::EntryLength(e.entry1);
    if (n == 0) continue;
    if (space == nullptr) {
      fault = Unmapped(va, "a pushbuffer fetch with no address space bound");
      break;
    }
    if (!space->Resolve(va, n * 4, &entry_pieces)) {
      uint64_t at = va;
      for (const HostAddressSpace::Piece& p : entry_pieces) at += p.size;
      fault = Unmapped(at, fmt::format("pushbuffer fetch at 0x{:X}: unmapped", at));
      break;
    }
    pieces.insert(pieces.end(), entry_pieces.begin(), entry_pieces.end());
  }
  // The entries before the fault, if any, as the host would run them.
  const size_t checked = first_piece.size() - (fault ? 1 : 0);
  first_piece.push_back(pieces.size());
  std::vector<uint32_t> words;
  for (size_t i = 0; i < checked; ++i) {
    const abi::channel::GpfifoEntry& e = entries[i];
    const uint64_t n = sim::pb::EntryLength(e.entry1);
    if (n == 0) {
      if (auto r = check.Segment({})) return {ErrorOfRefusal(*r)};
      continue;
    }
    words.resize(n);
    uint8_t* out = reinterpret_cast<uint8_t*>(words.data());
    for (size_t k = first_piece[i]; k < first_piece[i + 1]; ++k) {
      const HostAddressSpace::Piece& p = pieces[k];
      if (absl::Status s = twins.ReadAgreed(*p.object, p.offset, {out, p.size}); !s.ok()) {
        // A mapping always has a twin that was filled when it was made: not expected.
        NVS_LOG_LIMITED(spdlog::level::warn,
                        "host backend: pushbuffer at 0x{:X}: its object's host copy: {}",
                        sim::pb::EntryVa(e.entry0, e.entry1), s.ToString());
        return {Unmapped(sim::pb::EntryVa(e.entry0, e.entry1),
                         "pushbuffer fetch: the object's host copy is unknown")};
      }
      out += p.size;
    }
    if (auto r = check.Segment(words)) return {ErrorOfRefusal(*r)};
    if (checked_words != nullptr)
      checked_words->insert(checked_words->end(), words.begin(), words.end());
  }
  if (fault) return {std::move(fault)};
  return {};
}

}  // namespace nvsentry::hostshim::host
