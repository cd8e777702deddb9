#include "proxy/learn.h"

#include <algorithm>

namespace nvsentry::proxy {

uint64_t WithHeadroom(uint64_t seen, uint64_t floor, uint64_t cap) {
  uint64_t v = seen > UINT64_MAX / 2 ? UINT64_MAX : seen * 2;
  return std::min(std::max(v, floor), cap);
}

void Learner::Opened(const abi::DeviceDesc& dev) {
  absl::MutexLock l(&mu_);
  opened_.insert(dev.id);
}

void Learner::Called(const abi::IoctlDesc& desc) {
  absl::MutexLock l(&mu_);
  auto& counts = called_[&desc];
  counts.resize(desc.arrays.size(), 0);
}

void Learner::Arrays(const abi::IoctlDesc& desc, std::span<const abi::ArraySlice> slices) {
  absl::MutexLock l(&mu_);
  auto& counts = called_[&desc];
  counts.resize(desc.arrays.size(), 0);
  for (size_t i = 0; i < slices.size() && i < counts.size(); ++i)
    counts[i] = std::max(counts[i], slices[i].count);
}

void Learner::Initialized(uint64_t size) {
  absl::MutexLock l(&mu_);
  max_initialize_ = std::max(max_initialize_, size);
}

policy::Policy Learner::Learned(const policy::Policy& ran, uint64_t peak_fds) const {
  absl::MutexLock l(&mu_);
  policy::Policy p;
  p.source = "(learned)";
  p.service = ran.service;
  p.firmware = ran.firmware;
  p.permission_mask = ran.permission_mask;
  p.mask_explicit = ran.mask_explicit;
  p.aruid = ran.aruid;
  p.debug_mode = ran.debug_mode;
  p.production_mode = ran.production_mode;
  p.action = policy::Action::kErrno;
  p.budgets = ran.budgets;
  // Page-granular, like the Initialize sizes themselves.
  const uint64_t tm = WithHeadroom(max_initialize_, 0, ran.budgets.transfer_memory);
  p.budgets.transfer_memory = std::min<uint64_t>((tm + 0xFFF) & ~uint64_t{0xFFF}, ran.budgets.transfer_memory);
  p.budgets.open_fds =
      static_cast<uint32_t>(WithHeadroom(peak_fds, 1, ran.budgets.open_fds));
  for (const abi::DeviceDesc& dev : abi::Devices()) {
    if (!dev.fw.Contains(ran.firmware)) continue;
    policy::DeviceRule rule;
    if (!opened_.contains(dev.id)) {
      rule.backend = policy::Backend::kDeny;
      p.devices[dev.id] = rule;
      continue;
    }
    rule.backend = ran.Device(dev.id).backend;
    rule.ioctls = policy::Verdict::kDeny;
    p.devices[dev.id] = rule;
    for (const abi::IoctlDesc& desc : dev.ioctls) {
      auto it = called_.find(&desc);
      if (it == called_.end()) continue;
      policy::IoctlRule r;
      r.verdict = policy::Verdict::kAllow;
      for (size_t i = 0; i < desc.arrays.size(); ++i) {
        const uint64_t seen = i < it->second.size() ? it->second[i] : 0;
        r.array_limits.push_back(
            static_cast<uint32_t>(WithHeadroom(seen, 1, desc.arrays[i].max_count)));
      }
      p.ioctls[&desc] = std::move(r);
    }
  }
  return p;
}

}  // namespace nvsentry::proxy
