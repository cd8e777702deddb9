// What r32.7.4 keeps per address space that the sim's AddressSpace keeps in another form: the
// mappings with their reference counts (a second MAP_BUFFER_EX of the same buffer with the same
// key kind and flags answers the first one's VA and takes a reference: L4T-AS-13; UNMAP_BUFFER
// drops one and unmaps with the last, and answers 0 for a VA that starts no mapping: L4T-AS-15)
// and the reservations (FREE_SPACE frees the one holding `offset`, whatever `pages` say, and
// answers 0 when none does: L4T-AS-5). docs/host-abi.md, Rules. Pure bookkeeping, no I/O; the
// caller serialises calls.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/container/btree_map.h"

namespace nvsentry::hostshim::fake_l4t {

// What makes two maps the same mapping (nvgpu_vm_find_mapping): the buffer, the key kind
// (compr_kind when set, else incompr_kind), the flags that reach the mapping, and for a fixed
// mapping its VA (0 for an anywhere one).
struct MapKey {
  uint32_t handle = 0;
  int32_t kind = -1;
  uint32_t flags = 0;
  uint64_t fixed_va = 0;
  bool operator==(const MapKey&) const = default;
};

// The MAP_BUFFER_EX flag bits nvgpu carries into a mapping (os/linux/vm.c
// nvgpu_vm_translate_linux_flags): fixed offset, cacheable, I/O coherent, unmapped PTE, L3
// allocation, direct kind control, platform atomics. Other bits make no difference.
inline constexpr uint32_t kMappingFlags =
    (1u << 0) | (1u << 2) | (1u << 4) | (1u << 5) | (1u << 7) | (1u << 8) | (1u << 9);

struct Reservation {
  uint64_t offset = 0;
  uint32_t pages = 0;
  uint32_t page_size = 0;
  uint64_t end() const { return offset + uint64_t{pages} * page_size; }
};

class AsRecords {
 public:
  // A map like an existing one: that mapping's VA, with one more reference.
  std::optional<uint64_t> Reuse(const MapKey& key);
  // A new mapping at `va`, with one reference.
  void AddMapping(const MapKey& key, uint64_t va);

  enum class Drop { kNone, kReferenced, kLast };
  // UNMAP_BUFFER of `va`: no mapping starts there, one reference dropped with others left, or
  // the last one dropped (the record is gone: unmap it).
  Drop DropMapping(uint64_t va);

  void AddReservation(const Reservation& r);
  // FREE_SPACE of `offset`: the reservation holding it, removed with the mappings inside it (the
  // sim's FREE_SPACE unmaps those), or none.
  std::optional<Reservation> TakeReservation(uint64_t offset);

  // The object `handle` is gone, and the sim unmapped it everywhere: its mappings' records go
  // (the sim may hand its id to a new object, which must not find them).
  void ForgetHandle(uint32_t handle);

  size_t mapping_count() const { return mappings_.size(); }

 private:
  struct Mapping {
    MapKey key;
    uint32_t refs = 0;
  };
  absl::btree_map<uint64_t, Mapping> mappings_;          // by VA
  absl::btree_map<uint64_t, Reservation> reservations_;  // by offset
};

}  // namespace nvsentry::hostshim::fake_l4t
