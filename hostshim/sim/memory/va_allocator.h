// A GPU virtual address range allocator: hands out and takes back page-granular ranges of one
// region of an address space (the small-page or the big-page region). Free space is kept twice,
// ordered by address (fixed placement, coalescing on free) and by size (best fit), so every
// operation is logarithmic in the number of free ranges; nothing walks the allocations.
//
// It knows free space only: the caller remembers what it allocated (and how big), and gives back
// exactly that. Not thread-safe: the address space's lock guards it.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>

#include "absl/container/btree_map.h"
#include "absl/container/btree_set.h"

namespace nvsentry::hostshim::sim {

class VaAllocator {
 public:
  // Manages [start, end); both and every size and alignment below are multiples of `granule`
  // (a power of two). An empty range (start == end) is valid and never allocates.
  VaAllocator(uint64_t start, uint64_t end, uint64_t granule);

  uint64_t start() const { return start_; }
  uint64_t end() const { return end_; }
  uint64_t granule() const { return granule_; }

  // A free range of `size` bytes whose start is a multiple of `align` (a power of two; below
  // the granule means the granule), or nullopt when none is left (or the arguments are not
  // granule multiples). Best fit: the smallest free range that holds it, lowest address first.
  std::optional<uint64_t> Allocate(uint64_t size, uint64_t align);
  // Takes exactly [va, va + size); false (and nothing taken) unless all of it is free.
  bool AllocateFixed(uint64_t va, uint64_t size);
  // Gives [va, va + size) back; false (and nothing changed) when any of it is already free or
  // outside the region, so a double free cannot corrupt the lists.
  bool Free(uint64_t va, uint64_t size);

  // True when [va, va + size) lies inside the region.
  bool Contains(uint64_t va, uint64_t size) const;
  // True when all of [va, va + size) is free.
  bool IsFree(uint64_t va, uint64_t size) const;

  uint64_t free_bytes() const { return free_bytes_; }
  size_t free_ranges() const { return by_addr_.size(); }

 private:
  bool Aligned(uint64_t v) const { return (v & (granule_ - 1)) == 0; }
  void Insert(uint64_t start, uint64_t end);
  void Erase(absl::btree_map<uint64_t, uint64_t>::iterator it);
  // Takes [va, va + size) out of the free range `it` (which holds it), keeping the rest free.
  void Carve(absl::btree_map<uint64_t, uint64_t>::iterator it, uint64_t va, uint64_t size);

  const uint64_t start_, end_, granule_;
  absl::btree_map<uint64_t, uint64_t> by_addr_;             // free start -> end
  absl::btree_set<std::pair<uint64_t, uint64_t>> by_size_;  // (size, start)
  uint64_t free_bytes_ = 0;
};

}  // namespace nvsentry::hostshim::sim
