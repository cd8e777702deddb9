// The host1x module mutexes (MLOCKs) behind nvhost-ctrl's MODULE_MUTEX, GPU-wide: 16 locks that
// belong to whichever ctrl session took them, as NVIDIA's Linux nvhost driver keeps them. Lock
// 0 is the "keep the module powered" lock, which never excludes anyone. Taking a lock another
// session holds is Busy at once (a try-lock: a guest never blocks a sentry worker here); taking
// one again or releasing one not held changes nothing. A closing session releases its locks.
// Thread-safe; no method calls out.
#pragma once

#include <array>
#include <cstdint>

#include "abi/nverror.h"
#include "absl/synchronization/mutex.h"

namespace nvsentry::hostshim::sim {

class ModuleMutexes {
 public:
  static constexpr uint32_t kCount = 16;  // MLOCKs of the Tegra X1 host1x

  // MODULE_MUTEX(id, lock) on behalf of `owner` (a session's identity). BadParameter for
  // id >= 16 or lock > 1; Busy when another owner holds the lock.
  abi::NvError Request(const void* owner, uint32_t id, uint32_t lock);
  // Drops every lock `owner` holds.
  void ReleaseAll(const void* owner);
  // Who holds lock `id` (null when free); for tests.
  const void* holder(uint32_t id) const;

 private:
  mutable absl::Mutex mu_;
  std::array<const void*, kCount> holder_ ABSL_GUARDED_BY(mu_) = {};
};

}  // namespace nvsentry::hostshim::sim
