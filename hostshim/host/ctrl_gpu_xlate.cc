#include "hostshim/host/ctrl_gpu_xlate.h"

#include <cstring>

namespace nvsentry::hostshim::host {

namespace cg = abi::nvhost_ctrl_gpu;
namespace l4t = abi::l4t::nvgpu_ctrl;

cg::GpuCharacteristics CharacteristicsToGuest(const l4t::GpuCharacteristics& h) {
  cg::GpuCharacteristics g{};
  g.arch = h.arch;
  g.impl = h.impl;
  g.rev = h.rev;
  g.num_gpc = h.num_gpc;
  g.l2_cache_size = h.l2_cache_size;
  g.on_board_video_memory_size = h.on_board_video_memory_size;
  g.num_tpc_per_gpc = h.num_tpc_per_gpc;
  g.bus_type = h.bus_type;
  g.big_page_size = h.big_page_size;
  g.compression_page_size = h.compression_page_size;
  g.pde_coverage_bit_count = h.pde_coverage_bit_count;
  g.available_big_page_sizes = h.available_big_page_sizes;
  g.gpc_mask = h.gpc_mask;
  g.sm_arch_sm_version = h.sm_arch_sm_version;
  g.sm_arch_spa_version = h.sm_arch_spa_version;
  g.sm_arch_warp_count = h.sm_arch_warp_count;
  g.gpu_va_bit_count = h.gpu_va_bit_count;
  g.flags = h.flags & kGuestCharacteristicsFlags;
  g.twod_class = h.twod_class;
  g.threed_class = h.threed_class;
  g.compute_class = h.compute_class;
  g.gpfifo_class = h.gpfifo_class;
  g.inline_to_memory_class = h.inline_to_memory_class;
  g.dma_copy_class = h.dma_copy_class;
  g.max_fbps_count = h.max_fbps_count;
  g.fbp_en_mask = h.fbp_en_mask;
  g.max_ltc_per_fbp = h.max_ltc_per_fbp;
  g.max_lts_per_ltc = h.max_lts_per_ltc;
  g.max_tex_per_tpc = h.max_tex_per_tpc;
  g.max_gpc_count = h.max_gpc_count;
  g.rop_l2_en_mask_0 = h.rop_l2_en_mask_deprecated[0];
  g.rop_l2_en_mask_1 = h.rop_l2_en_mask_deprecated[1];
  static_assert(sizeof g.chipname == sizeof h.chipname);
  std::memcpy(&g.chipname, h.chipname, sizeof g.chipname);  // ASCII either way, little-endian
  g.gr_compbit_store_base_hw = h.gr_compbit_store_base_hw;
  return g;
}

uint64_t TpcMaskWord(std::span<const uint32_t> masks) {
  uint64_t w = masks.empty() ? 0 : masks[0];
  if (masks.size() > 1) w |= uint64_t{masks[1]} << 32;
  return w;
}

abi::NvError FlushL2ToHost(const cg::FlushL2& g, l4t::FlushL2* h) {
  constexpr uint32_t kL2Flush = 1u << 0, kL2Invalidate = 1u << 1, kFbFlush = 1u << 2;
  const uint32_t f = g.flush;
  if (!(f & kL2Flush) && (!(f & kFbFlush) || (f & kL2Invalidate)))
    return abi::NvError::kBadParameter;
  *h = {};
  h->flush = static_cast<uint8_t>(f & (kL2Flush | kL2Invalidate | kFbFlush));
  return abi::NvError::kSuccess;
}

cg::VsmsMapping VsmsToGuest(std::span<const l4t::VsmsMappingEntry> entries) {
  cg::VsmsMapping g{};
  if (!entries.empty()) {
    g.sm0_gpc_index = entries[0].gpc_index;
    g.sm0_tpc_index = entries[0].tpc_index;
  }
  if (entries.size() > 1) {
    g.sm1_gpc_index = entries[1].gpc_index;
    g.sm1_tpc_index = entries[1].tpc_index;
  }
  return g;
}

}  // namespace nvsentry::hostshim::host
