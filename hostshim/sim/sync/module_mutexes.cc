#include "hostshim/sim/sync/module_mutexes.h"

namespace nvsentry::hostshim::sim {

using abi::NvError;

NvError ModuleMutexes::Request(const void* owner, uint32_t id, uint32_t lock) {
  if (id >= kCount || lock > 1) return NvError::kBadParameter;
  if (id == 0) return NvError::kSuccess;  // the power reference: shared, nothing to exclude
  absl::MutexLock l(&mu_);
  const void*& h = holder_[id];
  if (lock == 1) {
    if (h != nullptr && h != owner) return NvError::kBusy;
    h = owner;
  } else if (h == owner) {
    h = nullptr;
  }
  return NvError::kSuccess;
}

void ModuleMutexes::ReleaseAll(const void* owner) {
  absl::MutexLock l(&mu_);
  for (const void*& h : holder_)
    if (h == owner) h = nullptr;
}

const void* ModuleMutexes::holder(uint32_t id) const {
  absl::MutexLock l(&mu_);
  return id < kCount ? holder_[id] : nullptr;
}

}  // namespace nvsentry::hostshim::sim
