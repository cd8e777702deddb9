#include "hostshim/sim/memory/address_space.h"

#include <algorithm>
#include <bit>
#include <cstring>

#include "absl/cleanup/cleanup.h"

namespace nvsentry::hostshim::sim {
using abi::NvError;

namespace {

uint64_t RoundUp(uint64_t v, uint64_t granule) { return (v + granule - 1) & ~(granule - 1); }

// A guest-given alignment: 0 means the page size, below the page size is the page size;
// nullopt when it is not a power of two.
std::optional<uint64_t> Alignment(uint64_t align, uint32_t page_size) {
  if (align == 0) return page_size;
  if (!std::has_single_bit(align)) return std::nullopt;
  return std::max<uint64_t>(align, page_size);
}

// Kinds are 8-bit on GM20B; -1 asks for the object's own.
std::optional<uint8_t> Kind(int32_t kind, uint8_t dflt) {
  if (kind == -1) return dflt;
  if (kind < 0 || kind > 0xFF) return std::nullopt;
  return static_cast<uint8_t>(kind);
}

}  // namespace

std::shared_ptr<AddressSpace> AddressSpace::Create(const AsLayout& layout, BudgetAccount* budget) {
  return std::shared_ptr<AddressSpace>(new AddressSpace(layout, budget));
}

AddressSpace::AddressSpace(const AsLayout& layout, BudgetAccount* budget)
    : layout_(layout),
      budget_(budget),
      small_(layout.small_start, layout.small_end, kSmallPageSize),
      big_(layout.big_start, layout.big_end, layout.big_page_size) {}

AddressSpace::~AddressSpace() {
  // Nobody else can reach us now. Each object mapped here forgets this space's records in one
  // call (no search per mapping: a space with hundreds of thousands of mappings ends in a few
  // milliseconds, so the thread that ends sessions never stalls on it), then the mappings go.
  absl::MutexLock l(&mu_);
  for (const auto& [object, n] : object_refs_) {
    // Keyed by address only; the objects themselves are not const (mappings_ holds them).
    const_cast<NvmapObject*>(object)->RemoveOwner(this);
  }
  mappings_.clear();
  if (budget_) {
    if (charged_ != 0) budget_->Release(BudgetKind::kMappings, charged_);
    budget_->Release(BudgetKind::kAddressSpaces);
  }
}

abi::NvError AddressSpace::ReserveEntries(uint64_t n) {
  if (budget_ != nullptr) {
    if (NvError e = budget_->Charge(BudgetKind::kMappings, n); e != NvError::kSuccess) return e;
  }
  charged_ += n;
  return NvError::kSuccess;
}

void AddressSpace::SettleEntries() {
  const uint64_t held = mappings_.size() + reservations_.size();
  if (charged_ <= held) return;
  if (budget_ != nullptr) budget_->Release(BudgetKind::kMappings, charged_ - held);
  charged_ = held;
}

uint64_t AddressSpace::charged_entries() const {
  absl::ReaderMutexLock l(&mu_);
  return charged_;
}

std::array<abi::nvhost_as_gpu::VaRegion, 2> AddressSpace::Regions() const {
  std::array<abi::nvhost_as_gpu::VaRegion, 2> r{};
  r[0].offset = layout_.small_start;
  r[0].page_size = kSmallPageSize;
  r[0].pages = (layout_.small_end - layout_.small_start) / kSmallPageSize;
  r[1].offset = layout_.big_start;
  r[1].page_size = layout_.big_page_size;
  r[1].pages = (layout_.big_end - layout_.big_start) / layout_.big_page_size;
  return r;
}

VaAllocator* AddressSpace::RegionFor(uint32_t page_size) {
  if (page_size == kSmallPageSize) return &small_;
  if (page_size == layout_.big_page_size) return &big_;
  return nullptr;
}

AddressSpace::Reservations::const_iterator AddressSpace::ReservationHolding(uint64_t va,
                                                                            uint64_t size) const {
  auto it = reservations_.upper_bound(va);
  if (it == reservations_.begin()) return reservations_.end();
  --it;
  const uint64_t off = va - it->first;
  if (off >= it->second.size || size > it->second.size - off) return reservations_.end();
  return it;
}

bool AddressSpace::AnyMappingIn(uint64_t va, uint64_t size) const {
  auto it = mappings_.lower_bound(va);
  if (it != mappings_.end() && it->first - va < size) return true;
  if (it == mappings_.begin()) return false;
  --it;
  return va - it->first < it->second.footprint;
}

uint64_t AddressSpace::NewObjectBytes(std::span<const NvmapObject* const> objects) const {
  uint64_t bytes = 0;
  absl::flat_hash_map<const NvmapObject*, bool> seen;
  for (const NvmapObject* o : objects) {
    if (o == nullptr || object_refs_.contains(o) || !seen.emplace(o, true).second) continue;
    bytes += o->size();
  }
  return bytes;
}

bool AddressSpace::Insert(uint64_t va, Mapping m) {
  // Registered first: an object whose last handle is already freed takes no new mapping.
  if (!m.object->AddMapping(weak_from_this(), va)) return false;
  if (object_refs_[m.object.get()]++ == 0) mapped_object_bytes_ += m.object->size();
  mappings_.emplace(va, std::move(m));
  return true;
}

void AddressSpace::Erase(uint64_t va, bool notify, Graveyard* dead) {
  auto it = mappings_.find(va);
  if (it == mappings_.end()) return;
  Mapping m = std::move(it->second);
  mappings_.erase(it);
  if (!m.in_reservation) RegionFor(m.page_size)->Free(va, m.footprint);
  auto ref = object_refs_.find(m.object.get());
  if (ref != object_refs_.end() && --ref->second == 0) {
    mapped_object_bytes_ -= m.object->size();
    object_refs_.erase(ref);
  }
  if (notify) m.object->RemoveMapping(this, va);
  dead->push_back(std::move(m.object));
}

abi::NvError AddressSpace::AllocSpace(uint32_t pages, uint32_t page_size, uint32_t flags,
                                      uint64_t* offset_or_align) {
  if (pages == 0) return NvError::kBadValue;
  const uint64_t size = uint64_t{pages} * page_size;
  absl::MutexLock l(&mu_);
  VaAllocator* region = RegionFor(page_size);
  if (region == nullptr) return NvError::kBadValue;
  if (reservations_.size() + mappings_.size() >= kMaxEntries) {
    return NvError::kInsufficientMemory;
  }
  if (NvError e = ReserveEntries(1); e != NvError::kSuccess) return e;
  absl::Cleanup settle = [this]() ABSL_NO_THREAD_SAFETY_ANALYSIS { SettleEntries(); };
  uint64_t va;
  if (flags & kAllocSpaceFixed) {
    va = *offset_or_align;
    if (va % page_size != 0 || !region->Contains(va, size)) return NvError::kBadValue;
    // Something (a reservation or an anywhere mapping) is already there.
    if (!region->AllocateFixed(va, size)) return NvError::kBadValue;
  } else {
    auto align = Alignment(*offset_or_align, page_size);
    if (!align) return NvError::kBadValue;
    auto got = region->Allocate(size, *align);
    if (!got) return NvError::kInsufficientMemory;
    va = *got;
  }
  reservations_.emplace(va, Reservation{size, page_size, (flags & kAllocSpaceSparse) != 0});
  *offset_or_align = va;
  return NvError::kSuccess;
}

abi::NvError AddressSpace::FreeSpace(uint64_t offset, uint32_t pages, uint32_t page_size) {
  Graveyard dead;
  absl::MutexLock l(&mu_);
  // Only a reservation that exists, named with its own size (an unknown offset is refused,
  // never inserted).
  auto it = reservations_.find(offset);
  if (it == reservations_.end()) return NvError::kBadValue;
  const Reservation r = it->second;
  if (page_size != r.page_size || uint64_t{pages} * page_size != r.size) {
    return NvError::kBadValue;
  }
  std::vector<uint64_t> inside;
  for (auto m = mappings_.lower_bound(offset); m != mappings_.end() && m->first - offset < r.size;
       ++m) {
    inside.push_back(m->first);
  }
  for (uint64_t va : inside) Erase(va, true, &dead);
  reservations_.erase(offset);
  RegionFor(r.page_size)->Free(offset, r.size);
  SettleEntries();
  return NvError::kSuccess;
}

abi::NvError AddressSpace::Map(const MapArgs& a, uint64_t* va_out, int32_t* kind_out) {
  if (!a.object) return NvError::kBadParameter;
  // The object's state is read before our lock (its lock nests inside ours only for
  // AddMapping/RemoveMapping).
  const NvmapObject::Attributes attr = a.object->attributes();
  const uint64_t object_size = a.object->size();
  if (!attr.allocated) return NvError::kBadValue;
  auto kind = Kind(a.kind, attr.kind);
  if (!kind) return NvError::kBadValue;
  // Switchbrew: an unaligned size makes the real service panic; here it is refused.
  if (a.buffer_offset % kSmallPageSize != 0 || a.mapping_size % kSmallPageSize != 0) {
    return NvError::kBadValue;
  }
  if (a.buffer_offset >= object_size) return NvError::kBadValue;
  const uint64_t size = a.mapping_size ? a.mapping_size : object_size - a.buffer_offset;
  if (size > object_size - a.buffer_offset) return NvError::kBadValue;

  absl::MutexLock l(&mu_);
  if (reservations_.size() + mappings_.size() >= kMaxEntries) {
    return NvError::kInsufficientMemory;
  }
  if (NvError e = ReserveEntries(1); e != NvError::kSuccess) return e;
  absl::Cleanup settle = [this]() ABSL_NO_THREAD_SAFETY_ANALYSIS { SettleEntries(); };
  const NvmapObject* objects[] = {a.object.get()};
  if (NewObjectBytes(objects) > layout_.object_bytes_limit - mapped_object_bytes_) {
    return NvError::kInsufficientMemory;
  }
  Mapping m{size,  0,    a.object, a.buffer_offset, 0, *kind, (a.flags & kMapCacheable) != 0,
            false, false};
  uint64_t va;
  if (a.flags & kMapFixed) {
    // A fixed mapping goes into a reservation (Switchbrew, GPU command submission), at its page
    // size.
    va = a.offset_or_align;
    auto r = ReservationHolding(va, 1);
    if (r == reservations_.end()) return NvError::kBadValue;
    m.page_size = r->second.page_size;
    m.footprint = RoundUp(size, m.page_size);
    if (va % m.page_size != 0 || ReservationHolding(va, m.footprint) == reservations_.end()) {
      return NvError::kBadValue;
    }
    if (AnyMappingIn(va, m.footprint)) return NvError::kBadValue;
    m.in_reservation = true;
  } else {
    // Big pages when the object and the offset into it are big-page aligned (the object was
    // allocated for them), else small pages.
    const uint32_t big = layout_.big_page_size;
    const bool want_big = attr.align != 0 && attr.align % big == 0 && a.buffer_offset % big == 0;
    // A full (or absent: ALLOC_AS_EX's split at its end) big-page region falls back to small pages.
    std::optional<uint64_t> got;
    for (uint32_t ps : {big, kSmallPageSize}) {
      if (ps == big && !want_big) continue;
      auto align = Alignment(a.offset_or_align, ps);
      if (!align) return NvError::kBadValue;
      got = RegionFor(ps)->Allocate(RoundUp(size, ps), *align);
      if (got) {
        m.page_size = ps;
        m.footprint = RoundUp(size, ps);
        break;
      }
    }
    if (!got) return NvError::kInsufficientMemory;
    va = *got;
  }
  const bool anywhere = !m.in_reservation;
  const uint64_t footprint = m.footprint;
  const uint32_t page_size = m.page_size;
  if (!Insert(va, std::move(m))) {
    // Its last handle was freed since the lookup: as if the handle were unknown.
    if (anywhere) RegionFor(page_size)->Free(va, footprint);
    return NvError::kBadParameter;
  }
  *va_out = va;
  *kind_out = *kind;
  return NvError::kSuccess;
}

abi::NvError AddressSpace::Modify(uint64_t va, uint64_t buffer_offset, uint64_t size, int32_t kind,
                                  int32_t* kind_out) {
  absl::MutexLock l(&mu_);
  auto it = mappings_.find(va);
  if (it == mappings_.end() || it->second.remap) return NvError::kBadValue;
  Mapping& m = it->second;
  if (buffer_offset % kSmallPageSize != 0 || size % kSmallPageSize != 0) {
    return NvError::kBadValue;
  }
  if (buffer_offset >= m.size) return NvError::kBadValue;
  if (size == 0) size = m.size - buffer_offset;
  if (size > m.size - buffer_offset) return NvError::kBadValue;
  auto k = Kind(kind, m.kind);
  if (!k) return NvError::kBadValue;
  // Kinds only describe layout to the real MMU; the simulator records the whole mapping's.
  if (buffer_offset == 0 && size == m.size) m.kind = *k;
  *kind_out = *k;
  return NvError::kSuccess;
}

abi::NvError AddressSpace::Unmap(uint64_t va) {
  Graveyard dead;
  absl::MutexLock l(&mu_);
  auto it = mappings_.find(va);
  if (it == mappings_.end() || it->second.remap) return NvError::kBadValue;
  // An anywhere mapping gives back its whole footprint (its size rounded up to its page
  // size); a fixed one leaves its reservation's pages reserved.
  Erase(va, true, &dead);
  SettleEntries();
  return NvError::kSuccess;
}

void AddressSpace::ClearRemapped(uint64_t va, uint64_t size, Graveyard* dead) {
  const uint64_t end = va + size;
  // The piece that starts below va and reaches into the range keeps its head.
  auto it = mappings_.lower_bound(va);
  if (it != mappings_.begin()) {
    auto prev = std::prev(it);
    const uint64_t pend = prev->first + prev->second.footprint;
    if (prev->second.remap && pend > va) {
      Mapping& p = prev->second;
      if (pend > end) {  // straddles both edges: the tail becomes its own piece
        Mapping tail = p;
        tail.object_offset += end - prev->first;
        tail.size = tail.footprint = pend - end;
        p.size = p.footprint = va - prev->first;
        Insert(end, std::move(tail));  // a retired object's tail is dropped, as ForceUnmap would
        return;
      }
      p.size = p.footprint = va - prev->first;
    }
  }
  std::vector<uint64_t> inside;
  for (it = mappings_.lower_bound(va); it != mappings_.end() && it->first < end; ++it) {
    inside.push_back(it->first);
  }
  for (uint64_t piece : inside) {
    auto m = mappings_.find(piece);
    const uint64_t pend = piece + m->second.footprint;
    if (pend > end) {  // its tail survives
      Mapping tail = m->second;
      tail.object_offset += end - piece;
      tail.size = tail.footprint = pend - end;
      Erase(piece, true, dead);
      Insert(end, std::move(tail));
    } else {
      Erase(piece, true, dead);
    }
  }
}

abi::NvError AddressSpace::Remap(std::span<const RemapArgs> ops) {
  const uint64_t ps = layout_.big_page_size;
  // Object state first, outside our lock.
  std::vector<uint64_t> object_sizes(ops.size());
  std::vector<const NvmapObject*> objects;
  for (size_t i = 0; i < ops.size(); i++) {
    const RemapArgs& r = ops[i];
    if (r.op.mem_handle == 0) continue;
    if (!r.object) return NvError::kBadParameter;
    if (!r.object->attributes().allocated) return NvError::kBadValue;
    object_sizes[i] = r.object->size();
    objects.push_back(r.object.get());
  }
  Graveyard dead;
  absl::MutexLock l(&mu_);
  // Every op is checked before any is applied.
  for (size_t i = 0; i < ops.size(); i++) {
    const auto& op = ops[i].op;
    if (op.num_pages == 0) return NvError::kBadValue;
    const uint64_t va = uint64_t{op.virt_offset_in_pages} * ps;
    const uint64_t size = uint64_t{op.num_pages} * ps;
    auto r = ReservationHolding(va, size);
    if (r == reservations_.end() || !r->second.sparse || r->second.page_size != ps) {
      return NvError::kBadValue;
    }
    // REMAP only rearranges its own pages; a MAP_BUFFER mapping in the way is refused.
    auto it = mappings_.lower_bound(va);
    if (it != mappings_.begin()) --it;
    for (; it != mappings_.end() && it->first < va + size; ++it) {
      if (it->first + it->second.footprint > va && !it->second.remap) return NvError::kBadValue;
    }
    if (op.mem_handle != 0) {
      if (op.kind > 0xFF) return NvError::kBadValue;
      // The object must hold every page named (offset + size checked against the object).
      const uint64_t first = uint64_t{op.mem_offset_in_pages} * ps;
      if (first > object_sizes[i] || size > object_sizes[i] - first) return NvError::kBadValue;
    }
  }
  // Each op adds at most one piece and splits at most one.
  if (reservations_.size() + mappings_.size() + 2 * ops.size() > kMaxEntries) {
    return NvError::kInsufficientMemory;
  }
  if (NewObjectBytes(objects) > layout_.object_bytes_limit - mapped_object_bytes_) {
    return NvError::kInsufficientMemory;
  }
  // The most the ops can add, taken before any is applied; what they did not add goes back.
  if (NvError e = ReserveEntries(2 * ops.size()); e != NvError::kSuccess) return e;
  absl::Cleanup settle = [this]() ABSL_NO_THREAD_SAFETY_ANALYSIS { SettleEntries(); };
  for (const RemapArgs& r : ops) {
    const uint64_t va = uint64_t{r.op.virt_offset_in_pages} * ps;
    const uint64_t size = uint64_t{r.op.num_pages} * ps;
    ClearRemapped(va, size, &dead);
    if (r.op.mem_handle == 0) continue;  // back to sparse
    // A piece of an object freed since the lookup is not kept (ForceUnmap would drop it).
    Insert(va, Mapping{size, size, r.object, uint64_t{r.op.mem_offset_in_pages} * ps,
                       static_cast<uint32_t>(ps), static_cast<uint8_t>(r.op.kind),
                       (r.op.flags & kMapCacheable) != 0, true, true});
  }
  return NvError::kSuccess;
}

void AddressSpace::ForceUnmap(uint64_t va) {
  Graveyard dead;
  absl::MutexLock l(&mu_);
  auto it = mappings_.find(va);
  if (it == mappings_.end()) return;
  // The call names only the VA. Between the object's retirement and this call the guest may
  // have unmapped it and mapped another object at the same VA; that mapping must stay. A
  // retired object refuses AddMapping, which tells the two apart (a live one gets the probe
  // record taken straight back).
  NvmapObject& object = *it->second.object;
  if (object.AddMapping(weak_from_this(), va)) {
    object.RemoveMapping(this, va);
    return;
  }
  Erase(va, false, &dead);
  SettleEntries();
}

std::optional<AddressSpace::MappingInfo> AddressSpace::FindMapping(uint64_t va) const {
  absl::ReaderMutexLock l(&mu_);
  auto it = mappings_.upper_bound(va);
  if (it == mappings_.begin()) return std::nullopt;
  --it;
  const Mapping& m = it->second;
  if (va - it->first >= m.footprint) return std::nullopt;
  return MappingInfo{it->first, m.size,      m.footprint, m.object_offset, m.page_size,
                     m.kind,    m.cacheable, m.remap,     m.object->id()};
}

size_t AddressSpace::mapping_count() const {
  absl::ReaderMutexLock l(&mu_);
  return mappings_.size();
}

size_t AddressSpace::reservation_count() const {
  absl::ReaderMutexLock l(&mu_);
  return reservations_.size();
}

uint64_t AddressSpace::mapped_object_bytes() const {
  absl::ReaderMutexLock l(&mu_);
  return mapped_object_bytes_;
}

bool AddressSpace::Read(uint64_t va, std::span<uint8_t> dst, MmuFault* fault) {
  return Access(va, dst.data(), dst.size(), false, fault);
}

bool AddressSpace::Write(uint64_t va, std::span<const uint8_t> src, MmuFault* fault) {
  return Access(va, const_cast<uint8_t*>(src.data()), src.size(), true, fault);
}

bool AddressSpace::Translate(uint64_t va, uint64_t len, Piece* p) const {
  p->object = nullptr;
  auto next = mappings_.upper_bound(va);
  if (next != mappings_.begin()) {
    auto m = std::prev(next);
    const uint64_t into = va - m->first;
    if (into < m->second.size) {
      p->object = m->second.object;
      p->offset = m->second.object_offset + into;
      p->n = std::min<uint64_t>(len, m->second.size - into);
      return true;
    }
  }
  auto r = reservations_.upper_bound(va);
  if (r == reservations_.begin()) return false;
  --r;
  const uint64_t into = va - r->first;
  if (into >= r->second.size || !r->second.sparse) return false;
  p->n = std::min<uint64_t>(len, r->second.size - into);
  if (next != mappings_.end()) p->n = std::min(p->n, next->first - va);
  return true;
}

bool AddressSpace::Access(uint64_t va, uint8_t* data, size_t len, bool write, MmuFault* fault) {
  auto fail = [&](MmuFault::Kind kind) {
    if (fault) *fault = MmuFault{kind, va, write};
    return false;
  };
  while (len > 0) {
    // One lookup per contiguous piece; the copy runs with the object pinned, not locked.
    Piece p;
    {
      absl::ReaderMutexLock l(&mu_);
      if (!Translate(va, len, &p)) return fail(MmuFault::Kind::kUnmapped);
    }
    if (p.object) {
      const bool ok =
          write ? p.object->Write(p.offset, {data, p.n}) : p.object->Read(p.offset, {data, p.n});
      if (!ok) return fail(MmuFault::Kind::kMemoryGone);
    } else if (!write) {
      std::memset(data, 0, p.n);  // a sparse page nothing maps
    }
    va += p.n;
    data += p.n;
    len -= p.n;
  }
  return true;
}

bool AddressSpace::ReadMany(std::span<const GpuRead> reads) {
  // Every piece is looked up under one lock, then read with the objects pinned, not locked:
  // guest memory through one batch (a liveness check and a process_vm_readv for all of it).
  struct Target {
    Piece piece;
    uint8_t* dst;
  };
  std::vector<Target> targets;
  targets.reserve(reads.size());
  {
    absl::ReaderMutexLock l(&mu_);
    for (const GpuRead& r : reads) {
      uint64_t va = r.va;
      uint8_t* dst = r.dst.data();
      for (uint64_t len = r.dst.size(); len > 0;) {
        Target& t = targets.emplace_back();
        if (!Translate(va, len, &t.piece)) return false;
        t.dst = dst;
        va += t.piece.n;
        dst += t.piece.n;
        len -= t.piece.n;
      }
    }
  }
  GuestReadBatch batch;
  for (const Target& t : targets) {
    if (!t.piece.object) {
      std::memset(t.dst, 0, t.piece.n);
    } else if (!t.piece.object->ReadInto(&batch, t.piece.offset, {t.dst, t.piece.n})) {
      return false;
    }
  }
  return batch.Run();
}

}  // namespace nvsentry::hostshim::sim
