// /dev/nvhost-ctrl-gpu: GPU-wide queries and controls that need no channel (Switchbrew).
#pragma once

#include <cstdint>
#include <span>

#include "abi/catalogue.h"

namespace nvsentry::abi::nvhost_ctrl_gpu {

constexpr uint32_t kZcullGetCtxSize = 0x80044701;
constexpr uint32_t kZcullGetInfo = 0x80284702;
constexpr uint32_t kZbcSetTable = 0x402C4703;
constexpr uint32_t kZbcQueryTable = 0xC0344704;
constexpr uint32_t kGetCharacteristics = 0xC0B04705;
constexpr uint32_t kGetTpcMasks = 0xC0184706;
constexpr uint32_t kFlushL2 = 0x40084707;
constexpr uint32_t kInvalIcache = 0x4008470D;
constexpr uint32_t kSetMmuDebugMode = 0x4008470E;
constexpr uint32_t kSetSmDebugMode = 0x4010470F;
constexpr uint32_t kWaitForPauseV1 = 0xC0084710;  // firmware before 6.1.0: a pointer
constexpr uint32_t kWaitForPause = 0xC0304710;    // 6.1.0+: the warp state inline
constexpr uint32_t kGetTpcExceptionEnStatus = 0x80084711;
constexpr uint32_t kNumVsms = 0x80084712;
constexpr uint32_t kVsmsMapping = 0xC0044713;
constexpr uint32_t kZbcGetActiveSlotMask = 0x80084714;
constexpr uint32_t kPmuGetGpuLoad = 0x80044715;
constexpr uint32_t kSetCgControls = 0x40084716;
constexpr uint32_t kGetCgControls = 0xC0084717;
constexpr uint32_t kSetPgControls = 0x40084718;
constexpr uint32_t kGetPgControls = 0xC0084719;
constexpr uint32_t kPmuGetElpgResidencyGating = 0x8018471A;
constexpr uint32_t kGetErrorChannelUserData = 0xC008471B;
constexpr uint32_t kGetGpuTime = 0xC010471C;
constexpr uint32_t kGetCpuTimeCorrelationInfo = 0xC108471D;

// Argument structs, as the guest lays them out.
struct ZcullGetCtxSize {
  uint32_t size;
};
struct ZcullGetInfo {
  uint32_t width_align_pixels;
  uint32_t height_align_pixels;
  uint32_t pixel_squares_by_aliquots;
  uint32_t aliquot_total;
  uint32_t region_byte_multiplier;
  uint32_t region_header_size;
  uint32_t subregion_header_size;
  uint32_t subregion_width_align_pixels;
  uint32_t subregion_height_align_pixels;
  uint32_t subregion_count;
};
struct ZbcSetTable {
  uint32_t color_ds[4];
  uint32_t color_l2[4];
  uint32_t depth;
  uint32_t format;
  uint32_t type;  // 1 color, 2 depth
};
struct ZbcQueryTable {
  uint32_t color_ds[4];
  uint32_t color_l2[4];
  uint32_t depth;
  uint32_t ref_cnt;
  uint32_t format;
  uint32_t type;
  uint32_t index_size;  // in and out
};
struct GpuCharacteristics {  // 0xA0 bytes
  uint32_t arch;
  uint32_t impl;
  uint32_t rev;
  uint32_t num_gpc;
  uint64_t l2_cache_size;
  uint64_t on_board_video_memory_size;
  uint32_t num_tpc_per_gpc;
  uint32_t bus_type;
  uint32_t big_page_size;
  uint32_t compression_page_size;
  uint32_t pde_coverage_bit_count;
  uint32_t available_big_page_sizes;
  uint32_t gpc_mask;
  uint32_t sm_arch_sm_version;
  uint32_t sm_arch_spa_version;
  uint32_t sm_arch_warp_count;
  uint32_t gpu_va_bit_count;
  uint32_t reserved;
  uint64_t flags;
  uint32_t twod_class;
  uint32_t threed_class;
  uint32_t compute_class;
  uint32_t gpfifo_class;
  uint32_t inline_to_memory_class;
  uint32_t dma_copy_class;
  uint32_t max_fbps_count;
  uint32_t fbp_en_mask;
  uint32_t max_ltc_per_fbp;
  uint32_t max_lts_per_ltc;
  uint32_t max_tex_per_tpc;
  uint32_t max_gpc_count;
  uint32_t rop_l2_en_mask_0;
  uint32_t rop_l2_en_mask_1;
  uint64_t chipname;  // ASCII, little-endian ("gm20b")
  uint64_t gr_compbit_store_base_hw;
};
struct GetCharacteristics {
  uint64_t gpu_characteristics_buf_size;  // in: nonzero; out: the size written
  uint64_t gpu_characteristics_buf_addr;  // nonzero, otherwise unused
  GpuCharacteristics gc;                  // out
};
struct GetTpcMasks {
  uint32_t mask_buf_size;  // nonzero, otherwise unused
  uint32_t reserved[3];
  uint64_t mask_buf;  // out: a 32-bit TPC mask per GPC
};
struct FlushL2 {
  uint32_t flush;  // bit 0 l2 flush, bit 1 l2 invalidate, bit 2 fb flush
  uint32_t reserved;
};
struct InvalIcache {
  int32_t channel_fd;
  uint32_t reserved;
};
struct SetMmuDebugMode {
  uint32_t state;
  uint32_t reserved;
};
struct SetSmDebugMode {
  int32_t channel_fd;
  uint32_t enable;
  uint64_t sms;
};
struct WaitForPauseV1 {
  uint64_t pwarpstate;  // guest pointer to the warp state
};
struct WaitForPause {
  uint64_t sm0_valid_warps;
  uint64_t sm0_trapped_warps;
  uint64_t sm0_paused_warps;
  uint64_t sm1_valid_warps;
  uint64_t sm1_trapped_warps;
  uint64_t sm1_paused_warps;
};
struct GetTpcExceptionEnStatus {
  uint64_t tpc_exception_en_sm_mask;
};
struct NumVsms {
  uint32_t num_vsms;
  uint32_t reserved;
};
struct VsmsMapping {
  uint8_t sm0_gpc_index;
  uint8_t sm0_tpc_index;
  uint8_t sm1_gpc_index;
  uint8_t sm1_tpc_index;
};
struct ZbcGetActiveSlotMask {
  uint32_t slot;
  uint32_t mask;
};
struct PmuGetGpuLoad {
  uint32_t pmu_gpu_load;
};
struct CgControls {  // SET_CG_CONTROLS and GET_CG_CONTROLS
  uint32_t cg_mask;
  uint32_t cg_value;
};
struct PgControls {  // SET_PG_CONTROLS and GET_PG_CONTROLS
  uint32_t pg_mask;
  uint32_t pg_value;
};
struct PmuGetElpgResidencyGating {
  uint64_t pg_ingating_time_us;
  uint64_t pg_ungating_time_us;
  uint64_t pg_gating_cnt;
};
struct GetErrorChannelUserData {
  uint64_t data;
};
struct GetGpuTime {
  uint64_t gpu_timestamp;
  uint64_t reserved;
};
struct TimeCorrelationSample {
  uint64_t cpu_timestamp;
  uint64_t gpu_timestamp;
};
struct GetCpuTimeCorrelationInfo {
  TimeCorrelationSample samples[16];
  uint32_t count;
  uint32_t source_id;
};

std::span<const IoctlDesc> Ioctls();

}  // namespace nvsentry::abi::nvhost_ctrl_gpu
