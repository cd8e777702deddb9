// Pushbuffer prefetch for consecutive GPFIFO entries. The segments of a run of entries are read
// with one GpuMemory::ReadMany: for guest memory one liveness check and one process_vm_readv for
// the lot, where fetching entry by entry pays that per entry. Segments that overlap, touch or lie
// within kMaxGap of each other are read as one range, so entries that share or continue a
// command buffer cost one piece. The words are then handed out in entry order.
//
// What it promises its owner (the channel engine):
// - each word handed out was read once, here; the command processor decodes and checks exactly
//   those words. A guest that changes its memory after the batch was read is seen as if it had
//   written before it submitted;
// - a batch whose read failed hands out no words for the entries it covered: they are fetched
//   one by one the usual way, so a fault is reported at the entry, address and kind it always
//   was, after the entries before it ran;
// - it never outlives what the owner tells it: the owner drops it (Clear) when an entry wrote GPU
//   memory (which a later segment may be), when an entry stopped (a wait lets the CPU write
//   meanwhile) and when it stops running the channel.
//
// Memory: at most kMaxBytes of segments and as much of gaps between them (the buffer's capacity
// stays for the next batch). Not thread-safe: the engine thread only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "abi/devices/channel.h"
#include "hostshim/sim/memory/gpu_memory.h"

namespace nvsentry::hostshim::sim {

class PushbufferBatch {
 public:
  static constexpr size_t kMaxEntries = 128;
  static constexpr uint64_t kMaxBytes = 64u << 10;  // segment bytes read in one batch
  // Segments at most this far apart are read as one range, the gaps read with them up to
  // kMaxBytes in all. Measured: a process_vm_readv segment costs about what reading a page does.
  // Below a page, so a gap lies on the pages its two neighbours touch (GPU pages are 4 KiB or
  // larger): it cannot make the read fail where the segments alone would not.
  static constexpr uint64_t kMaxGap = 2048;

  // Reads the segments of the longest prefix of `entries` within the limits; a first entry
  // beyond them (or of length 0) is covered alone, without words. `tag` names the run the
  // entries belong to (the engine's epoch): Next answers only for the same tag.
  void Fill(GpuMemory* memory, uint64_t tag, std::span<const abi::channel::GpfifoEntry> entries);
  // When `entry` is the next one the batch covers under `tag`: true, with *words its words, or
  // empty when it must be fetched the usual way. Otherwise false, and the batch is dropped.
  bool Next(uint64_t tag, const abi::channel::GpfifoEntry& entry, std::span<const uint32_t>* words);
  void Clear();
  // Entries covered and not yet handed out.
  size_t pending() const { return slots_.size() - next_; }

 private:
  struct Slot {
    abi::channel::GpfifoEntry entry;
    size_t offset;  // in words, into buf_
    uint32_t words;
    bool fetched;
  };
  std::vector<Slot> slots_;
  size_t next_ = 0;
  uint64_t tag_ = 0;
  std::vector<uint32_t> buf_;
  // Scratch for Fill: slots by VA, the merged ranges ([start, end) at word `at` of buf_), the
  // reads.
  struct Range {
    uint64_t start, end;
    size_t at;
    size_t words() const { return static_cast<size_t>((end - start) / 4); }
  };
  std::vector<size_t> order_;
  std::vector<Range> ranges_;
  std::vector<GpuRead> reads_;
};

}  // namespace nvsentry::hostshim::sim
