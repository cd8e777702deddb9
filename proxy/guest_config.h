// What the sandbox knows about the guest as a client of the driver: its policy (service identity
// and firmware, which decide the permission mask and which ioctl codes apply, devices, ioctl
// rules, budgets, what a violation does) and where its traffic is traced. One per sentry; fixed
// before the guest starts (ApplyPolicy), except for the counters it points to (budgets, the
// violation log, the learner), which are thread-safe.
// The scalar fields below are the policy's, copied out for the hot paths.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "abi/catalogue.h"
#include "abi/firmware.h"
#include "abi/permissions.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"
#include "policy/policy.h"
#include "proxy/call_observer.h"
#include "proxy/budget.h"

namespace nvsentry::proxy {

class Tracer;
class Learner;

// Which (ioctl, rule) violations were already logged at warn (each is logged once), and how many
// violations there were in all.
class ViolationLog {
 public:
  // True the first time `key` is seen.
  bool First(std::string key) {
    absl::MutexLock l(&mu_);
    ++count_;
    return seen_.insert(std::move(key)).second;
  }
  uint64_t count() const {
    absl::MutexLock l(&mu_);
    return count_;
  }

 private:
  mutable absl::Mutex mu_;
  absl::flat_hash_set<std::string> seen_ ABSL_GUARDED_BY(mu_);
  uint64_t count_ ABSL_GUARDED_BY(mu_) = 0;
};

struct GuestConfig {
  policy::Policy policy = policy::DefaultPolicy();
  std::string service = "nvdrv";
  abi::Firmware firmware = abi::kLatestFirmware;
  uint32_t permission_mask = 0;  // NvDrvPermission bits
  abi::Permissions permissions() const { return abi::Permissions(permission_mask); }
  bool debug_mode = false;
  // What watches the calls (proxy/call_observer.h): the tracer and the learner when there are.
  std::shared_ptr<ObserverSet> observers = std::make_shared<ObserverSet>();
  Tracer* tracer = nullptr;  // opens, closes and service notes; null: no tracing
  // Lowered limits for variable-length arrays: for an ioctl listed here, one maximum count per
  // entry of its `arrays` (the catalogue's max_count for the others). Limits only ever tighten
  // what the catalogue allows; a count above one is a policy violation (proxy/enforce.h).
  absl::flat_hash_map<const abi::IoctlDesc*, std::vector<uint32_t>> array_limits;
  // The live budgets (hostshim/budget.h).
  std::shared_ptr<BudgetAccount> budget = std::make_shared<BudgetAccount>(policy::Budgets{});
  std::shared_ptr<ViolationLog> violations = std::make_shared<ViolationLog>();
  // Kills the whole guest (policy action "kill"); set by the launcher. Without it a "kill"
  // violation is refused like "errno".
  std::function<void()> kill_guest;
  // --learn: records the opens, nvdrv Initialize sizes and bound classes (not owned; null when
  // not learning); its calls come through `observers`.
  Learner* learner = nullptr;
  // The driver's state for DumpStatus (objects, pins, budgets in use); set by the sentry.
  std::function<std::string()> driver_status;
};

// Makes `c` enforce `p`: the policy, the scalars copied from it, the array limits of its ioctl
// rules, fresh budgets and violation log. Keeps the tracer, kill hook and learner.
void ApplyPolicy(GuestConfig& c, policy::Policy p);

}  // namespace nvsentry::proxy
