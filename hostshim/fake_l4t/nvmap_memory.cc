#include "hostshim/fake_l4t/nvmap_memory.h"

#include <sys/mman.h>

namespace nvsentry::hostshim::fake_l4t {

std::shared_ptr<Region> Region::Map(uint64_t size) {
  if (size == 0) return nullptr;
  // NORESERVE: an object costs what the GPU and the callers touch, not its size.
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                 -1, 0);
  if (p == MAP_FAILED) return nullptr;
  return std::shared_ptr<Region>(new Region(static_cast<uint8_t*>(p), size));
}

Region::~Region() { munmap(base_, size_); }

void NvmapMemory::Add(uint32_t id, std::shared_ptr<Region> region) {
  absl::MutexLock l(&mu_);
  regions_[id] = std::move(region);
}

std::shared_ptr<Region> NvmapMemory::Find(uint32_t id) const {
  absl::MutexLock l(&mu_);
  auto it = regions_.find(id);
  return it == regions_.end() ? nullptr : it->second;
}

void NvmapMemory::Remove(uint32_t id) {
  std::shared_ptr<Region> gone;  // unmapped outside the lock
  absl::MutexLock l(&mu_);
  auto it = regions_.find(id);
  if (it == regions_.end()) return;
  gone = std::move(it->second);
  regions_.erase(it);
}

size_t NvmapMemory::count() const {
  absl::MutexLock l(&mu_);
  return regions_.size();
}

uint64_t NvmapMemory::bytes() const {
  absl::MutexLock l(&mu_);
  uint64_t n = 0;
  for (const auto& [id, r] : regions_) n += r->bytes().size();
  return n;
}

}  // namespace nvsentry::hostshim::fake_l4t
