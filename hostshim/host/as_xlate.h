// The pure parts of the nvhost-as-gpu translation (as_session.cc, host_address_space.cc): the
// guest's requests checked as the simulated GPU checks them, then laid out for L4T r32.7
// (abi/l4t/nvgpu_as.h); the host's answers back into the guest's layout. No I/O.
#pragma once

#include <cstdint>
#include <span>

#include "abi/devices/nvhost_as_gpu.h"
#include "abi/l4t/nvgpu_as.h"
#include "abi/nverror.h"

namespace nvsentry::hostshim::host {

// A guest MAP_BUFFER, MAP_BUFFER_EX or MAP_BUFFER_EX2, in one shape.
struct GuestMap {
  uint32_t flags = 0;
  int32_t kind = -1;  // -1: the object's own
  uint64_t buffer_offset = 0;
  uint64_t mapping_size = 0;  // 0: to the end of the object
  uint64_t offset_or_align = 0;
};
// What the guest's object is, for the checks.
struct MapObject {
  bool allocated = false;
  uint64_t size = 0;
  uint8_t kind = 0;   // ALLOC's kind
  uint32_t twin = 0;  // the host handle of its twin
};
struct HostMap {
  abi::l4t::nvgpu_as::MapBufferEx arg{};
  uint64_t size = 0;           // bytes mapped (the sentry's record of the mapping)
  uint64_t buffer_offset = 0;  // where they start in the object
  uint8_t kind = 0;            // the kind the guest is told
  // r32.7.4 maps an anywhere mapping of the whole buffer only (L4T-AS-8): an anywhere map of part
  // of the object must be made at a fixed VA, in a reservation of the sentry's own.
  bool partial = false;
};

// The guest's flags the host sees: fixed offset and cacheable, the bits both ABIs share (the
// guest's bit 8, modify, is the host's DIRECT_KIND_CTRL).
inline constexpr uint32_t kGuestMapFlagsPassed = (1u << 0) | (1u << 2);
inline constexpr uint32_t kGuestMapModify = 1u << 8;

// MAP_BUFFER*: the simulator's checks (an allocated object, a kind of 0..255 or -1, the range
// inside the object, a power-of-two alignment), then MAP_BUFFER_EX with DIRECT_KIND_CTRL. The
// kind goes as incompr_kind with compr_kind NV_KIND_INVALID: the sentry never asks the host for
// comptags, which are shared by every client of the host's GPU. A fixed map passes its range and
// VA; an anywhere map passes none (r32.7.4 refuses them: L4T-AS-8) and maps the whole twin, or is
// `partial` when the guest asked for less. `page_size` is 0: r32.7.4 ignores it (L4T-AS-10).
// Modify has no r32.7.4 counterpart: NotSupported.
abi::NvError MapToHost(const GuestMap& g, const MapObject& o, HostMap* out);

// ALLOC_AS(_EX)'s request, checked as the simulator checks it: big_page_size 0, 64 or 128 KiB;
// the range all zero, or start < end, start <= split <= end, big-page aligned, start > 0,
// end <= 2^40. BadValue otherwise.
abi::NvError CheckAsRequest(uint32_t big_page_size, uint64_t start, uint64_t split, uint64_t end);
// Whether the host's address space (its regions, as GET_VA_REGIONS gives them) is what the
// checked request asks for: big_page_size 0 or the host's big page size; the range all zero or
// exactly the host's [small start, split, big end). NotSupported otherwise: an address space of
// the host is made by opening its node, with the host's default layout.
abi::NvError AsRequestFitsHost(uint32_t big_page_size, uint64_t start, uint64_t split, uint64_t end,
                               std::span<const abi::l4t::nvgpu_as::VaRegion> host);

// GET_VA_REGIONS: the host's regions (as many as it wrote, small pages first) into the guest's
// two inline ones; buf_size is the guest ABI's 2 regions, as the simulator answers.
void RegionsToGuest(std::span<const abi::l4t::nvgpu_as::VaRegion> host,
                    abi::nvhost_as_gpu::GetVaRegions* g);

}  // namespace nvsentry::hostshim::host
