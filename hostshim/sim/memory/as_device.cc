#include "hostshim/sim/memory/as_device.h"

#include <algorithm>
#include <vector>

#include "abi/permissions.h"
#include "absl/container/flat_hash_map.h"
#include "hostshim/sim/memory/channel_device.h"
#include "hostshim/unimplemented.h"

namespace nvsentry::hostshim::sim {
namespace as = abi::nvhost_as_gpu;
using abi::NvError;

namespace {

// Switchbrew's numbers for bit 13, in 4 KiB (small) pages (see as_device.h).
constexpr uint64_t kLowWindowEnd = uint64_t{0xC0000} << 12;    // 3 GiB
constexpr uint64_t kHighWindowEnd = uint64_t{0x580000} << 12;  // 22 GiB
// Bit 15's GPU device windows: [0, 0x100000000) with it, [0x100000000, 0x11FA50000) without.
constexpr uint64_t kWideDeviceWindow = 0x100000000;
constexpr uint64_t kNarrowDeviceWindow = 0x11FA50000 - 0x100000000;

}  // namespace

VaWindow PermissionVaWindow(uint32_t permission_mask) {
  if (abi::Permissions(permission_mask).HighGpuVa()) return {kLowWindowEnd, kHighWindowEnd};
  return {0, kLowWindowEnd};
}

uint64_t PermissionObjectBytesLimit(uint32_t permission_mask) {
  return abi::Permissions(permission_mask).FullVaRanges() ? kWideDeviceWindow : kNarrowDeviceWindow;
}

abi::NvError MakeAsLayout(uint32_t big_page_size, uint64_t start, uint64_t split, uint64_t end,
                          uint32_t permission_mask, AsLayout* out) {
  if (big_page_size == 0) big_page_size = kDefaultBigPageSize;
  if (big_page_size != 0x10000 && big_page_size != 0x20000) return NvError::kBadValue;
  const uint64_t big = big_page_size;
  if (start == 0 && split == 0 && end == 0) {
    start = big << 10;
    split = kDefaultVaSplit;
    end = kDefaultVaEnd;
  } else if (start == 0 || start >= end || split < start || split > end || end > kGpuVaEnd ||
             start % big || split % big || end % big) {
    return NvError::kBadValue;
  }
  // Bit 13 bounds the small-page region only (as_device.h).
  const VaWindow w = PermissionVaWindow(permission_mask);
  auto clip = [&](uint64_t v) { return std::clamp(v, w.start, w.end); };
  AsLayout l;
  l.big_page_size = big_page_size;
  l.small_start = clip(start);
  l.small_end = clip(split);
  l.big_start = split;
  l.big_end = end;
  if (l.small_start == l.small_end && l.big_start == l.big_end) return NvError::kBadValue;
  l.object_bytes_limit = PermissionObjectBytesLimit(permission_mask);
  *out = l;
  return NvError::kSuccess;
}

AsDevice::AsDevice(Nvmap& nvmap, BudgetAccount* budget, uint32_t permission_mask)
    : nvmap_(nvmap), budget_(budget), permission_mask_(permission_mask) {}

std::shared_ptr<AddressSpace> AsDevice::address_space() const {
  absl::MutexLock l(&mu_);
  return as_;
}

abi::NvError AsDevice::AllocAs(uint32_t big_page_size, uint64_t start, uint64_t split,
                               uint64_t end) {
  AsLayout layout;
  if (NvError e = MakeAsLayout(big_page_size, start, split, end, permission_mask_, &layout);
      e != NvError::kSuccess) {
    return e;
  }
  absl::MutexLock l(&mu_);
  if (as_) return NvError::kAlreadyAllocated;
  if (budget_) {
    if (NvError e = budget_->Charge(BudgetKind::kAddressSpaces); e != NvError::kSuccess) return e;
  }
  as_ = AddressSpace::Create(layout, budget_);  // releases the charge when it dies
  return NvError::kSuccess;
}

std::shared_ptr<NvmapObject> AsDevice::Resolve(Call& call, uint32_t handle) const {
  if (call.caller == nullptr || handle == 0) return nullptr;
  return nvmap_.Resolve(call.caller->tgid(), handle);
}

abi::NvError AsDevice::BindChannel(Call& call, AddressSpace* space) {
  AddressSpace& as = *space;
  const auto& a = ArgAs<as::BindChannel>(call.arg);
  if (call.caller == nullptr) return NvError::kBadParameter;
  // The fd must be a channel of this GPU; anything else (another device, a host passthrough
  // session, no session) is refused, never cast blindly.
  std::shared_ptr<DeviceBackend> backend =
      call.caller->BackendOf(static_cast<int32_t>(a.channel_fd));
  auto* channel = dynamic_cast<ChannelDevice*>(backend.get());
  if (channel == nullptr) return NvError::kBadParameter;
  return channel->BindAddressSpace(as.shared_from_this());
}

abi::NvError AsDevice::GetVaRegions(Call& call, AddressSpace* space) {
  const AddressSpace& as = *space;
  auto& a = ArgAs<as::GetVaRegions>(call.arg);
  const auto regions = as.Regions();
  a.buf_size = sizeof(a.regions);  // Switchbrew: forced to 2 * sizeof(va_region)
  for (size_t i = 0; i < regions.size(); i++) a.regions[i] = regions[i];
  if (!call.arrays.empty()) {  // through Ioctl3 the second output buffer gets them as well
    auto out = call.Array<as::VaRegion>(0);
    for (size_t i = 0; i < std::min(out.size(), regions.size()); i++) out[i] = regions[i];
  }
  return NvError::kSuccess;
}

abi::NvError AsDevice::MapBuffer(Call& call, AddressSpace* space) {
  AddressSpace& as = *space;
  auto& a = ArgAs<as::MapBuffer>(call.arg);
  AddressSpace::MapArgs m;
  m.object = Resolve(call, a.mem_id);
  if (!m.object) return NvError::kBadParameter;
  m.flags = a.flags;
  m.offset_or_align = a.offset_or_align;
  uint64_t va;
  int32_t kind;
  NvError e = as.Map(m, &va, &kind);
  if (e == NvError::kSuccess) a.offset_or_align = va;
  return e;
}

abi::NvError AsDevice::MapBufferEx(Call& call, AddressSpace* space) {
  AddressSpace& as = *space;
  // MAP_BUFFER_EX2 starts with MAP_BUFFER_EX's fields; its vma_addr and pages describe the
  // CPU side of the mapping, which the simulator has no use for.
  auto& a = ArgAs<as::MapBufferEx>(call.arg);
  const int32_t kind_in = static_cast<int32_t>(a.kind);
  int32_t kind;
  NvError e;
  if (a.flags & kMapModify) {
    e = as.Modify(a.offset_or_align, a.buffer_offset, a.mapping_size, kind_in, &kind);
  } else {
    AddressSpace::MapArgs m;
    m.object = Resolve(call, a.mem_id);
    if (!m.object) return NvError::kBadParameter;
    m.flags = a.flags;
    m.kind = kind_in;
    m.buffer_offset = a.buffer_offset;
    m.mapping_size = a.mapping_size;
    m.offset_or_align = a.offset_or_align;
    uint64_t va;
    e = as.Map(m, &va, &kind);
    if (e == NvError::kSuccess) a.offset_or_align = va;
  }
  if (e == NvError::kSuccess) a.kind = static_cast<uint32_t>(kind);
  return e;
}

abi::NvError AsDevice::Remap(Call& call, AddressSpace* space) {
  AddressSpace& as = *space;
  if (call.arrays.empty()) return NvError::kBadParameter;
  auto ops = call.Array<as::RemapOp>(0);
  std::vector<AddressSpace::RemapArgs> args(ops.size());
  absl::flat_hash_map<uint32_t, std::shared_ptr<NvmapObject>> resolved;
  for (size_t i = 0; i < ops.size(); i++) {
    args[i].op = ops[i];
    const uint32_t h = ops[i].mem_handle;
    if (h == 0) continue;
    auto [it, fresh] = resolved.try_emplace(h);
    if (fresh) it->second = Resolve(call, h);
    if (!it->second) return NvError::kBadParameter;
    args[i].object = it->second;
  }
  return as.Remap(args);
}

std::span<const IoctlHandler<AsDevice::Handler>> AsDevice::Handlers() {
  // `needs_space` false: the handler makes the address space (it gets null); true: it needs one
  // (NotInitialized before ALLOC_AS).
  static constexpr IoctlHandler<Handler> kTable[] = {
      {as::kAllocAs, {&AsDevice::HandleAllocAs, false}},
      {as::kAllocAsEx, {&AsDevice::HandleAllocAsEx, false}},
      {as::kBindChannel, {&AsDevice::BindChannel, true}},
      {as::kGetVaRegions, {&AsDevice::GetVaRegions, true}},
      {as::kAllocSpace, {&AsDevice::AllocSpace, true}},
      {as::kFreeSpace, {&AsDevice::FreeSpace, true}},
      {as::kMapBuffer, {&AsDevice::MapBuffer, true}},
      {as::kMapBufferEx, {&AsDevice::MapBufferEx, true}},
      {as::kMapBufferEx2, {&AsDevice::MapBufferEx, true}},
      {as::kUnmapBuffer, {&AsDevice::UnmapBuffer, true}},
      {as::kRemap, {&AsDevice::Remap, true}},
  };
  return kTable;
}

IoctlTableInfo AsDevice::Table() {
  // Every address-space ioctl that reaches a backend is served: none left unimplemented.
  static const std::vector<uint32_t> handled = BoundCodes(Handlers());
  return {handled, {}};
}

Result AsDevice::Ioctl(Call& call) {
  const IoctlHandler<Handler>* h = FindHandler(Handlers(), call.desc.code);
  if (h == nullptr) return Unimplemented(call);
  std::shared_ptr<AddressSpace> space;
  if (h->handle.needs_space) {
    space = address_space();
    if (!space) return Result::Done(NvError::kNotInitialized);
  }
  return Result::Done((this->*h->handle.fn)(call, space.get()));
}

NvError AsDevice::HandleAllocAs(Call& call, AddressSpace*) {
  const auto& a = ArgAs<as::AllocAs>(call.arg);
  return AllocAs(a.big_page_size, 0, 0, 0);
}

NvError AsDevice::HandleAllocAsEx(Call& call, AddressSpace*) {
  const auto& a = ArgAs<as::AllocAsEx>(call.arg);
  return AllocAs(a.big_page_size, a.va_range_start, a.va_range_split, a.va_range_end);
}

NvError AsDevice::AllocSpace(Call& call, AddressSpace* s) {
  auto& a = ArgAs<as::AllocSpace>(call.arg);
  return s->AllocSpace(a.pages, a.page_size, a.flags, &a.offset_or_align);
}

NvError AsDevice::FreeSpace(Call& call, AddressSpace* s) {
  const auto& a = ArgAs<as::FreeSpace>(call.arg);
  return s->FreeSpace(a.offset, a.pages, a.page_size);
}

NvError AsDevice::UnmapBuffer(Call& call, AddressSpace* s) {
  return s->Unmap(ArgAs<as::UnmapBuffer>(call.arg).offset);
}

}  // namespace nvsentry::hostshim::sim
