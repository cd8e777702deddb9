#include "hostshim/budget.h"

#include <algorithm>

namespace nvsentry::hostshim {

std::string_view BudgetName(BudgetKind k) {
  switch (k) {
    case BudgetKind::kOpenFds: return "open_fds";
    case BudgetKind::kNvmapObjects: return "nvmap_objects";
    case BudgetKind::kChannels: return "channels";
    case BudgetKind::kAddressSpaces: return "address_spaces";
    case BudgetKind::kPinnedBytes: return "pinned_bytes";
    case BudgetKind::kTransferMemory: return "transfer_memory";
    case BudgetKind::kMappings: return "mappings";
    case BudgetKind::kParkedWaits: return "parked_waits";
    case BudgetKind::kQueuedBytes: return "queued_bytes";
    case BudgetKind::kTwinBytes: return "twin_bytes";
  }
  return "?";
}

BudgetAccount::BudgetAccount(const abi::Budgets& b)
    : limits_{b.open_fds,        b.nvmap_objects, b.channels,     b.address_spaces, b.pinned_bytes,
              b.transfer_memory, b.mappings,      b.parked_waits, b.queued_bytes,   b.twin_bytes} {}

abi::NvError BudgetAccount::Charge(BudgetKind k, uint64_t amount) {
  const size_t i = static_cast<size_t>(k);
  absl::MutexLock l(&mu_);
  if (amount > limits_[i] || used_[i] > limits_[i] - amount) {
    ++refused_[i];
    return k == BudgetKind::kTransferMemory ? abi::NvError::kInsufficientTransferMemory
                                            : abi::NvError::kInsufficientMemory;
  }
  used_[i] += amount;
  peak_[i] = std::max(peak_[i], used_[i]);
  return abi::NvError::kSuccess;
}

void BudgetAccount::Release(BudgetKind k, uint64_t amount) {
  const size_t i = static_cast<size_t>(k);
  absl::MutexLock l(&mu_);
  used_[i] -= std::min(used_[i], amount);
}

uint64_t BudgetAccount::used(BudgetKind k) const {
  absl::MutexLock l(&mu_);
  return used_[static_cast<size_t>(k)];
}

uint64_t BudgetAccount::peak(BudgetKind k) const {
  absl::MutexLock l(&mu_);
  return peak_[static_cast<size_t>(k)];
}

uint64_t BudgetAccount::refused(BudgetKind k) const {
  absl::MutexLock l(&mu_);
  return refused_[static_cast<size_t>(k)];
}

bool BudgetHold::Take(std::shared_ptr<BudgetAccount> account, BudgetKind kind, uint64_t amount) {
  Release();
  if (account == nullptr) return true;
  if (account->Charge(kind, amount) != abi::NvError::kSuccess) return false;
  account_ = std::move(account);
  kind_ = kind;
  amount_ = amount;
  held_.store(true, std::memory_order_release);
  return true;
}

void BudgetHold::Release() {
  if (held_.exchange(false, std::memory_order_acq_rel)) account_->Release(kind_, amount_);
}

}  // namespace nvsentry::hostshim
