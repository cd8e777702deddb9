// One GPU address space (/dev/nvhost-as-gpu after ALLOC_AS(_EX)): a slice of the GM20B's 40-bit
// VA split into a small-page region (4 KiB pages) below `split` and a big-page region (64 or
// 128 KiB pages) above it; reservations made with ALLOC_SPACE (fixed or anywhere, sparse or
// not); mappings of nvmap objects (MAP_BUFFER*, anywhere or fixed inside a reservation) and page
// ranges of sparse reservations pointed at objects by REMAP. VA is handed out by ordered free
// lists (VaAllocator), lookups are btree searches: nothing scans the mappings. Unmapping one
// mapping is logarithmic in the space's mappings and in its object's records; the space's end
// is linear in its mappings and searches nothing (tests count comparisons: counted_less.h).
//
// Budget: every mapping (a MAP_BUFFER* mapping or a REMAP piece) and every reservation is one
// `mappings` charge while it exists; an operation takes what it may add before it changes
// anything (all or nothing: InsufficientMemory) and gives back what it did not use. Sentry
// memory per entry is bounded (about 100 bytes: docs/security.md), so the budget bounds it.
//
// Each mapping holds its object (a pin: the shared_ptr) and is registered with it
// (AddMapping) until it is unmapped, remapped, its reservation freed, the address space dies,
// or the object's last reference is freed (ForceUnmap, which does not call the object back).
//
// The channel's command processor translates through it (GpuMemory): an access no mapping
// covers is an MMU fault (kUnmapped); one whose object cannot be read or written is
// kMemoryGone. Pages of a sparse reservation that nothing maps read as zeros and drop writes,
// as the hardware's sparse PTEs do.
//
// Thread safety: every method may be called from any thread. Lock order: the address space's
// lock, then an NvmapObject's (AddMapping/RemoveMapping are called under ours, so nvmap must
// call ForceUnmap without holding an object lock). Read/Write hold the lock (shared) only for
// the lookup, never during the copy.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "abi/devices/nvhost_as_gpu.h"
#include "abi/nverror.h"
#include "absl/container/btree_map.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "hostshim/budget.h"
#include "hostshim/sim/memory/counted_less.h"
#include "hostshim/sim/memory/gpu_memory.h"
#include "hostshim/sim/memory/nvmap.h"
#include "hostshim/sim/memory/va_allocator.h"

namespace nvsentry::hostshim::sim {

inline constexpr uint32_t kSmallPageSize = 0x1000;
inline constexpr uint32_t kDefaultBigPageSize = 0x20000;  // 128 KiB; 64 KiB is the other choice
inline constexpr uint64_t kGpuVaEnd = uint64_t{1} << 40;  // GM20B: 40-bit GPU VA

// ALLOC_SPACE flags (client start-up sequence, step 3).
inline constexpr uint32_t kAllocSpaceFixed = 1u << 0;
inline constexpr uint32_t kAllocSpaceSparse = 1u << 1;
// MAP_BUFFER* flags (Switchbrew; modify from the client library).
inline constexpr uint32_t kMapFixed = 1u << 0;
inline constexpr uint32_t kMapCacheable = 1u << 2;
inline constexpr uint32_t kMapModify = 1u << 8;

// Where an address space's pages may go, after ALLOC_AS(_EX) and the permission window.
struct AsLayout {
  uint32_t big_page_size = kDefaultBigPageSize;
  uint64_t small_start = 0, small_end = 0;  // the small-page region [small_start, small_end)
  uint64_t big_start = 0, big_end = 0;      // the big-page region
  // Bytes of distinct nvmap objects the space may have mapped at once (permission bit 15's
  // device window); refused beyond with InsufficientMemory.
  uint64_t object_bytes_limit = ~uint64_t{0};
};

class AddressSpace : public GpuMemory,
                     public MappingOwner,
                     public std::enable_shared_from_this<AddressSpace> {
 public:
  // Mappings plus reservations one space may hold, whatever the budget. Beyond it:
  // InsufficientMemory.
  static constexpr size_t kMaxEntries = size_t{1} << 18;

  // `budget` (may be null) already holds this space's address_spaces charge; it is released
  // when the space dies, with the `mappings` charges of what it still holds. Regions must be
  // big-page aligned (the device checks).
  static std::shared_ptr<AddressSpace> Create(const AsLayout& layout, BudgetAccount* budget);
  ~AddressSpace() override;
  AddressSpace(const AddressSpace&) = delete;
  AddressSpace& operator=(const AddressSpace&) = delete;

  bool Read(uint64_t va, std::span<uint8_t> dst, MmuFault* fault) override;
  bool Write(uint64_t va, std::span<const uint8_t> src, MmuFault* fault) override;
  // Looks every piece up under one lock and reads the guest memory behind all of them with one
  // GuestReadBatch (one liveness check and one process_vm_readv per guest process).
  bool ReadMany(std::span<const GpuRead> reads) override;
  void ForceUnmap(uint64_t va) override;

  const AsLayout& layout() const { return layout_; }
  // GET_VA_REGIONS: the small-page region, then the big-page region (pages may be 0).
  std::array<abi::nvhost_as_gpu::VaRegion, 2> Regions() const;

  // ALLOC_SPACE: `offset_or_align` is the VA in (fixed) or the alignment in, and the VA out.
  abi::NvError AllocSpace(uint32_t pages, uint32_t page_size, uint32_t flags,
                          uint64_t* offset_or_align);
  // FREE_SPACE: the reservation starting at `offset` with exactly this size; its mappings go.
  abi::NvError FreeSpace(uint64_t offset, uint32_t pages, uint32_t page_size);

  struct MapArgs {
    std::shared_ptr<NvmapObject> object;
    uint32_t flags = 0;  // kMapFixed, kMapCacheable
    int32_t kind = -1;   // -1: the object's kind
    uint64_t buffer_offset = 0;
    uint64_t mapping_size = 0;  // 0: from buffer_offset to the end of the object
    uint64_t offset_or_align = 0;
  };
  // MAP_BUFFER(_EX, _EX2): the mapping's VA and kind out.
  abi::NvError Map(const MapArgs& args, uint64_t* va, int32_t* kind_out);
  // MAP_BUFFER_EX with kMapModify: changes the kind of [buffer_offset, +size) of the mapping
  // at `va` (size 0: to its end).
  abi::NvError Modify(uint64_t va, uint64_t buffer_offset, uint64_t size, int32_t kind,
                      int32_t* kind_out);
  // UNMAP_BUFFER: the MAP_BUFFER* mapping starting at `va`.
  abi::NvError Unmap(uint64_t va);

  struct RemapArgs {
    abi::nvhost_as_gpu::RemapOp op;
    std::shared_ptr<NvmapObject> object;  // op.mem_handle resolved; null for an unmap op
  };
  // REMAP: all ops are checked before any is applied (all or nothing). Page numbers are in
  // big pages, the page size of the sparse reservations REMAP works on.
  abi::NvError Remap(std::span<const RemapArgs> ops);

  struct MappingInfo {
    uint64_t va = 0, size = 0, footprint = 0, object_offset = 0;
    uint32_t page_size = 0;
    uint8_t kind = 0;
    bool cacheable = false, remap = false;
    uint32_t object_id = 0;
  };
  // The mapping whose footprint covers `va`.
  std::optional<MappingInfo> FindMapping(uint64_t va) const;
  size_t mapping_count() const;
  size_t reservation_count() const;
  // What this space holds charged to the `mappings` budget (mappings plus reservations).
  uint64_t charged_entries() const;
  uint64_t mapped_object_bytes() const;

 private:
  struct Reservation {
    uint64_t size;
    uint32_t page_size;
    bool sparse;
  };
  struct Mapping {
    uint64_t size;       // bytes backed by the object
    uint64_t footprint;  // VA occupied: size rounded up to page_size
    std::shared_ptr<NvmapObject> object;
    uint64_t object_offset;
    uint32_t page_size;
    uint8_t kind;
    bool cacheable;
    bool in_reservation;  // its VA belongs to a reservation, not to a region's free list
    bool remap;           // a REMAP page range
  };
  using Graveyard = std::vector<std::shared_ptr<NvmapObject>>;
  using Mappings = absl::btree_map<uint64_t, Mapping, CountedLess>;
  using Reservations = absl::btree_map<uint64_t, Reservation, CountedLess>;

  AddressSpace(const AsLayout& layout, BudgetAccount* budget);

  VaAllocator* RegionFor(uint32_t page_size) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The reservation holding all of [va, va + size), or end().
  Reservations::const_iterator ReservationHolding(uint64_t va, uint64_t size) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // Takes `n` more entries from the `mappings` budget for an operation that may add up to `n`;
  // InsufficientMemory, nothing taken, when the budget cannot.
  abi::NvError ReserveEntries(uint64_t n) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Gives back what is charged beyond the entries held now; every operation ends with it.
  void SettleEntries() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool AnyMappingIn(uint64_t va, uint64_t size) const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // Bytes the objects would add to mapped_object_bytes_ if mapped now (each counted once).
  uint64_t NewObjectBytes(std::span<const NvmapObject* const> objects) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // Registers and adds a mapping; false (nothing added) when the object is already retired.
  bool Insert(uint64_t va, Mapping m) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Removes the mapping at `va`; `notify` tells the object (not from ForceUnmap). The
  // object reference moves to `dead` so that it is dropped after the lock.
  void Erase(uint64_t va, bool notify, Graveyard* dead) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Removes the REMAP pages in [va, va + size), splitting ranges that straddle the edges.
  void ClearRemapped(uint64_t va, uint64_t size, Graveyard* dead)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The first contiguous piece of [va, va + len): `n` bytes of `object` from `offset`, or of a
  // sparse page nothing maps (object null). False when `va` is unmapped.
  struct Piece {
    std::shared_ptr<NvmapObject> object;
    uint64_t offset = 0, n = 0;
  };
  bool Translate(uint64_t va, uint64_t len, Piece* p) const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  bool Access(uint64_t va, uint8_t* data, size_t len, bool write, MmuFault* fault);

  const AsLayout layout_;
  BudgetAccount* const budget_;
  mutable absl::Mutex mu_;
  VaAllocator small_ ABSL_GUARDED_BY(mu_);
  VaAllocator big_ ABSL_GUARDED_BY(mu_);
  Reservations reservations_ ABSL_GUARDED_BY(mu_);
  Mappings mappings_ ABSL_GUARDED_BY(mu_);
  // Entries charged to the `mappings` budget: mappings_ plus reservations_ between operations.
  uint64_t charged_ ABSL_GUARDED_BY(mu_) = 0;
  // Mappings per object (for the bit-15 window) and the bytes of the distinct objects.
  absl::flat_hash_map<const NvmapObject*, uint32_t> object_refs_ ABSL_GUARDED_BY(mu_);
  uint64_t mapped_object_bytes_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace nvsentry::hostshim::sim
