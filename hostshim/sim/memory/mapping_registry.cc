#include "hostshim/sim/memory/mapping_registry.h"

namespace nvsentry::hostshim::sim {

void MappingRegistry::Add(std::weak_ptr<MappingOwner> owner, const MappingOwner* raw, uint64_t va) {
  Owned& o = owners_[raw];
  if (o.owner.expired()) o.owner = std::move(owner);
  o.vas.insert(va);
  ++size_;
}

void MappingRegistry::Remove(const MappingOwner* raw, uint64_t va) {
  auto it = owners_.find(raw);
  if (it == owners_.end()) return;
  auto v = it->second.vas.find(va);
  if (v == it->second.vas.end()) return;
  it->second.vas.erase(v);
  --size_;
  if (it->second.vas.empty()) owners_.erase(it);
}

void MappingRegistry::RemoveOwner(const MappingOwner* raw) {
  auto it = owners_.find(raw);
  if (it == owners_.end()) return;
  size_ -= it->second.vas.size();
  owners_.erase(it);
}

void MappingRegistry::ForEach(
    const std::function<void(const std::weak_ptr<MappingOwner>&, uint64_t)>& f) const {
  for (const auto& [raw, o] : owners_)
    for (uint64_t va : o.vas) f(o.owner, va);
}

}  // namespace nvsentry::hostshim::sim
