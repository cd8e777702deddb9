#include "hostshim/host/host_address_space.h"

#include <fcntl.h>
#include <sys/random.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <vector>

#include "abi/l4t/nvgpu_ctrl.h"
#include "hostshim/budget.h"
#include "hostshim/host/host_port.h"
#include "hostshim/rate_limited_log.h"

namespace nvsentry::hostshim::host {

namespace as = abi::nvhost_as_gpu;
namespace l4t = abi::l4t::nvgpu_as;
using abi::NvError;
using abi::l4t::L4tNode;

constexpr uint32_t kAllocSpaceFixed = 1u << 0;  // NVGPU_AS_ALLOC_SPACE_FLAGS_FIXED_OFFSET

NvError HostVaRegions(int fd, const HostNote& note, pid_t tid, std::span<l4t::VaRegion> out,
                      size_t* n) {
  l4t::GetVaRegions h{reinterpret_cast<uint64_t>(out.data()),
                      static_cast<uint32_t>(out.size_bytes()), 0};
  HostCallResult r = HostIoctlOf(fd, L4tNode::kNvhostAsGpu, l4t::kGetVaRegions, h, note, tid);
  if (r.err != 0) return r.nv();
  // The host answers its full size; it wrote no more than the buffer holds.
  *n = std::min<size_t>(h.buf_size / sizeof(l4t::VaRegion), out.size());
  return NvError::kSuccess;
}

UniqueFd HostAllocAs(const std::string& dev_dir, uint32_t big_page_size, const HostNote& note,
                     pid_t tid, int* err) {
  namespace gpu = abi::l4t::nvgpu_ctrl;
  const std::string path = dev_dir + "/nvhost-ctrl-gpu";
  const UniqueFd ctrl(OpenHostNode(path));
  if (!ctrl) {
    *err = errno;
    return UniqueFd();
  }
  gpu::AllocAs a{};
  a.big_page_size = big_page_size;
  HostCallResult r = HostIoctlOf(ctrl.get(), L4tNode::kNvhostCtrlGpu, gpu::kAllocAs, a, note, tid);
  *err = r.err;
  if (r.err != 0 || a.as_fd < 0) return UniqueFd();
  // The host's fd is installed without close-on-exec; the sentry's own fds all have it.
  fcntl(a.as_fd, F_SETFD, FD_CLOEXEC);
  return UniqueFd(a.as_fd);
}

namespace {

// The host's answer to a call on the space's contents (reserve, map, unmap, free). Its EINVAL
// means a range or size the space cannot take, which the guest ABI's address space answers with
// BadValue (as the simulated one does), not the generic BadParameter.
NvError SpaceError(const HostCallResult& r) {
  return r.err == EINVAL ? NvError::kBadValue : r.nv();
}

}  // namespace

std::shared_ptr<HostAddressSpace> HostAddressSpace::Create(UniqueFd* fd, BudgetAccount* budget,
                                                           HostNote note, NvError* err) {
  if (budget != nullptr) {
    if (NvError e = budget->Charge(BudgetKind::kAddressSpaces); e != NvError::kSuccess) {
      *err = e;
      return nullptr;
    }
  }
  *err = NvError::kSuccess;
  return std::shared_ptr<HostAddressSpace>(
      new HostAddressSpace(std::move(*fd), budget, std::move(note)));
}

HostAddressSpace::~HostAddressSpace() {
  absl::MutexLock l(&mu_);
  for (const auto& [va, size] : private_) {
    l4t::UnmapBuffer u{va};
    Call(0, l4t::kUnmapBuffer, u);
  }
  if (window_ != 0) {
    l4t::FreeSpace f{window_, 0, 0};
    Call(0, l4t::kFreeSpace, f);
  }
  for (uint64_t va : zone_fill_) {
    l4t::FreeSpace f{va, 0, 0};
    Call(0, l4t::kFreeSpace, f);
  }
  // Nothing the guest mapped outlives its space on the host (a channel may still hold the host's
  // address space for a moment after its session let go of this one).
  for (auto& [va, m] : mappings_) {
    UnmapOnHost(0, va, m.own_reservation);
    m.object->RemoveMapping(this, va);
  }
  if (budget_ != nullptr) {
    const uint64_t entries = mappings_.size() + reservations_.size();
    if (entries != 0) budget_->Release(BudgetKind::kMappings, entries);
    budget_->Release(BudgetKind::kAddressSpaces);
  }
}

template <typename T>
HostCallResult HostAddressSpace::Call(pid_t tid, uint32_t code, T& arg) {
  return HostIoctlOf(fd_.get(), L4tNode::kNvhostAsGpu, code, arg, note_, tid);
}

bool HostAddressSpace::Overlaps(uint64_t va, uint64_t size) const {
  auto it = mappings_.lower_bound(va);
  if (it != mappings_.end() && it->first - va < size) return true;
  if (it == mappings_.begin()) return false;
  --it;
  return va - it->first < it->second.size;
}

bool HostAddressSpace::Maps(const sim::NvmapObject* object) const {
  for (const auto& [va, m] : mappings_)
    if (m.object.get() == object) return true;
  return false;
}

NvError HostAddressSpace::ReserveOwn(pid_t tid, uint64_t size, uint64_t buffer_offset,
                                     l4t::MapBufferEx* h) {
  // Big pages only for a big range that starts on one in the object; small pages otherwise.
  std::array<l4t::VaRegion, 4> regions{};
  size_t n = 0;
  uint32_t page = 0x1000;
  if (HostVaRegions(fd_.get(), note_, tid, regions, &n) == NvError::kSuccess)
    for (size_t i = 0; i < n; ++i)
      if (regions[i].page_size > page && size >= regions[i].page_size &&
          buffer_offset % regions[i].page_size == 0)
        page = regions[i].page_size;
  const uint64_t pages = (size + page - 1) / page;
  if (pages > UINT32_MAX) return NvError::kBadValue;
  as::AllocSpace r{static_cast<uint32_t>(pages), page, 0, 0, 0};
  if (HostCallResult res = Call(tid, l4t::kAllocSpace32, r); res.err != 0) return SpaceError(res);
  if (InZone(r.offset_or_align, pages * page)) {  // no room in the guest's part of the space
    l4t::FreeSpace f{r.offset_or_align, 0, 0};
    Call(tid, l4t::kFreeSpace, f);
    return NvError::kInsufficientMemory;
  }
  h->flags |= l4t::kMapFixedOffset;
  h->offset = r.offset_or_align;
  h->buffer_offset = buffer_offset;
  h->mapping_size = size;
  return NvError::kSuccess;
}

HostCallResult HostAddressSpace::UnmapOnHost(pid_t tid, uint64_t va, bool own_reservation) {
  l4t::UnmapBuffer u{va};
  HostCallResult r = Call(tid, l4t::kUnmapBuffer, u);
  if (own_reservation) {
    l4t::FreeSpace f{va, 0, 0};  // r32.7.4 reads only the offset (L4T-AS-5)
    Call(tid, l4t::kFreeSpace, f);
  }
  return r;
}

NvError HostAddressSpace::TakeEntry() {
  if (mappings_.size() + reservations_.size() >= kMaxEntries) return NvError::kInsufficientMemory;
  if (budget_ != nullptr) return budget_->Charge(BudgetKind::kMappings);
  return NvError::kSuccess;
}

void HostAddressSpace::GiveEntry() {
  if (budget_ != nullptr) budget_->Release(BudgetKind::kMappings);
}

void HostAddressSpace::Forget(absl::btree_map<uint64_t, Mapping>::iterator it, bool notify) {
  if (notify) it->second.object->RemoveMapping(this, it->first);
  mappings_.erase(it);
  GiveEntry();
}

NvError HostAddressSpace::AllocSpace(pid_t tid, as::AllocSpace* a) {
  if (a->pages == 0) return NvError::kBadValue;
  absl::MutexLock l(&mu_);
  if (NvError e = TakeEntry(); e != NvError::kSuccess) return e;
  // The same layout and code on both sides (NVGPU32_AS_IOCTL_ALLOC_SPACE).
  // Only fixed-offset and sparse (bits 0 and 1, the simulator's too) reach the host.
  as::AllocSpace h = *a;
  h.flags &= 0x3;
  h.padding = 0;
  const uint64_t size = uint64_t{a->pages} * a->page_size;
  if ((h.flags & kAllocSpaceFixed) && InZone(h.offset_or_align, size)) {
    GiveEntry();
    return OutsideAnswer(tid, *a);
  }
  if (HostCallResult r = Call(tid, l4t::kAllocSpace32, h); r.err != 0) {
    GiveEntry();
    return SpaceError(r);
  }
  if (InZone(h.offset_or_align, size)) {  // no room in the guest's part of the space
    l4t::FreeSpace f{h.offset_or_align, a->pages, a->page_size};
    Call(tid, l4t::kFreeSpace, f);
    GiveEntry();
    return NvError::kInsufficientMemory;
  }
  if (!reservations_.emplace(h.offset_or_align, Reservation{size, a->page_size}).second) {
    // The host handed out a VA the sentry holds: never believed, given back.
    l4t::FreeSpace f{h.offset_or_align, a->pages, a->page_size};
    Call(tid, l4t::kFreeSpace, f);
    GiveEntry();
    return NvError::kIoctlFailed;
  }
  a->offset_or_align = h.offset_or_align;
  return NvError::kSuccess;
}

NvError HostAddressSpace::FreeSpace(pid_t tid, const as::FreeSpace& a) {
  absl::WriterMutexLock no_submission(&submit_mu_);  // SubmitHold
  absl::MutexLock l(&mu_);
  // Only a reservation the guest made, named with its own size, as simulated.
  auto it = reservations_.find(a.offset);
  if (it == reservations_.end() || a.page_size != it->second.page_size ||
      uint64_t{a.pages} * a.page_size != it->second.size)
    return NvError::kBadValue;
  l4t::FreeSpace h{a.offset, a.pages, a.page_size};
  if (HostCallResult r = Call(tid, l4t::kFreeSpace, h); r.err != 0) return SpaceError(r);
  // r32.7.4 unmaps the buffers mapped inside the area with it (nvgpu_vm_area_free).
  const uint64_t end = a.offset + it->second.size;
  reservations_.erase(it);
  std::vector<uint64_t> inside;  // collected first: a btree erase moves its neighbours
  for (auto m = mappings_.lower_bound(a.offset); m != mappings_.end() && m->first < end; ++m)
    inside.push_back(m->first);
  for (uint64_t va : inside) Forget(mappings_.find(va), true);
  GiveEntry();
  return NvError::kSuccess;
}

NvError HostAddressSpace::Map(pid_t tid, const std::shared_ptr<sim::NvmapObject>& object,
                              const HostMap& m, uint64_t* va) {
  absl::MutexLock l(&mu_);
  const bool fixed = (m.arg.flags & l4t::kMapFixedOffset) != 0;
  // A fixed map over a mapping clashes, as simulated: r32.7.4 would take the same buffer at the
  // same VA as one more reference to it (L4T-AS-13), which the guest never asked for.
  if (fixed && (Overlaps(m.arg.offset, m.size) || InZone(m.arg.offset, m.size)))
    return NvError::kBadValue;
  if (NvError e = TakeEntry(); e != NvError::kSuccess) return e;
  // r32.7.4 maps no part of a buffer anywhere (L4T-AS-8) and answers a second anywhere map of one
  // with the first's VA (L4T-AS-13): those go at a fixed VA in a reservation of their own.
  const bool own = !fixed && (m.partial || Maps(object.get()));
  l4t::MapBufferEx h = m.arg;
  if (own) {
    if (NvError e = ReserveOwn(tid, m.size, m.buffer_offset, &h); e != NvError::kSuccess) {
      GiveEntry();
      return e;
    }
  }
  if (HostCallResult r = Call(tid, l4t::kMapBufferEx, h); r.err != 0) {
    if (own) {
      l4t::FreeSpace f{h.offset, 0, 0};
      Call(tid, l4t::kFreeSpace, f);
    }
    GiveEntry();
    return SpaceError(r);
  }
  auto undo = [&] {
    UnmapOnHost(tid, h.offset, own);
    GiveEntry();
  };
  if (mappings_.contains(h.offset)) {  // a VA the sentry holds: the host is not believed
    undo();
    return NvError::kIoctlFailed;
  }
  if (InZone(h.offset, m.size)) {  // an anywhere map the host put in the hidden zone: no room
    undo();
    return NvError::kInsufficientMemory;
  }
  // Registered first: an object whose last handle went meanwhile takes no new mapping.
  if (!object->AddMapping(weak_from_this(), h.offset)) {
    undo();
    return NvError::kBadParameter;
  }
  mappings_.emplace(h.offset, Mapping{object, m.size, m.buffer_offset, own});
  *va = h.offset;
  return NvError::kSuccess;
}

NvError HostAddressSpace::Unmap(pid_t tid, uint64_t va) {
  absl::WriterMutexLock no_submission(&submit_mu_);  // SubmitHold
  absl::MutexLock l(&mu_);
  auto it = mappings_.find(va);
  if (it == mappings_.end()) return NvError::kBadValue;
  if (HostCallResult r = UnmapOnHost(tid, va, it->second.own_reservation); r.err != 0)
    return SpaceError(r);
  Forget(it, true);
  return NvError::kSuccess;
}

void HostAddressSpace::ForceUnmap(uint64_t va) {
  absl::WriterMutexLock no_submission(&submit_mu_);  // SubmitHold
  absl::MutexLock l(&mu_);
  auto it = mappings_.find(va);
  if (it == mappings_.end()) return;
  // As sim::AddressSpace::ForceUnmap: the VA may since hold a mapping of a live object, which
  // stays; a retired object refuses AddMapping, which tells the two apart.
  sim::NvmapObject& object = *it->second.object;
  if (object.AddMapping(weak_from_this(), va)) {
    object.RemoveMapping(this, va);
    return;
  }
  if (HostCallResult r = UnmapOnHost(0, va, it->second.own_reservation); r.err != 0)
    NVS_LOG_LIMITED(spdlog::level::warn,
                    "host backend: unmapping 0x{:x} of a freed nvmap object on the host: errno {}",
                    va, r.err);
  Forget(it, false);
}

NvError HostAddressSpace::Regions(pid_t tid, std::span<l4t::VaRegion> out, size_t* n) {
  absl::MutexLock l(&mu_);
  if (NvError e = HostVaRegions(fd_.get(), note_, tid, out, n); e != NvError::kSuccess) return e;
  // The region holding the hidden zone ends where the zone starts.
  for (size_t i = 0; i < std::min(*n, out.size()); ++i) {
    l4t::VaRegion& r = out[i];
    if (window_ != 0 && r.page_size != 0 && r.offset < zone_ &&
        r.offset + r.pages * r.page_size == zone_end_)
      r.pages = (zone_ - r.offset) / r.page_size;
  }
  return NvError::kSuccess;
}

NvError HostAddressSpace::Bind(pid_t tid, int channel_host_fd) {
  absl::MutexLock l(&mu_);
  l4t::BindChannel h{static_cast<uint32_t>(channel_host_fd)};
  return Call(tid, l4t::kBindChannel, h).nv();
}

bool HostAddressSpace::Resolve(uint64_t va, uint64_t size, std::vector<Piece>* out) const {
  out->clear();
  absl::MutexLock l(&mu_);
  while (size != 0) {
    auto it = mappings_.upper_bound(va);
    if (it == mappings_.begin()) return false;
    --it;
    const uint64_t into = va - it->first;
    if (into >= it->second.size) return false;
    const uint64_t n = std::min(size, it->second.size - into);
    out->push_back({it->second.object, it->second.offset + into, n});
    va += n;
    size -= n;
  }
  return true;
}

bool HostAddressSpace::MappedPieces(uint64_t va, uint64_t size, size_t limit,
                                    std::vector<Piece>* out) const {
  const uint64_t end = va + size < va ? UINT64_MAX : va + size;
  absl::MutexLock l(&mu_);
  auto it = mappings_.upper_bound(va);
  if (it != mappings_.begin()) --it;
  for (; it != mappings_.end() && it->first < end; ++it) {
    const uint64_t from = std::max(va, it->first), to = std::min(end, it->first + it->second.size);
    if (from >= to) continue;
    if (out->size() >= limit) return false;
    out->push_back({it->second.object, it->second.offset + (from - it->first), to - from});
  }
  return true;
}

bool HostAddressSpace::AllPieces(size_t limit, std::vector<Piece>* out) const {
  absl::MutexLock l(&mu_);
  for (const auto& [va, m] : mappings_) {
    if (out->size() >= limit) return false;
    out->push_back({m.object, m.offset, m.size});
  }
  return true;
}

bool HostAddressSpace::InZone(uint64_t va, uint64_t size) const {
  if (window_ == 0 || size == 0) return false;
  const uint64_t end = va + size < va ? UINT64_MAX : va + size;
  return va < zone_end_ && end > zone_;
}

bool HostAddressSpace::MeetsPrivate(uint64_t va, uint64_t size) const {
  absl::MutexLock l(&mu_);
  return InZone(va, size);
}

NvError HostAddressSpace::OutsideAnswer(pid_t tid, const as::AllocSpace& a) {
  as::AllocSpace h = a;
  h.flags &= 0x3;
  h.padding = 0;
  h.offset_or_align = zone_end_;
  HostCallResult r = Call(tid, l4t::kAllocSpace32, h);
  if (r.err != 0) return SpaceError(r);
  // The host took it after all (a space larger than its regions said): given back, refused.
  l4t::FreeSpace f{h.offset_or_align, a.pages, a.page_size};
  Call(tid, l4t::kFreeSpace, f);
  return NvError::kBadValue;
}

NvError HostAddressSpace::ReservePrivateWindow(pid_t tid) {
  absl::MutexLock l(&mu_);
  if (window_ != 0) return NvError::kSuccess;
  std::array<l4t::VaRegion, 4> regions{};
  size_t n = 0;
  if (NvError e = HostVaRegions(fd_.get(), note_, tid, regions, &n); e != NvError::kSuccess)
    return e;
  const l4t::VaRegion* best = nullptr;  // the most room: the most places to choose from
  for (size_t i = 0; i < n; ++i)
    if (regions[i].page_size != 0 && (best == nullptr || regions[i].pages * regions[i].page_size >
                                                             best->pages * best->page_size))
      best = &regions[i];
  if (best == nullptr || kPrivateWindow % best->page_size != 0) return NvError::kInsufficientMemory;
  const uint64_t pages = kPrivateWindow / best->page_size;
  const uint64_t zone_pages = best->pages / 2;  // the upper half: the guest keeps the lower
  if (zone_pages < pages) return NvError::kInsufficientMemory;
  const uint64_t places = zone_pages - pages + 1;
  const uint64_t zone = best->offset + (best->pages - zone_pages) * best->page_size;
  // A fresh space holds nothing the guest made; the host's own (if any) may take a place: another.
  for (int attempt = 0; attempt < 16; ++attempt) {
    uint64_t r = 0;
    if (getrandom(&r, sizeof r, 0) != sizeof r) return NvError::kInsufficientMemory;
    as::AllocSpace a{static_cast<uint32_t>(pages), best->page_size, kAllocSpaceFixed, 0,
                     zone + (r % places) * best->page_size};
    if (Call(tid, l4t::kAllocSpace32, a).err != 0) continue;
    window_ = a.offset_or_align;
    window_page_ = best->page_size;
    zone_ = zone;
    zone_end_ = best->offset + best->pages * best->page_size;
    // The rest of the zone is reserved too, so that the host places no anywhere reservation or
    // map of the guest's there (it did, by its own choice of place, and the guest was answered
    // "no room" with room left below the zone). Best effort: the zone checks hold without it.
    const auto fill = [&](uint64_t from, uint64_t to) {
      if (to <= from) return;
      as::AllocSpace f{static_cast<uint32_t>((to - from) / best->page_size), best->page_size,
                       kAllocSpaceFixed, 0, from};
      if (Call(tid, l4t::kAllocSpace32, f).err == 0) zone_fill_.push_back(f.offset_or_align);
    };
    fill(zone_, window_);
    fill(window_ + kPrivateWindow, zone_end_);
    return NvError::kSuccess;
  }
  return NvError::kInsufficientMemory;
}

NvError HostAddressSpace::MapPrivate(pid_t tid, uint32_t handle, uint64_t size, uint64_t* va) {
  absl::MutexLock l(&mu_);
  if (window_ == 0 || size == 0 || size % window_page_ != 0 || size > kPrivateWindow)
    return NvError::kInsufficientMemory;
  // The first free slot of `size` bytes (slots are all one size: the channels' rings).
  uint64_t at = window_;
  for (const auto& [v, n] : private_) {
    if (v - at >= size) break;
    at = v + n;
  }
  if (at + size > window_ + kPrivateWindow) return NvError::kInsufficientMemory;
  l4t::MapBufferEx m{};
  m.flags = l4t::kMapFixedOffset | l4t::kMapDirectKindCtrl;
  m.compr_kind = l4t::kKindInvalid;
  m.incompr_kind = 0;  // pitch
  m.dmabuf_fd = handle;
  m.mapping_size = size;
  m.offset = at;
  if (HostCallResult r = Call(tid, l4t::kMapBufferEx, m); r.err != 0) return SpaceError(r);
  if (m.offset != at) {  // not where asked: the host is not believed
    l4t::UnmapBuffer u{m.offset};
    Call(tid, l4t::kUnmapBuffer, u);
    return NvError::kIoctlFailed;
  }
  private_.emplace(at, size);
  *va = at;
  return NvError::kSuccess;
}

void HostAddressSpace::UnmapPrivate(uint64_t va) {
  absl::MutexLock l(&mu_);
  if (private_.erase(va) == 0) return;
  l4t::UnmapBuffer u{va};
  if (HostCallResult r = Call(0, l4t::kUnmapBuffer, u); r.err != 0)
    NVS_LOG_LIMITED(spdlog::level::warn,
                    "host backend: unmapping the private pushbuffer copy at 0x{:x}: errno {}", va,
                    r.err);
}

size_t HostAddressSpace::mapping_count() const {
  absl::MutexLock l(&mu_);
  return mappings_.size();
}

size_t HostAddressSpace::reservation_count() const {
  absl::MutexLock l(&mu_);
  return reservations_.size();
}

}  // namespace nvsentry::hostshim::host
