#include "abi/devices/nvhost_ctrl_gpu.h"

#include "abi/devices/nvgpu_shared_fields.h"
#include "abi/layout_check.h"

namespace nvsentry::abi::nvhost_ctrl_gpu {
namespace {

using enum FieldType;
constexpr Dir I = Dir::kIn, O = Dir::kOut, IO = Dir::kInOut;
constexpr Fmt H = Fmt::kHex;

constexpr auto& kCtxSizeF = nvgpu_shared::kZcullCtxSizeFields;
constexpr auto& kZcullInfoF = nvgpu_shared::kZcullInfoFields;
constexpr auto& kZbcSetF = nvgpu_shared::kZbcSetFields;
constexpr auto& kZbcQueryF = nvgpu_shared::kZbcQueryFields;
constexpr Field kCharacteristicsF[] = {
    {"arch", 0, kU32, 1, O, nullptr, false, H},
    {"impl", 4, kU32, 1, O, nullptr, false, H},
    {"rev", 8, kU32, 1, O, nullptr, false, H},
    {"num_gpc", 12, kU32, 1, O},
    {"l2_cache_size", 16, kU64, 1, O},
    {"on_board_video_memory_size", 24, kU64, 1, O},
    {"num_tpc_per_gpc", 32, kU32, 1, O},
    {"bus_type", 36, kU32, 1, O, nullptr, false, H},
    {"big_page_size", 40, kU32, 1, O, nullptr, false, H},
    {"compression_page_size", 44, kU32, 1, O, nullptr, false, H},
    {"pde_coverage_bit_count", 48, kU32, 1, O},
    {"available_big_page_sizes", 52, kU32, 1, O, nullptr, false, H},
    {"gpc_mask", 56, kU32, 1, O, nullptr, false, H},
    {"sm_arch_sm_version", 60, kU32, 1, O, nullptr, false, H},
    {"sm_arch_spa_version", 64, kU32, 1, O, nullptr, false, H},
    {"sm_arch_warp_count", 68, kU32, 1, O},
    {"gpu_va_bit_count", 72, kU32, 1, O},
    {"reserved", 76, kU32, 1, O},
    {"flags", 80, kU64, 1, O, nullptr, false, H},
    {"twod_class", 88, kU32, 1, O, nullptr, false, H},
    {"threed_class", 92, kU32, 1, O, nullptr, false, H},
    {"compute_class", 96, kU32, 1, O, nullptr, false, H},
    {"gpfifo_class", 100, kU32, 1, O, nullptr, false, H},
    {"inline_to_memory_class", 104, kU32, 1, O, nullptr, false, H},
    {"dma_copy_class", 108, kU32, 1, O, nullptr, false, H},
    {"max_fbps_count", 112, kU32, 1, O},
    {"fbp_en_mask", 116, kU32, 1, O, nullptr, false, H},
    {"max_ltc_per_fbp", 120, kU32, 1, O},
    {"max_lts_per_ltc", 124, kU32, 1, O},
    {"max_tex_per_tpc", 128, kU32, 1, O},
    {"max_gpc_count", 132, kU32, 1, O},
    {"rop_l2_en_mask_0", 136, kU32, 1, O, nullptr, false, H},
    {"rop_l2_en_mask_1", 140, kU32, 1, O, nullptr, false, H},
    {"chipname", 144, kU64, 1, O, nullptr, false, H},
    {"gr_compbit_store_base_hw", 152, kU64, 1, O, nullptr, false, H},
};
constexpr StructDesc kCharacteristics{"gpu_characteristics", 0xA0, kCharacteristicsF};
constexpr Field kGetCharF[] = {
    {"gpu_characteristics_buf_size", 0, kU64, 1, IO, nullptr, false, H},
    {"gpu_characteristics_buf_addr", 8, kU64, 1, I, nullptr, false, H},
    {"gc", 16, kStruct, 1, O, &kCharacteristics},
};
constexpr ArrayDesc kGetCharArrays[] = {
    {"gc_out2", &kCharacteristics, O, Buffer::kOut2, CountFrom::kRest, 0, 1},
};
constexpr Field kTpcMaskF[] = {{"mask", 0, kU32, 1, O, nullptr, false, H}};
constexpr StructDesc kTpcMask{"tpc_mask", 4, kTpcMaskF};
constexpr Field kGetTpcMasksF[] = {
    {"mask_buf_size", 0, kU32, 1, I},
    {"reserved", 4, kU32, 3, I},
    {"mask_buf", 16, kU64, 1, O, nullptr, false, H},
};
constexpr ArrayDesc kGetTpcMasksArrays[] = {
    {"masks_out2", &kTpcMask, O, Buffer::kOut2, CountFrom::kRest, 0, 16},
};
constexpr Field kFlushL2F[] = {{"flush", 0, kU32, 1, I, nullptr, false, H},
                               {"reserved", 4, kU32, 1, I}};
constexpr Field kInvalIcacheF[] = {{"channel_fd", 0, kS32, 1, I}, {"reserved", 4, kU32, 1, I}};
constexpr Field kMmuDebugF[] = {{"state", 0, kU32, 1, I}, {"reserved", 4, kU32, 1, I}};
constexpr auto& kSmDebugF = nvgpu_shared::kSmDebugModeFields;
constexpr auto& kWaitForPauseV1F = nvgpu_shared::kWaitForPauseV1Fields;
constexpr Field kWaitForPauseF[] = {
    {"sm0_valid_warps", 0, kU64, 1, O, nullptr, false, H},
    {"sm0_trapped_warps", 8, kU64, 1, O, nullptr, false, H},
    {"sm0_paused_warps", 16, kU64, 1, O, nullptr, false, H},
    {"sm1_valid_warps", 24, kU64, 1, O, nullptr, false, H},
    {"sm1_trapped_warps", 32, kU64, 1, O, nullptr, false, H},
    {"sm1_paused_warps", 40, kU64, 1, O, nullptr, false, H},
};
constexpr Field kTpcExceptionF[] = {{"tpc_exception_en_sm_mask", 0, kU64, 1, O, nullptr, false, H}};
constexpr Field kNumVsmsF[] = {{"num_vsms", 0, kU32, 1, O}, {"reserved", 4, kU32, 1, O}};
constexpr Field kVsmsMappingF[] = {{"sm0_gpc_index", 0, kU8, 1, O},
                                   {"sm0_tpc_index", 1, kU8, 1, O},
                                   {"sm1_gpc_index", 2, kU8, 1, O},
                                   {"sm1_tpc_index", 3, kU8, 1, O}};
constexpr Field kSlotMaskF[] = {{"slot", 0, kU32, 1, O},
                                {"mask", 4, kU32, 1, O, nullptr, false, H}};
constexpr Field kGpuLoadF[] = {{"pmu_gpu_load", 0, kU32, 1, O}};
constexpr Field kSetCgF[] = {{"cg_mask", 0, kU32, 1, I, nullptr, false, H},
                             {"cg_value", 4, kU32, 1, I, nullptr, false, H}};
constexpr Field kGetCgF[] = {{"cg_mask", 0, kU32, 1, I, nullptr, false, H},
                             {"cg_value", 4, kU32, 1, O, nullptr, false, H}};
constexpr Field kSetPgF[] = {{"pg_mask", 0, kU32, 1, I, nullptr, false, H},
                             {"pg_value", 4, kU32, 1, I, nullptr, false, H}};
constexpr Field kGetPgF[] = {{"pg_mask", 0, kU32, 1, I, nullptr, false, H},
                             {"pg_value", 4, kU32, 1, O, nullptr, false, H}};
constexpr Field kElpgF[] = {{"pg_ingating_time_us", 0, kU64, 1, O, nullptr, false, Fmt::kDec},
                            {"pg_ungating_time_us", 8, kU64, 1, O, nullptr, false, Fmt::kDec},
                            {"pg_gating_cnt", 16, kU64, 1, O, nullptr, false, Fmt::kDec}};
constexpr Field kErrUserDataF[] = {{"data", 0, kU64, 1, O, nullptr, false, H}};
constexpr Field kGpuTimeF[] = {{"gpu_timestamp", 0, kU64, 1, O, nullptr, false, Fmt::kDec},
                               {"reserved", 8, kU64, 1, O}};
constexpr auto& kCpuTimeF = nvgpu_shared::kCpuTimeCorrelationFields;

constexpr FwRange kAlways{};
constexpr FwRange kBefore610{0, Fw(6, 1, 0)};
constexpr FwRange kFrom610{Fw(6, 1, 0)};
constexpr NvError kOk = NvError::kSuccess;

// libnx's nvioctlNvhostCtrlGpu_ZbcSetTable encodes it _NV_IOR (docs/guest-abi.md).
constexpr CodeAlias kZbcSetAliases[] = {{0x802C4703, "libnx nvioctlNvhostCtrlGpu_ZbcSetTable"}};

constexpr IoctlDesc kIoctls[] = {
    {kZcullGetCtxSize,
     "NVGPU_GPU_IOCTL_ZCULL_GET_CTX_SIZE",
     kCtxSizeF,
     kPure,
     {},
     0,
     kAlways,
     kOk,
     "Reports how many bytes a ZCULL context takes."},
    {kZcullGetInfo,
     "NVGPU_GPU_IOCTL_ZCULL_GET_INFO",
     kZcullInfoF,
     kPure,
     {},
     0,
     kAlways,
     kOk,
     "Reports ZCULL alignment, region and subregion parameters."},
    {kZbcSetTable,
     "NVGPU_GPU_IOCTL_ZBC_SET_TABLE",
     kZbcSetF,
     0,
     {},
     0,
     kAlways,
     kOk,
     "Adds a colour or depth clear value to the ZBC table.",
     kZbcSetAliases},
    {kZbcQueryTable,
     "NVGPU_GPU_IOCTL_ZBC_QUERY_TABLE",
     kZbcQueryF,
     kPure,
     {},
     0,
     kAlways,
     kOk,
     "Reads one ZBC table entry (by index) or the table size."},
    {kGetCharacteristics, "NVGPU_GPU_IOCTL_GET_CHARACTERISTICS", kGetCharF, kUsesIoctl3 | kPure,
     kGetCharArrays, 0, kAlways, kOk,
     "Reports the GPU's architecture, classes and limits inline (or in Ioctl3's second buffer)."},
    {kGetTpcMasks, "NVGPU_GPU_IOCTL_GET_TPC_MASKS", kGetTpcMasksF, kUsesIoctl3 | kPure,
     kGetTpcMasksArrays, 0, kAlways, kOk,
     "Reports the TPC mask of each GPC inline (or in Ioctl3's second buffer)."},
    {kFlushL2,
     "NVGPU_GPU_IOCTL_FLUSH_L2",
     kFlushL2F,
     0,
     {},
     0,
     kAlways,
     kOk,
     "Flushes and/or invalidates the L2 cache, optionally flushing the framebuffer."},
    {kInvalIcache,
     "NVGPU_GPU_IOCTL_INVAL_ICACHE",
     kInvalIcacheF,
     0,
     {},
     0,
     kAlways,
     kOk,
     "Invalidates the shader instruction cache for a channel."},
    {kSetMmuDebugMode,
     "NVGPU_GPU_IOCTL_SET_MMU_DEBUG_MODE",
     kMmuDebugF,
     0,
     {},
     0,
     kAlways,
     kOk,
     "Turns the GPU MMU debug mode on or off."},
    {kSetSmDebugMode,
     "NVGPU_GPU_IOCTL_SET_SM_DEBUG_MODE",
     kSmDebugF,
     0,
     {},
     0,
     kAlways,
     kOk,
     "Turns SM debug mode on or off for the selected SMs of a channel."},
    {kWaitForPauseV1,
     "NVGPU_GPU_IOCTL_WAIT_FOR_PAUSE",
     kWaitForPauseV1F,
     kMayBlock,
     {},
     0,
     kBefore610,
     kOk,
     "Waits for the SMs' warps to pause; writes their state through a pointer."},
    {kWaitForPause,
     "NVGPU_GPU_IOCTL_WAIT_FOR_PAUSE",
     kWaitForPauseF,
     kMayBlock,
     {},
     0,
     kFrom610,
     kOk,
     "Waits for the SMs' warps to pause; returns valid/trapped/paused masks per SM inline."},
    {kGetTpcExceptionEnStatus,
     "NVGPU_GPU_IOCTL_GET_TPC_EXCEPTION_EN_STATUS",
     kTpcExceptionF,
     kPure,
     {},
     0,
     kAlways,
     kOk,
     "Reports which SMs have TPC exceptions enabled."},
    {kNumVsms,
     "NVGPU_GPU_IOCTL_NUM_VSMS",
     kNumVsmsF,
     kPure,
     {},
     0,
     kAlways,
     kOk,
     "Reports how many SMs the GPU has."},
    {kVsmsMapping,
     "NVGPU_GPU_IOCTL_VSMS_MAPPING",
     kVsmsMappingF,
     kPure,
     {},
     0,
     kAlways,
     kOk,
     "Reports the GPC and TPC index of each of the two SMs."},
    {kZbcGetActiveSlotMask,
     "NVGPU_GPU_IOCTL_ZBC_GET_ACTIVE_SLOT_MASK",
     kSlotMaskF,
     kPure,
     {},
     0,
     kAlways,
     kOk,
     "Reports the ZBC slot and its mask of active entries."},
    {kPmuGetGpuLoad,
     "NVGPU_GPU_IOCTL_PMU_GET_GPU_LOAD",
     kGpuLoadF,
     kPure,
     {},
     0,
     kAlways,
     kOk,
     "Reports the GPU load the PMU measures."},
    {kSetCgControls,
     "NVGPU_GPU_IOCTL_SET_CG_CONTROLS",
     kSetCgF,
     0,
     {},
     0,
     kAlways,
     kOk,
     "Sets the masked clock-gating control bits."},
    {kGetCgControls,
     "NVGPU_GPU_IOCTL_GET_CG_CONTROLS",
     kGetCgF,
     kPure,
     {},
     0,
     kAlways,
     kOk,
     "Reads the masked clock-gating control bits."},
    {kSetPgControls,
     "NVGPU_GPU_IOCTL_SET_PG_CONTROLS",
     kSetPgF,
     0,
     {},
     0,
     kAlways,
     kOk,
     "Sets the masked power-gating control bits."},
    {kGetPgControls,
     "NVGPU_GPU_IOCTL_GET_PG_CONTROLS",
     kGetPgF,
     kPure,
     {},
     0,
     kAlways,
     kOk,
     "Reads the masked power-gating control bits."},
    {kPmuGetElpgResidencyGating,
     "NVGPU_GPU_IOCTL_PMU_GET_ELPG_RESIDENCY_GATING",
     kElpgF,
     kPure,
     {},
     0,
     kAlways,
     kOk,
     "Reports ELPG time gated, time ungated and the gating count."},
    {kGetErrorChannelUserData,
     "NVGPU_GPU_IOCTL_GET_ERROR_CHANNEL_USER_DATA",
     kErrUserDataF,
     kPure,
     {},
     0,
     kAlways,
     kOk,
     "Returns the user data of the channel that last faulted, if any."},
    {kGetGpuTime,
     "NVGPU_GPU_IOCTL_GET_GPU_TIME",
     kGpuTimeF,
     kPure,
     {},
     0,
     kAlways,
     kOk,
     "Reads the GPU's nanosecond timer (PTIMER)."},
    {kGetCpuTimeCorrelationInfo,
     "NVGPU_GPU_IOCTL_GET_CPU_TIME_CORRELATION_INFO",
     kCpuTimeF,
     kPure,
     {},
     0,
     kAlways,
     kOk,
     "Samples up to 16 paired CPU and GPU timestamps."},
};
static_assert(TableIsSound(kIoctls), "nvhost-ctrl-gpu layouts disagree with their codes");
static_assert(sizeof(ZcullGetCtxSize) == IocSize(kZcullGetCtxSize));
static_assert(sizeof(ZcullGetInfo) == IocSize(kZcullGetInfo));
static_assert(sizeof(ZbcSetTable) == IocSize(kZbcSetTable));
static_assert(sizeof(ZbcQueryTable) == IocSize(kZbcQueryTable));
static_assert(sizeof(GpuCharacteristics) == 0xA0);
static_assert(sizeof(GetCharacteristics) == IocSize(kGetCharacteristics));
static_assert(sizeof(GetTpcMasks) == IocSize(kGetTpcMasks));
static_assert(sizeof(FlushL2) == IocSize(kFlushL2));
static_assert(sizeof(InvalIcache) == IocSize(kInvalIcache));
static_assert(sizeof(SetMmuDebugMode) == IocSize(kSetMmuDebugMode));
static_assert(sizeof(SetSmDebugMode) == IocSize(kSetSmDebugMode));
static_assert(sizeof(WaitForPauseV1) == IocSize(kWaitForPauseV1));
static_assert(sizeof(WaitForPause) == IocSize(kWaitForPause));
static_assert(sizeof(GetTpcExceptionEnStatus) == IocSize(kGetTpcExceptionEnStatus));
static_assert(sizeof(NumVsms) == IocSize(kNumVsms));
static_assert(sizeof(VsmsMapping) == IocSize(kVsmsMapping));
static_assert(sizeof(ZbcGetActiveSlotMask) == IocSize(kZbcGetActiveSlotMask));
static_assert(sizeof(PmuGetGpuLoad) == IocSize(kPmuGetGpuLoad));
static_assert(sizeof(CgControls) == IocSize(kSetCgControls));
static_assert(sizeof(CgControls) == IocSize(kGetCgControls));
static_assert(sizeof(PgControls) == IocSize(kSetPgControls));
static_assert(sizeof(PgControls) == IocSize(kGetPgControls));
static_assert(sizeof(PmuGetElpgResidencyGating) == IocSize(kPmuGetElpgResidencyGating));
static_assert(sizeof(GetErrorChannelUserData) == IocSize(kGetErrorChannelUserData));
static_assert(sizeof(GetGpuTime) == IocSize(kGetGpuTime));
static_assert(sizeof(TimeCorrelationSample) == 16);
static_assert(sizeof(GetCpuTimeCorrelationInfo) == IocSize(kGetCpuTimeCorrelationInfo));

NVS_CHECK_MEMBER(kCtxSizeF, ZcullGetCtxSize, size);
NVS_CHECK_MEMBER(kZcullInfoF, ZcullGetInfo, width_align_pixels);
NVS_CHECK_MEMBER(kZcullInfoF, ZcullGetInfo, height_align_pixels);
NVS_CHECK_MEMBER(kZcullInfoF, ZcullGetInfo, pixel_squares_by_aliquots);
NVS_CHECK_MEMBER(kZcullInfoF, ZcullGetInfo, aliquot_total);
NVS_CHECK_MEMBER(kZcullInfoF, ZcullGetInfo, region_byte_multiplier);
NVS_CHECK_MEMBER(kZcullInfoF, ZcullGetInfo, region_header_size);
NVS_CHECK_MEMBER(kZcullInfoF, ZcullGetInfo, subregion_header_size);
NVS_CHECK_MEMBER(kZcullInfoF, ZcullGetInfo, subregion_width_align_pixels);
NVS_CHECK_MEMBER(kZcullInfoF, ZcullGetInfo, subregion_height_align_pixels);
NVS_CHECK_MEMBER(kZcullInfoF, ZcullGetInfo, subregion_count);
NVS_CHECK_MEMBER(kZbcSetF, ZbcSetTable, color_ds);
NVS_CHECK_MEMBER(kZbcSetF, ZbcSetTable, color_l2);
NVS_CHECK_MEMBER(kZbcSetF, ZbcSetTable, depth);
NVS_CHECK_MEMBER(kZbcSetF, ZbcSetTable, format);
NVS_CHECK_MEMBER(kZbcSetF, ZbcSetTable, type);
NVS_CHECK_MEMBER(kZbcQueryF, ZbcQueryTable, color_ds);
NVS_CHECK_MEMBER(kZbcQueryF, ZbcQueryTable, color_l2);
NVS_CHECK_MEMBER(kZbcQueryF, ZbcQueryTable, depth);
NVS_CHECK_MEMBER(kZbcQueryF, ZbcQueryTable, ref_cnt);
NVS_CHECK_MEMBER(kZbcQueryF, ZbcQueryTable, format);
NVS_CHECK_MEMBER(kZbcQueryF, ZbcQueryTable, type);
NVS_CHECK_MEMBER(kZbcQueryF, ZbcQueryTable, index_size);
NVS_CHECK_MEMBER(kGetCharF, GetCharacteristics, gpu_characteristics_buf_size);
NVS_CHECK_MEMBER(kGetCharF, GetCharacteristics, gpu_characteristics_buf_addr);
NVS_CHECK_MEMBER(kGetCharF, GetCharacteristics, gc);
NVS_CHECK_MEMBER(kGetTpcMasksF, GetTpcMasks, mask_buf_size);
NVS_CHECK_MEMBER(kGetTpcMasksF, GetTpcMasks, reserved);
NVS_CHECK_MEMBER(kGetTpcMasksF, GetTpcMasks, mask_buf);
NVS_CHECK_MEMBER(kFlushL2F, FlushL2, flush);
NVS_CHECK_MEMBER(kFlushL2F, FlushL2, reserved);
NVS_CHECK_MEMBER(kInvalIcacheF, InvalIcache, channel_fd);
NVS_CHECK_MEMBER(kInvalIcacheF, InvalIcache, reserved);
NVS_CHECK_MEMBER(kMmuDebugF, SetMmuDebugMode, state);
NVS_CHECK_MEMBER(kMmuDebugF, SetMmuDebugMode, reserved);
NVS_CHECK_MEMBER(kSmDebugF, SetSmDebugMode, channel_fd);
NVS_CHECK_MEMBER(kSmDebugF, SetSmDebugMode, enable);
NVS_CHECK_MEMBER(kSmDebugF, SetSmDebugMode, sms);
NVS_CHECK_MEMBER(kWaitForPauseV1F, WaitForPauseV1, pwarpstate);
NVS_CHECK_MEMBER(kWaitForPauseF, WaitForPause, sm0_valid_warps);
NVS_CHECK_MEMBER(kWaitForPauseF, WaitForPause, sm0_trapped_warps);
NVS_CHECK_MEMBER(kWaitForPauseF, WaitForPause, sm0_paused_warps);
NVS_CHECK_MEMBER(kWaitForPauseF, WaitForPause, sm1_valid_warps);
NVS_CHECK_MEMBER(kWaitForPauseF, WaitForPause, sm1_trapped_warps);
NVS_CHECK_MEMBER(kWaitForPauseF, WaitForPause, sm1_paused_warps);
NVS_CHECK_MEMBER(kTpcExceptionF, GetTpcExceptionEnStatus, tpc_exception_en_sm_mask);
NVS_CHECK_MEMBER(kNumVsmsF, NumVsms, num_vsms);
NVS_CHECK_MEMBER(kNumVsmsF, NumVsms, reserved);
NVS_CHECK_MEMBER(kVsmsMappingF, VsmsMapping, sm0_gpc_index);
NVS_CHECK_MEMBER(kVsmsMappingF, VsmsMapping, sm0_tpc_index);
NVS_CHECK_MEMBER(kVsmsMappingF, VsmsMapping, sm1_gpc_index);
NVS_CHECK_MEMBER(kVsmsMappingF, VsmsMapping, sm1_tpc_index);
NVS_CHECK_MEMBER(kSlotMaskF, ZbcGetActiveSlotMask, slot);
NVS_CHECK_MEMBER(kSlotMaskF, ZbcGetActiveSlotMask, mask);
NVS_CHECK_MEMBER(kGpuLoadF, PmuGetGpuLoad, pmu_gpu_load);
NVS_CHECK_MEMBER(kSetCgF, CgControls, cg_mask);
NVS_CHECK_MEMBER(kSetCgF, CgControls, cg_value);
NVS_CHECK_MEMBER(kGetCgF, CgControls, cg_mask);
NVS_CHECK_MEMBER(kGetCgF, CgControls, cg_value);
NVS_CHECK_MEMBER(kSetPgF, PgControls, pg_mask);
NVS_CHECK_MEMBER(kSetPgF, PgControls, pg_value);
NVS_CHECK_MEMBER(kGetPgF, PgControls, pg_mask);
NVS_CHECK_MEMBER(kGetPgF, PgControls, pg_value);
NVS_CHECK_MEMBER(kElpgF, PmuGetElpgResidencyGating, pg_ingating_time_us);
NVS_CHECK_MEMBER(kElpgF, PmuGetElpgResidencyGating, pg_ungating_time_us);
NVS_CHECK_MEMBER(kElpgF, PmuGetElpgResidencyGating, pg_gating_cnt);
NVS_CHECK_MEMBER(kErrUserDataF, GetErrorChannelUserData, data);
NVS_CHECK_MEMBER(kGpuTimeF, GetGpuTime, gpu_timestamp);
NVS_CHECK_MEMBER(kGpuTimeF, GetGpuTime, reserved);
NVS_CHECK_MEMBER(kCpuTimeF, GetCpuTimeCorrelationInfo, samples);
NVS_CHECK_MEMBER(kCpuTimeF, GetCpuTimeCorrelationInfo, count);
NVS_CHECK_MEMBER(kCpuTimeF, GetCpuTimeCorrelationInfo, source_id);

}  // namespace

std::span<const IoctlDesc> Ioctls() { return kIoctls; }

}  // namespace nvsentry::abi::nvhost_ctrl_gpu
