// The guest's budgets (abi::Budgets) as live counters: what it holds now, the most it held at
// once, and refusal when a charge would pass the limit. Thread-safe; one per sentry, shared by
// every session and by the simulated GPU, which charge here when they make what a budget counts:
// open_fds (every fd the sentry holds for the guest: device sessions and nvdrv fds,
// proxy/session.cc; event fds, events.h; nvmap clients' pidfds), nvmap_objects (nvmap CREATE),
// pinned_bytes (guest memory behind ALLOC with an address), transfer_memory (sentry memory behind
// ALLOC without one; the /dev/nvdrv Initialize size is capped by the same limit), channels and
// address_spaces (their device sessions), mappings (GPU VA entries: address_space.h),
// parked_waits (calls the sentry holds parked) and queued_bytes (the sentry's memory behind
// submitted work not yet done: sim/engines/channel_engine.h, sim/host1x/host1x_channel.h) and
// twin_bytes (the host backend's copies of touched guest GPU memory: host/twins.h).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string_view>

#include "abi/budgets.h"
#include "abi/nverror.h"
#include "absl/synchronization/mutex.h"

namespace nvsentry::hostshim {

enum class BudgetKind : uint8_t {
  kOpenFds,
  kNvmapObjects,
  kChannels,
  kAddressSpaces,
  kPinnedBytes,
  kTransferMemory,
  kMappings,
  kParkedWaits,
  kQueuedBytes,
  kTwinBytes,
};
inline constexpr size_t kBudgetKinds = 10;

// The policy file's name for the budget ("open_fds", ...).
std::string_view BudgetName(BudgetKind k);

class BudgetAccount {
 public:
  explicit BudgetAccount(const abi::Budgets& limits);

  // Takes `amount` from the budget; InsufficientMemory (Switchbrew's error for a driver that cannot
  // keep more; InsufficientTransferMemory for transfer_memory) when that would pass the limit,
  // and then nothing is taken.
  abi::NvError Charge(BudgetKind k, uint64_t amount = 1);
  // Gives back what a Charge took (never more than is held).
  void Release(BudgetKind k, uint64_t amount = 1);

  uint64_t limit(BudgetKind k) const { return limits_[static_cast<size_t>(k)]; }
  uint64_t used(BudgetKind k) const;
  // The most held at once since the start.
  uint64_t peak(BudgetKind k) const;
  // Charges refused since the start.
  uint64_t refused(BudgetKind k) const;

 private:
  const std::array<uint64_t, kBudgetKinds> limits_;
  mutable absl::Mutex mu_;
  std::array<uint64_t, kBudgetKinds> used_ ABSL_GUARDED_BY(mu_) = {};
  std::array<uint64_t, kBudgetKinds> peak_ ABSL_GUARDED_BY(mu_) = {};
  std::array<uint64_t, kBudgetKinds> refused_ ABSL_GUARDED_BY(mu_) = {};
};

// One charge, given back exactly once: by Release() (on any thread; later calls do nothing) or
// when the hold goes. A parked call holds its parked_waits charge this way from parking to its
// end, however it ends.
class BudgetHold {
 public:
  BudgetHold() = default;
  // Charges `account` (which may be null: nothing is charged); false, holding nothing, when the
  // budget is spent.
  bool Take(std::shared_ptr<BudgetAccount> account, BudgetKind kind, uint64_t amount = 1);
  void Release();
  bool held() const { return held_.load(std::memory_order_acquire); }
  ~BudgetHold() { Release(); }
  BudgetHold(const BudgetHold&) = delete;
  BudgetHold& operator=(const BudgetHold&) = delete;

 private:
  std::shared_ptr<BudgetAccount> account_;
  BudgetKind kind_ = BudgetKind::kParkedWaits;
  uint64_t amount_ = 0;
  std::atomic<bool> held_{false};
};

}  // namespace nvsentry::hostshim
