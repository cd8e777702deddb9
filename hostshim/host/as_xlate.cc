#include "hostshim/host/as_xlate.h"

#include <bit>

namespace nvsentry::hostshim::host {

namespace as = abi::nvhost_as_gpu;
namespace l4t = abi::l4t::nvgpu_as;
using abi::NvError;

namespace {

constexpr uint32_t kSmallPage = 0x1000;
constexpr uint64_t kGpuVaEnd = uint64_t{1} << 40;  // GM20B: 40-bit GPU VA
constexpr uint32_t kMapFixed = 1u << 0;

}  // namespace

NvError MapToHost(const GuestMap& g, const MapObject& o, HostMap* out) {
  if (g.flags & kGuestMapModify) return NvError::kNotSupported;
  if (!o.allocated) return NvError::kBadValue;
  if (g.kind != -1 && (g.kind < 0 || g.kind > 0xFF)) return NvError::kBadValue;
  const uint8_t kind = g.kind == -1 ? o.kind : static_cast<uint8_t>(g.kind);
  if (g.buffer_offset >= o.size) return NvError::kBadValue;
  const uint64_t size = g.mapping_size != 0 ? g.mapping_size : o.size - g.buffer_offset;
  if (size > o.size - g.buffer_offset) return NvError::kBadValue;
  const bool fixed = (g.flags & kMapFixed) != 0;
  // An anywhere mapping's alignment: 0 or a power of two (r32.7.4 aligns to the page size it
  // picks and takes no alignment; the guest's is checked, not passed).
  if (!fixed && g.offset_or_align != 0 && !std::has_single_bit(g.offset_or_align))
    return NvError::kBadValue;
  HostMap m;
  m.arg.flags = l4t::kMapDirectKindCtrl | (g.flags & kGuestMapFlagsPassed);
  m.arg.compr_kind = l4t::kKindInvalid;
  m.arg.incompr_kind = kind;
  m.arg.dmabuf_fd = o.twin;
  m.arg.page_size = 0;  // ignored by r32.7.4
  if (fixed) {
    m.arg.buffer_offset = g.buffer_offset;
    m.arg.mapping_size = size;
    m.arg.offset = g.offset_or_align;
  }
  m.size = size;
  m.buffer_offset = g.buffer_offset;
  m.kind = kind;
  m.partial = !fixed && (g.buffer_offset != 0 || size != o.size);
  *out = m;
  return NvError::kSuccess;
}

NvError CheckAsRequest(uint32_t big_page_size, uint64_t start, uint64_t split, uint64_t end) {
  if (big_page_size != 0 && big_page_size != 0x10000 && big_page_size != 0x20000)
    return NvError::kBadValue;
  if (start == 0 && split == 0 && end == 0) return NvError::kSuccess;
  const uint64_t big = big_page_size == 0 ? 0x20000 : big_page_size;
  if (start == 0 || start >= end || split < start || split > end || end > kGpuVaEnd ||
      start % big || split % big || end % big)
    return NvError::kBadValue;
  return NvError::kSuccess;
}

NvError AsRequestFitsHost(uint32_t big_page_size, uint64_t start, uint64_t split, uint64_t end,
                          std::span<const l4t::VaRegion> host) {
  const l4t::VaRegion* small = nullptr;
  const l4t::VaRegion* big = nullptr;
  for (const l4t::VaRegion& r : host) (r.page_size == kSmallPage ? small : big) = &r;
  if (big_page_size != 0 && (big == nullptr || big->page_size != big_page_size))
    return NvError::kNotSupported;
  if (start == 0 && split == 0 && end == 0) return NvError::kSuccess;
  if (small == nullptr || big == nullptr) return NvError::kNotSupported;
  const uint64_t small_end = small->offset + small->pages * small->page_size;
  const uint64_t big_end = big->offset + big->pages * big->page_size;
  if (start != small->offset || split != small_end || split != big->offset || end != big_end)
    return NvError::kNotSupported;
  return NvError::kSuccess;
}

void RegionsToGuest(std::span<const l4t::VaRegion> host, as::GetVaRegions* g) {
  static_assert(sizeof(as::VaRegion) == sizeof(l4t::VaRegion));
  for (size_t i = 0; i < std::size(g->regions); ++i) {
    g->regions[i] = {};
    if (i < host.size()) g->regions[i] = {host[i].offset, host[i].page_size, 0, host[i].pages};
  }
  g->buf_size = sizeof g->regions;
}

}  // namespace nvsentry::hostshim::host
