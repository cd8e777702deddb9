// --learn: what the guest did, recorded while it runs in audit mode, and the smallest policy that
// allows exactly that. Thread-safe; one per sentry.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "abi/array_layout.h"
#include "abi/catalogue.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"
#include "policy/policy.h"
#include "proxy/budget.h"
#include "proxy/call_observer.h"

namespace nvsentry::proxy {

class Learner final : public CallObserver {
 public:
  // As a CallObserver: what the guest called, and the arguments of the calls that passed the
  // catalogue's checks.
  void Called(const abi::IoctlDesc& desc) override;
  void Checked(const abi::IoctlDesc& desc, std::span<const uint8_t> fixed,
               std::span<const abi::ArraySlice> slices) override {
    if (!slices.empty()) Arrays(desc, slices);
    if (!fixed.empty()) Fields(desc, fixed);
  }

  // A device session was made (a Linux open or an nvdrv Open).
  void Opened(const abi::DeviceDesc& dev);
  // A call of `desc` passed the catalogue's array checks with these counts.
  void Arrays(const abi::IoctlDesc& desc, std::span<const abi::ArraySlice> slices);
  // The copied fixed part of a call of `desc`: the values of its learnable fields (see
  // LearnableFields) are recorded.
  void Fields(const abi::IoctlDesc& desc, std::span<const uint8_t> fixed);
  // The /dev/nvdrv Initialize size the transfer-memory budget was asked to cover.
  void Initialized(uint64_t size);
  // A GPU channel's command stream bound engine class `cls` with SET_OBJECT (the simulated GPU
  // reports each class once per channel, from its engine threads).
  void Bound(uint32_t cls);

  // The smallest policy that allows what was recorded, for a guest that ran under `ran` with the
  // budget peaks of `used`: [guest] as run; every device of the firmware that was not opened has
  // backend "deny"; an opened device denies its ioctls by default and allows those called, with
  // array limits of twice the largest count seen (at least 1, at most the catalogue's) and a
  // rule for each learnable field seen (twice its largest value, the bits it used, or the
  // values it took); budgets of twice the peaks seen (at most what `ran` allowed); when
  // /dev/nvhost-gpu was opened, [channels] classes = the classes its channels bound; action errno.
  policy::Policy Learned(const policy::Policy& ran, const BudgetAccount& used) const;

 private:
  struct Seen {
    uint64_t max = 0;
    uint64_t bits = 0;
    std::vector<uint64_t> values;  // distinct, up to kMaxOneOf (then the rule is dropped)
    bool too_many = false;
  };
  // Learned's parts: the rule for `desc`, called with these largest array counts, and the rules
  // of the devices (and their ioctls) of `ran`'s firmware, into `p`.
  policy::IoctlRule LearnedIoctl(const abi::IoctlDesc& desc,
                                 const std::vector<uint64_t>& counts) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void LearnDevices(const policy::Policy& ran, policy::Policy& p) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  mutable absl::Mutex mu_;
  absl::flat_hash_set<abi::DeviceId> opened_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<const abi::IoctlDesc*, std::vector<uint64_t>> called_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<const abi::Field*, Seen> fields_ ABSL_GUARDED_BY(mu_);
  uint64_t max_initialize_ ABSL_GUARDED_BY(mu_) = 0;
  absl::flat_hash_set<uint32_t> bound_ ABSL_GUARDED_BY(mu_);
};

// The fields --learn writes rules for: the argument limits a policy author cares about (the
// largest nvmap object, heap masks, the classes ALLOC_OBJ_CTX may create, GPFIFO sizes,
// reservation sizes). Data, by catalogue name.
enum class LearnAs : uint8_t { kMax, kBits, kOneOf };
struct LearnableField {
  std::string_view ioctl;
  std::string_view field;
  LearnAs how;
};
std::span<const LearnableField> LearnableFields();

// Headroom for a learned limit: twice what was seen, at least `floor`, at most `cap`.
uint64_t WithHeadroom(uint64_t seen, uint64_t floor, uint64_t cap);

}  // namespace nvsentry::proxy
