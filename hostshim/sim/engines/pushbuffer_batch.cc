#include "hostshim/sim/engines/pushbuffer_batch.h"

#include <algorithm>

#include "hostshim/sim/engines/pushbuffer.h"

namespace nvsentry::hostshim::sim {

void PushbufferBatch::Fill(GpuMemory* memory, uint64_t tag,
                           std::span<const abi::channel::GpfifoEntry> entries) {
  Clear();
  tag_ = tag;
  uint64_t total = 0;
  for (const auto& e : entries) {
    if (slots_.size() == kMaxEntries) break;
    const uint32_t words = pb::EntryLength(e.entry1);
    const uint64_t bytes = uint64_t{words} * 4;
    if (words == 0 || bytes > kMaxBytes) {
      // The command processor refuses an empty entry before reading anything, and fetches a
      // long one in chunks: either alone, without words.
      if (slots_.empty()) slots_.push_back({e, 0, words, false});
      break;
    }
    if (total + bytes > kMaxBytes) break;
    total += bytes;
    slots_.push_back({e, 0, words, true});
  }
  if (slots_.empty() || !slots_[0].fetched) return;

  // The ranges to read: segments by address, merged where they overlap or nearly touch.
  auto va_of = [&](size_t i) {
    return pb::EntryVa(slots_[i].entry.entry0, slots_[i].entry.entry1);
  };
  order_.resize(slots_.size());
  for (size_t i = 0; i < order_.size(); ++i) order_[i] = i;
  std::stable_sort(order_.begin(), order_.end(),
                   [&](size_t a, size_t b) { return va_of(a) < va_of(b); });
  ranges_.clear();
  uint64_t gaps = 0;
  for (size_t i : order_) {
    const uint64_t va = va_of(i);
    const uint64_t end = va + uint64_t{slots_[i].words} * 4;
    const uint64_t gap = ranges_.empty() || va <= ranges_.back().end ? 0 : va - ranges_.back().end;
    if (ranges_.empty() || gap > kMaxGap || gaps + gap > kMaxBytes) {
      const size_t at = ranges_.empty() ? 0 : ranges_.back().at + ranges_.back().words();
      ranges_.push_back({va, end, at});
    } else {
      gaps += gap;
      ranges_.back().end = std::max(ranges_.back().end, end);
    }
    slots_[i].offset = ranges_.back().at + (va - ranges_.back().start) / 4;
  }
  // VAs are word aligned (the entry format has no low bits), so every range is whole words.
  buf_.resize(ranges_.back().at + ranges_.back().words());
  reads_.clear();
  for (const Range& r : ranges_) {
    reads_.push_back({r.start, {reinterpret_cast<uint8_t*>(buf_.data() + r.at), r.end - r.start}});
  }
  if (!memory->ReadMany(reads_)) {
    for (Slot& s : slots_) s.fetched = false;
  }
}

bool PushbufferBatch::Next(uint64_t tag, const abi::channel::GpfifoEntry& entry,
                           std::span<const uint32_t>* words) {
  if (next_ == slots_.size() || tag != tag_ || slots_[next_].entry.entry0 != entry.entry0 ||
      slots_[next_].entry.entry1 != entry.entry1) {
    Clear();
    return false;
  }
  const Slot& s = slots_[next_++];
  *words = s.fetched ? std::span<const uint32_t>(buf_.data() + s.offset, s.words)
                     : std::span<const uint32_t>();
  return true;
}

void PushbufferBatch::Clear() {
  slots_.clear();
  next_ = 0;
}

}  // namespace nvsentry::hostshim::sim
