// L4T /dev/nvhost-ctrl-gpu (L4T r32.7.4 kernel/nvgpu include/uapi/linux/nvgpu.h,
// NVGPU_GPU_IOCTL_*, magic 'G'): GPU-wide queries, and the calls that make address spaces,
// channels and TSGs (each returns a new fd). Where the guest ABI returns data inline, several of
// these write it through a user pointer instead. LP64 layouts.
#pragma once

#include <cstdint>
#include <span>

#include "abi/catalogue.h"

namespace nvsentry::abi::l4t::nvgpu_ctrl {

constexpr uint32_t kZcullGetCtxSize = 0x80044701;
constexpr uint32_t kZcullGetInfo = 0x80284702;
constexpr uint32_t kZbcSetTable = 0x402C4703;
constexpr uint32_t kZbcQueryTable = 0xC0344704;
constexpr uint32_t kGetCharacteristics = 0xC0104705;
constexpr uint32_t kAllocAs = 0xC0104708;
constexpr uint32_t kOpenTsg = 0xC0084709;
constexpr uint32_t kGetTpcMasks = 0xC010470A;
constexpr uint32_t kOpenChannel = 0xC004470B;
constexpr uint32_t kFlushL2 = 0xC005470C;  // the argument is 5 bytes (a packed bitfield)
constexpr uint32_t kSetMmuDebugMode = 0xC008470E;
constexpr uint32_t kSetSmDebugMode = 0xC010470F;
constexpr uint32_t kWaitForPause = 0xC0084710;
constexpr uint32_t kGetTpcExceptionEnStatus = 0xC0084711;
constexpr uint32_t kNumVsms = 0xC0084712;
constexpr uint32_t kVsmsMapping = 0xC0084713;
constexpr uint32_t kGetCpuTimeCorrelationInfo = 0xC1084718;
constexpr uint32_t kGetGpuTime = 0xC0104719;
constexpr uint32_t kGetEngineInfo = 0xC010471A;

// nvgpu_gpu_characteristics as r32.7.4 lays it out (256 bytes). The guest's 0xA0-byte struct has
// the same first 56 bytes, then another order (gpc_mask before flags, chipname a u64 at 144).
struct GpuCharacteristics {
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
  uint64_t flags;
  uint32_t twod_class;
  uint32_t threed_class;
  uint32_t compute_class;
  uint32_t gpfifo_class;
  uint32_t inline_to_memory_class;
  uint32_t dma_copy_class;
  uint32_t gpc_mask;
  uint32_t sm_arch_sm_version;
  uint32_t sm_arch_spa_version;
  uint32_t sm_arch_warp_count;
  int16_t gpu_ioctl_nr_last;
  int16_t tsg_ioctl_nr_last;
  int16_t dbg_gpu_ioctl_nr_last;
  int16_t ioctl_channel_nr_last;
  int16_t as_ioctl_nr_last;
  uint8_t gpu_va_bit_count;
  uint8_t reserved;
  uint32_t max_fbps_count;
  uint32_t fbp_en_mask;
  uint32_t max_ltc_per_fbp;
  uint32_t max_lts_per_ltc;
  uint32_t max_tex_per_tpc;
  uint32_t max_gpc_count;
  uint32_t rop_l2_en_mask_deprecated[2];
  char chipname[8];
  uint32_t pad0;  // implicit in the header: the next u64 is 8-aligned
  uint64_t gr_compbit_store_base_hw;
  uint32_t gr_gobs_per_comptagline_per_slice;
  uint32_t num_ltc;
  uint32_t lts_per_ltc;
  uint32_t cbc_cache_line_size;
  uint32_t cbc_comptags_per_line;
  uint32_t map_buffer_batch_limit;
  uint64_t max_freq;
  uint32_t graphics_preemption_mode_flags;
  uint32_t compute_preemption_mode_flags;
  uint32_t default_graphics_preempt_mode;
  uint32_t default_compute_preempt_mode;
  uint64_t local_video_memory_size;
  uint16_t pci_vendor_id;
  uint16_t pci_device_id;
  uint16_t pci_subsystem_vendor_id;
  uint16_t pci_subsystem_device_id;
  uint16_t pci_class;
  uint8_t pci_revision;
  uint8_t vbios_oem_version;
  uint32_t vbios_version;
  uint32_t reg_ops_limit;
  uint32_t reserved1;
  int16_t event_ioctl_nr_last;
  uint16_t pad1;
  uint32_t max_css_buffer_size;
};
struct GetCharacteristics {
  uint64_t gpu_characteristics_buf_size;  // in: bytes at the address (0: size only); out: 256
  uint64_t gpu_characteristics_buf_addr;  // the kernel writes min(buf_size, 256) bytes here
};
struct AllocAs {
  uint32_t big_page_size;
  int32_t as_fd;   // out: a new address space fd
  uint32_t flags;  // bit 0 userspace-managed
  uint32_t reserved;
};
struct OpenTsg {
  uint32_t tsg_fd;  // out
  uint32_t reserved;
};
struct GetTpcMasks {
  uint32_t mask_buf_size;  // in: bytes at mask_buf_addr; out: the kernel's size
  uint32_t reserved;
  uint64_t mask_buf_addr;  // one u32 TPC mask per GPC
};
struct OpenChannel {
  int32_t channel_fd;  // in: runlist_id (-1: graphics); out: the new channel fd
};
struct [[gnu::packed]] FlushL2 {
  uint8_t flush;  // bit 0 l2_flush, bit 1 l2_invalidate, bit 2 fb_flush (a packed bitfield)
  uint32_t reserved;
};
struct MmuDebugMode {
  uint32_t state;
  uint32_t reserved;
};
struct SmDebugMode {
  int32_t channel_fd;
  uint32_t enable;
  uint64_t sms;
};
struct WarpState {  // one per SM at WAIT_FOR_PAUSE's pointer
  uint64_t valid_warps[2];
  uint64_t trapped_warps[2];
  uint64_t paused_warps[2];
};
struct WaitForPause {
  uint64_t pwarpstate;
};
struct TpcExceptionEnStatus {
  uint64_t tpc_exception_en_sm_mask;
};
struct NumVsms {
  uint32_t num_vsms;
  uint32_t reserved;
};
struct VsmsMappingEntry {  // one per SM at VSMS_MAPPING's pointer
  uint8_t gpc_index;
  uint8_t tpc_index;
};
struct VsmsMapping {
  uint64_t vsms_map_buf_addr;
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
struct GetGpuTime {
  uint64_t gpu_timestamp;
  uint64_t reserved;
};
struct GetEngineInfo {
  uint32_t engine_info_buf_size;  // in: bytes at the address; out: 16 x the engines
  uint32_t reserved;
  uint64_t engine_info_buf_addr;  // the kernel writes the items that fit here
};
// engine_id: 0 GR, 1 GR_COPY (a copy engine on the graphics runlist), 2 ASYNC_COPY.
struct EngineInfoItem {
  uint32_t engine_id;
  uint32_t engine_instance;
  int32_t runlist_id;
  uint32_t reserved;
};

std::span<const IoctlDesc> Ioctls();

}  // namespace nvsentry::abi::l4t::nvgpu_ctrl
