// --learn: what the guest did, recorded while it runs in audit mode, and the smallest policy that
// allows exactly that. Thread-safe; one per sentry.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "abi/array_layout.h"
#include "abi/catalogue.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"
#include "policy/policy.h"

namespace nvsentry::proxy {

class Learner {
 public:
  // A device session was made (a Linux open or an nvdrv Open).
  void Opened(const abi::DeviceDesc& dev);
  // The guest called `desc` (any outcome: the learned policy must give it the same answer).
  void Called(const abi::IoctlDesc& desc);
  // A call of `desc` passed the catalogue's array checks with these counts.
  void Arrays(const abi::IoctlDesc& desc, std::span<const abi::ArraySlice> slices);
  // The /dev/nvdrv Initialize size the transfer-memory budget was asked to cover.
  void Initialized(uint64_t size);

  // The smallest policy that allows what was recorded, for a guest that ran under `ran` (with
  // the most device fds open at once `peak_fds`): [guest] as run; every device of the firmware
  // that was not opened has backend "deny"; an opened device denies its ioctls by default and
  // allows those called, with array limits of twice the largest count seen (at least 1, at most
  // the catalogue's); budgets of twice the peaks seen (at most what `ran` allowed); action errno.
  policy::Policy Learned(const policy::Policy& ran, uint64_t peak_fds) const;

 private:
  mutable absl::Mutex mu_;
  absl::flat_hash_set<abi::DeviceId> opened_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<const abi::IoctlDesc*, std::vector<uint64_t>> called_ ABSL_GUARDED_BY(mu_);
  uint64_t max_initialize_ ABSL_GUARDED_BY(mu_) = 0;
};

// Headroom for a learned limit: twice what was seen, at least `floor`, at most `cap`.
uint64_t WithHeadroom(uint64_t seen, uint64_t floor, uint64_t cap);

}  // namespace nvsentry::proxy
