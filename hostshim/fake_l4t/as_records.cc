#include "hostshim/fake_l4t/as_records.h"

namespace nvsentry::hostshim::fake_l4t {

std::optional<uint64_t> AsRecords::Reuse(const MapKey& key) {
  for (auto& [va, m] : mappings_) {
    if (m.key == key) {
      ++m.refs;
      return va;
    }
  }
  return std::nullopt;
}

void AsRecords::AddMapping(const MapKey& key, uint64_t va) { mappings_[va] = {key, 1}; }

AsRecords::Drop AsRecords::DropMapping(uint64_t va) {
  auto it = mappings_.find(va);
  if (it == mappings_.end()) return Drop::kNone;
  if (--it->second.refs != 0) return Drop::kReferenced;
  mappings_.erase(it);
  return Drop::kLast;
}

void AsRecords::ForgetHandle(uint32_t handle) {
  absl::erase_if(mappings_, [handle](const auto& m) { return m.second.key.handle == handle; });
}

void AsRecords::AddReservation(const Reservation& r) { reservations_[r.offset] = r; }

std::optional<Reservation> AsRecords::TakeReservation(uint64_t offset) {
  auto it = reservations_.upper_bound(offset);
  if (it == reservations_.begin()) return std::nullopt;
  --it;
  if (offset >= it->second.end()) return std::nullopt;
  const Reservation r = it->second;
  reservations_.erase(it);
  mappings_.erase(mappings_.lower_bound(r.offset), mappings_.lower_bound(r.end()));
  return r;
}

}  // namespace nvsentry::hostshim::fake_l4t
