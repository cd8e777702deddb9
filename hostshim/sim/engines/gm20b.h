// The simulated GPU's fixed facts: what a Tegra X1 GM20B reports about itself through
// /dev/nvhost-ctrl-gpu. Values are Switchbrew's GM20B answers where Switchbrew gives them,
// otherwise what NVIDIA's Linux nvgpu driver derives for one GPC with two TPCs (one SM each).
#pragma once

#include <cstdint>

#include "abi/devices/nvhost_ctrl_gpu.h"

namespace nvsentry::hostshim::sim::gm20b {

inline constexpr uint32_t kNumGpc = 1;
inline constexpr uint32_t kTpcPerGpc = 2;
inline constexpr uint32_t kNumSm = kNumGpc * kTpcPerGpc;  // one SM per TPC on Maxwell
inline constexpr uint32_t kTpcMaskGpc0 = (1u << kTpcPerGpc) - 1;

inline constexpr uint32_t kClass2d = 0x902D;
inline constexpr uint32_t kClass3d = 0xB197;
inline constexpr uint32_t kClassCompute = 0xB1C0;
inline constexpr uint32_t kClassGpfifo = 0xB06F;
inline constexpr uint32_t kClassInlineToMemory = 0xA140;
inline constexpr uint32_t kClassDmaCopy = 0xB0B5;

// The CPU counter the time-correlation samples pair with PTIMER (CNTPCT_EL0 on the Tegra X1).
inline constexpr uint64_t kCpuCounterHz = 19'200'000;

// Every SM has its TPC exceptions enabled after GPU init (nvgpu enables them on all TPCs).
inline constexpr uint64_t kTpcExceptionEnSmMask = (1u << kNumSm) - 1;

// ZCULL_GET_CTX_SIZE: the real value comes from the FECS firmware, which the simulator does not
// run; public emulators answer 1, and nothing in the simulator reads the buffer.
inline constexpr uint32_t kZcullCtxSize = 1;

// ZBC_GET_ACTIVE_SLOT_MASK: Switchbrew gives slot 7; public emulators report mask 1.
inline constexpr uint32_t kZbcActiveSlot = 0x07;
inline constexpr uint32_t kZbcActiveMask = 0x01;

constexpr abi::nvhost_ctrl_gpu::GpuCharacteristics Characteristics() {
  abi::nvhost_ctrl_gpu::GpuCharacteristics c{};
  c.arch = 0x120;  // GM200 family
  c.impl = 0xB;    // GM20B
  c.rev = 0xA1;
  c.num_gpc = kNumGpc;
  c.l2_cache_size = 0x40000;
  c.on_board_video_memory_size = 0;  // unified memory
  c.num_tpc_per_gpc = kTpcPerGpc;
  c.bus_type = 0x20;  // AXI
  c.big_page_size = 0x20000;
  c.compression_page_size = 0x20000;
  c.pde_coverage_bit_count = 0x1B;
  c.available_big_page_sizes = 0x30000;  // 64 KiB | 128 KiB
  c.gpc_mask = 0x1;
  c.sm_arch_sm_version = 0x503;
  c.sm_arch_spa_version = 0x503;
  c.sm_arch_warp_count = 0x80;
  c.gpu_va_bit_count = 0x28;
  c.reserved = 0;
  // HAS_SYNCPOINTS | SUPPORT_SPARSE_ALLOCS | SUPPORT_CYCLE_STATS | SUPPORT_CYCLE_STATS_SNAPSHOT
  c.flags = 0x55;
  c.twod_class = kClass2d;
  c.threed_class = kClass3d;
  c.compute_class = kClassCompute;
  c.gpfifo_class = kClassGpfifo;
  c.inline_to_memory_class = kClassInlineToMemory;
  c.dma_copy_class = kClassDmaCopy;
  c.max_fbps_count = 1;
  c.fbp_en_mask = 0;
  c.max_ltc_per_fbp = 2;
  c.max_lts_per_ltc = 1;
  c.max_tex_per_tpc = 0;
  c.max_gpc_count = 1;
  c.rop_l2_en_mask_0 = 0x21D70;
  c.rop_l2_en_mask_1 = 0;
  c.chipname = 0x6230326D67;  // "gm20b", little-endian
  c.gr_compbit_store_base_hw = 0;
  return c;
}

// ZCULL geometry as nvgpu computes it for 1 GPC / 2 TPCs.
constexpr abi::nvhost_ctrl_gpu::ZcullGetInfo ZcullInfo() {
  abi::nvhost_ctrl_gpu::ZcullGetInfo z{};
  z.width_align_pixels = 16 * kTpcPerGpc * kNumGpc;
  z.height_align_pixels = 32;
  z.pixel_squares_by_aliquots = 0x400;
  z.aliquot_total = 0x800;
  z.region_byte_multiplier = 0x20 * kNumGpc;
  z.region_header_size = 0x20 * kNumGpc;
  z.subregion_header_size = 0xC0 * kNumGpc;
  z.subregion_width_align_pixels = 16 * kTpcPerGpc;
  z.subregion_height_align_pixels = 0x40;
  z.subregion_count = 0x10;
  return z;
}

}  // namespace nvsentry::hostshim::sim::gm20b
