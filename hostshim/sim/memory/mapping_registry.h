// The GPU mappings that pin one nvmap object, as records (owner, va), so that freeing the object
// can force each out (MappingOwner::ForceUnmap). One object may be mapped hundreds of thousands
// of times (as many as the guest's mappings budget allows), so adding or removing one record is
// logarithmic in the owner's records, and dropping every record of an owner (an address space
// that dies) is linear in its records and never searches: nothing here scans.
//
// Not thread-safe: the object's lock guards it. Owners are identified by address (an owner that
// calls Remove from its destructor can no longer be locked); a record is kept per (owner, va)
// with multiplicity, since an owner may probe a VA it already holds (AddressSpace::ForceUnmap).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "absl/container/btree_set.h"
#include "absl/container/flat_hash_map.h"
#include "hostshim/sim/memory/counted_less.h"

namespace nvsentry::hostshim::sim {

class MappingOwner;

class MappingRegistry {
 public:
  void Add(std::weak_ptr<MappingOwner> owner, const MappingOwner* raw, uint64_t va);
  // Drops one record of (raw, va); unknown ones are ignored.
  void Remove(const MappingOwner* raw, uint64_t va);
  // Drops every record of `raw`.
  void RemoveOwner(const MappingOwner* raw);
  // Calls f(owner, va) for every record, owner by owner.
  void ForEach(const std::function<void(const std::weak_ptr<MappingOwner>&, uint64_t)>& f) const;
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

 private:
  struct Owned {
    std::weak_ptr<MappingOwner> owner;
    absl::btree_multiset<uint64_t, CountedLess> vas;
  };
  absl::flat_hash_map<const MappingOwner*, Owned> owners_;
  size_t size_ = 0;
};

}  // namespace nvsentry::hostshim::sim
