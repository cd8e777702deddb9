// What the sandbox knows about the guest as a client of the driver, in two parts, each with one
// owner:
// - GuestPolicy: the immutable view of its policy (service identity and firmware, which decide
//   the permission mask and which ioctl codes apply; devices; ioctl rules with their array limits;
//   budget sizes; what a violation does). Made once from a policy::Policy; never changes.
// - GuestServices: what watches and accounts the running guest (the observers with the tracer
//   and the learner, the live budgets, the violation log, the kill hook). Made by the launcher (or
//   a test) before the guest starts; the sentry and the sessions use them and never replace them.
//   Every one of them is thread-safe.
// One GuestConfig per sentry, shared by the launcher and the sentry (it outlives every session).
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
#include "proxy/budget.h"
#include "proxy/call_observer.h"

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

class GuestPolicy {
 public:
  explicit GuestPolicy(policy::Policy p = policy::DefaultPolicy());

  // The whole policy (devices, ioctl rules, budgets, action), as loaded.
  const policy::Policy& rules() const { return policy_; }
  const std::string& service() const { return policy_.service; }
  abi::Firmware firmware() const { return policy_.firmware; }
  uint32_t permission_mask() const { return policy_.permission_mask; }  // NvDrvPermission bits
  abi::Permissions permissions() const { return abi::Permissions(policy_.permission_mask); }
  bool debug_mode() const { return policy_.debug_mode; }
  // The policy's lowered limits for `desc`'s variable-length arrays (one per entry of its
  // `arrays`), or null when its rule lowers none. Limits only ever tighten what the catalogue
  // allows; a count above one is a policy violation (proxy/enforce.h).
  const std::vector<uint32_t>* ArrayLimits(const abi::IoctlDesc& desc) const {
    auto it = array_limits_.find(&desc);
    return it == array_limits_.end() ? nullptr : &it->second;
  }
  bool LowersArrayLimits() const { return !array_limits_.empty(); }

 private:
  policy::Policy policy_;
  absl::flat_hash_map<const abi::IoctlDesc*, std::vector<uint32_t>> array_limits_;
};

struct GuestServices {
  // What watches the calls (proxy/call_observer.h): the tracer and the learner when there are.
  std::shared_ptr<ObserverSet> observers = std::make_shared<ObserverSet>();
  std::shared_ptr<Tracer> tracer;  // opens, closes and service notes; null: no tracing
  std::shared_ptr<Learner>
      learner;  // --learn: opens, Initialize sizes, classes; null: not learning
  std::shared_ptr<BudgetAccount> budget;  // the live budgets, sized by the policy
  std::shared_ptr<ViolationLog> violations = std::make_shared<ViolationLog>();
  // Kills the whole guest (policy action "kill"); set by the launcher before the guest starts.
  // Without it a "kill" violation is refused like "errno".
  std::function<void()> kill_guest;
};

struct GuestConfig {
  // `p`'s view, with fresh budgets of its sizes, a fresh violation log and no observers.
  explicit GuestConfig(policy::Policy p = policy::DefaultPolicy());

  const GuestPolicy policy;
  GuestServices services;

  // Adds the tracer or the learner to the services and to the observers.
  void Trace(std::shared_ptr<Tracer> tracer);
  void Learn(std::shared_ptr<Learner> learner);
};

}  // namespace nvsentry::proxy
