#include "hostshim/sim/memory/va_allocator.h"

#include <bit>

namespace nvsentry::hostshim::sim {

VaAllocator::VaAllocator(uint64_t start, uint64_t end, uint64_t granule)
    : start_(start), end_(end < start ? start : end), granule_(granule) {
  if (end_ > start_) Insert(start_, end_);
}

void VaAllocator::Insert(uint64_t start, uint64_t end) {
  by_addr_.emplace(start, end);
  by_size_.emplace(end - start, start);
  free_bytes_ += end - start;
}

void VaAllocator::Erase(absl::btree_map<uint64_t, uint64_t>::iterator it) {
  by_size_.erase({it->second - it->first, it->first});
  free_bytes_ -= it->second - it->first;
  by_addr_.erase(it);
}

void VaAllocator::Carve(absl::btree_map<uint64_t, uint64_t>::iterator it, uint64_t va,
                        uint64_t size) {
  const uint64_t s = it->first, e = it->second;
  Erase(it);
  if (s < va) Insert(s, va);
  if (va + size < e) Insert(va + size, e);
}

std::optional<uint64_t> VaAllocator::Allocate(uint64_t size, uint64_t align) {
  if (size == 0 || !Aligned(size) || !std::has_single_bit(align == 0 ? 1 : align)) {
    return std::nullopt;
  }
  if (align < granule_) align = granule_;
  auto fit = [&](uint64_t s, uint64_t e) -> std::optional<uint64_t> {
    uint64_t a = (s + align - 1) & ~(align - 1);
    if (a < s || a > e || e - a < size) return std::nullopt;
    return a;
  };
  // Best fit among the few smallest ranges that are big enough; alignment may disqualify
  // them, so after a bounded number of tries take the smallest range that fits whatever its
  // alignment (size + align - granule bytes always hold an aligned block).
  constexpr int kTries = 16;
  int tries = 0;
  for (auto it = by_size_.lower_bound({size, 0}); it != by_size_.end() && tries < kTries;
       ++it, ++tries) {
    if (auto a = fit(it->second, it->second + it->first)) {
      Carve(by_addr_.find(it->second), *a, size);
      return a;
    }
  }
  const uint64_t need = size + (align - granule_);
  if (need < size) return std::nullopt;  // overflow: nothing that big exists
  auto it = by_size_.lower_bound({need, 0});
  if (it == by_size_.end()) return std::nullopt;
  auto a = fit(it->second, it->second + it->first);
  if (!a) return std::nullopt;  // cannot happen (see above); refuse rather than corrupt
  Carve(by_addr_.find(it->second), *a, size);
  return a;
}

bool VaAllocator::AllocateFixed(uint64_t va, uint64_t size) {
  if (size == 0 || !Aligned(va) || !Aligned(size) || !Contains(va, size)) return false;
  auto it = by_addr_.upper_bound(va);
  if (it == by_addr_.begin()) return false;
  --it;
  if (it->first > va || it->second < va + size) return false;
  Carve(it, va, size);
  return true;
}

bool VaAllocator::Free(uint64_t va, uint64_t size) {
  if (size == 0 || !Aligned(va) || !Aligned(size) || !Contains(va, size)) return false;
  // btree erasure invalidates iterators: decide on both neighbours first, then erase by key.
  uint64_t s = va, e = va + size;
  auto next = by_addr_.upper_bound(va);
  if (next != by_addr_.end() && next->first < e) return false;
  bool merge_prev = false, merge_next = false;
  uint64_t prev_start = 0, next_start = 0, next_end = 0;
  if (next != by_addr_.begin()) {
    auto prev = std::prev(next);
    if (prev->second > va) return false;
    if (prev->second == va) {
      merge_prev = true;
      prev_start = prev->first;
    }
  }
  if (next != by_addr_.end() && next->first == e) {
    merge_next = true;
    next_start = next->first;
    next_end = next->second;
  }
  if (merge_prev) {
    Erase(by_addr_.find(prev_start));
    s = prev_start;
  }
  if (merge_next) {
    Erase(by_addr_.find(next_start));
    e = next_end;
  }
  Insert(s, e);
  return true;
}

bool VaAllocator::Contains(uint64_t va, uint64_t size) const {
  return va >= start_ && va <= end_ && size <= end_ - va;
}

bool VaAllocator::IsFree(uint64_t va, uint64_t size) const {
  if (!Contains(va, size) || size == 0) return false;
  auto it = by_addr_.upper_bound(va);
  if (it == by_addr_.begin()) return false;
  --it;
  return it->first <= va && it->second >= va + size;
}

}  // namespace nvsentry::hostshim::sim
