#include "proxy/guest_config.h"

#include "proxy/learn.h"
#include "proxy/trace.h"

namespace nvsentry::proxy {

GuestPolicy::GuestPolicy(policy::Policy p) : policy_(std::move(p)) {
  for (const auto* rules : {&policy_.ioctls, &policy_.followed})
    for (const auto& [desc, rule] : *rules)
      if (!rule.array_limits.empty()) array_limits_[desc] = rule.array_limits;
}

GuestConfig::GuestConfig(policy::Policy p) : policy(std::move(p)) {
  services.budget = std::make_shared<BudgetAccount>(policy.rules().budgets);
}

void GuestConfig::Trace(std::shared_ptr<Tracer> tracer) {
  services.observers->Add(tracer.get());
  services.tracer = std::move(tracer);
}

void GuestConfig::Learn(std::shared_ptr<Learner> learner) {
  services.observers->Add(learner.get());
  services.learner = std::move(learner);
}

}  // namespace nvsentry::proxy
