// The fake Jetson's own memory behind its nvmap objects: ALLOC maps anonymous memory in the fake's
// process and backs the sim's object with it (the object's pid is the fake's own), so the
// simulated GPU reads and writes it as it does a guest's, and nvmap READ/WRITE copy between it
// and the caller directly. A region is unmapped when the sim has released the object's memory
// and no copy still uses it.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"

namespace nvsentry::hostshim::fake_l4t {

class Region {
 public:
  // Anonymous, private, zero-filled; null when the kernel refuses the mapping.
  static std::shared_ptr<Region> Map(uint64_t size);
  ~Region();
  Region(const Region&) = delete;
  Region& operator=(const Region&) = delete;
  std::span<uint8_t> bytes() const { return {base_, size_}; }
  uint64_t address() const { return reinterpret_cast<uintptr_t>(base_); }

 private:
  Region(uint8_t* base, uint64_t size) : base_(base), size_(size) {}
  uint8_t* const base_;
  const uint64_t size_;
};

// Object id -> its region.
class NvmapMemory {
 public:
  void Add(uint32_t id, std::shared_ptr<Region> region);
  std::shared_ptr<Region> Find(uint32_t id) const;
  void Remove(uint32_t id);
  size_t count() const;
  uint64_t bytes() const;

 private:
  mutable absl::Mutex mu_;
  absl::flat_hash_map<uint32_t, std::shared_ptr<Region>> regions_ ABSL_GUARDED_BY(mu_);
};

}  // namespace nvsentry::hostshim::fake_l4t
