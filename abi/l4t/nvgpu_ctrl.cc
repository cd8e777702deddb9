#include "abi/l4t/nvgpu_ctrl.h"

#include <cstddef>

#include "abi/devices/nvgpu_shared_fields.h"
#include "abi/l4t/elements.h"
#include "abi/layout_check.h"

namespace nvsentry::abi::l4t::nvgpu_ctrl {
namespace {

using enum FieldType;
constexpr Dir I = Dir::kIn, O = Dir::kOut, IO = Dir::kInOut, N = Dir::kNone;
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
    {"flags", 56, kU64, 1, O, nullptr, false, H},
    {"twod_class", 64, kU32, 1, O, nullptr, false, H},
    {"threed_class", 68, kU32, 1, O, nullptr, false, H},
    {"compute_class", 72, kU32, 1, O, nullptr, false, H},
    {"gpfifo_class", 76, kU32, 1, O, nullptr, false, H},
    {"inline_to_memory_class", 80, kU32, 1, O, nullptr, false, H},
    {"dma_copy_class", 84, kU32, 1, O, nullptr, false, H},
    {"gpc_mask", 88, kU32, 1, O, nullptr, false, H},
    {"sm_arch_sm_version", 92, kU32, 1, O, nullptr, false, H},
    {"sm_arch_spa_version", 96, kU32, 1, O, nullptr, false, H},
    {"sm_arch_warp_count", 100, kU32, 1, O},
    {"gpu_ioctl_nr_last", 104, kS16, 1, O},
    {"tsg_ioctl_nr_last", 106, kS16, 1, O},
    {"dbg_gpu_ioctl_nr_last", 108, kS16, 1, O},
    {"ioctl_channel_nr_last", 110, kS16, 1, O},
    {"as_ioctl_nr_last", 112, kS16, 1, O},
    {"gpu_va_bit_count", 114, kU8, 1, O},
    {"reserved", 115, kU8, 1, N},
    {"max_fbps_count", 116, kU32, 1, O},
    {"fbp_en_mask", 120, kU32, 1, O, nullptr, false, H},
    {"max_ltc_per_fbp", 124, kU32, 1, O},
    {"max_lts_per_ltc", 128, kU32, 1, O},
    {"max_tex_per_tpc", 132, kU32, 1, O},
    {"max_gpc_count", 136, kU32, 1, O},
    {"rop_l2_en_mask_deprecated", 140, kU32, 2, O, nullptr, false, H},
    {"chipname", 148, kChar, 8, O},
    {"pad0", 156, kU32, 1, N},
    {"gr_compbit_store_base_hw", 160, kU64, 1, O, nullptr, false, H},
    {"gr_gobs_per_comptagline_per_slice", 168, kU32, 1, O},
    {"num_ltc", 172, kU32, 1, O},
    {"lts_per_ltc", 176, kU32, 1, O},
    {"cbc_cache_line_size", 180, kU32, 1, O},
    {"cbc_comptags_per_line", 184, kU32, 1, O},
    {"map_buffer_batch_limit", 188, kU32, 1, O},
    {"max_freq", 192, kU64, 1, O, nullptr, false, Fmt::kDec},
    {"graphics_preemption_mode_flags", 200, kU32, 1, O, nullptr, false, H},
    {"compute_preemption_mode_flags", 204, kU32, 1, O, nullptr, false, H},
    {"default_graphics_preempt_mode", 208, kU32, 1, O, nullptr, false, H},
    {"default_compute_preempt_mode", 212, kU32, 1, O, nullptr, false, H},
    {"local_video_memory_size", 216, kU64, 1, O},
    {"pci_vendor_id", 224, kU16, 1, O, nullptr, false, H},
    {"pci_device_id", 226, kU16, 1, O, nullptr, false, H},
    {"pci_subsystem_vendor_id", 228, kU16, 1, O, nullptr, false, H},
    {"pci_subsystem_device_id", 230, kU16, 1, O, nullptr, false, H},
    {"pci_class", 232, kU16, 1, O, nullptr, false, H},
    {"pci_revision", 234, kU8, 1, O},
    {"vbios_oem_version", 235, kU8, 1, O},
    {"vbios_version", 236, kU32, 1, O, nullptr, false, H},
    {"reg_ops_limit", 240, kU32, 1, O},
    {"reserved1", 244, kU32, 1, N},
    {"event_ioctl_nr_last", 248, kS16, 1, O},
    {"pad1", 250, kU16, 1, N},
    {"max_css_buffer_size", 252, kU32, 1, O},
};
constexpr StructDesc kCharacteristics{"nvgpu_gpu_characteristics", 256, kCharacteristicsF};
constexpr Field kGetCharF[] = {{"gpu_characteristics_buf_size", 0, kU64, 1, IO},
                               {"gpu_characteristics_buf_addr", 8, kU64, 1, I, nullptr, false, H}};
constexpr UserPtrDesc kGetCharP[] = {
    {"characteristics", 8, &kCharacteristics, O, PtrCount::kBytes, 0, 1}};
constexpr Field kAllocAsF[] = {{"big_page_size", 0, kU32, 1, I, nullptr, false, H},
                               {"as_fd", 4, kS32, 1, O},
                               {"flags", 8, kU32, 1, I, nullptr, false, H},
                               {"reserved", 12, kU32, 1, N}};
constexpr Field kOpenTsgF[] = {{"tsg_fd", 0, kU32, 1, O}, {"reserved", 4, kU32, 1, N}};
constexpr Field kTpcMasksF[] = {{"mask_buf_size", 0, kU32, 1, IO},
                                {"reserved", 4, kU32, 1, N},
                                {"mask_buf_addr", 8, kU64, 1, I, nullptr, false, H}};
constexpr UserPtrDesc kTpcMasksP[] = {{"tpc_masks", 8, &kU32Elem, O, PtrCount::kBytes, 0, 32}};
constexpr Field kOpenChannelF[] = {{"channel_fd", 0, kS32, 1, O},
                                   {"runlist_id", 0, kS32, 1, I, nullptr, true}};
constexpr Field kFlushL2F[] = {{"flush", 0, kU8, 1, I, nullptr, false, H},
                               {"reserved", 1, kU32, 1, N}};
constexpr Field kMmuDebugF[] = {{"state", 0, kU32, 1, I}, {"reserved", 4, kU32, 1, N}};
constexpr auto& kSmDebugF = nvgpu_shared::kSmDebugModeFields;
constexpr Field kWarpStateF[] = {{"valid_warps", 0, kU64, 2, O, nullptr, false, H},
                                 {"trapped_warps", 16, kU64, 2, O, nullptr, false, H},
                                 {"paused_warps", 32, kU64, 2, O, nullptr, false, H}};
constexpr StructDesc kWarpState{"warpstate", 48, kWarpStateF};
constexpr auto& kWaitPauseF = nvgpu_shared::kWaitForPauseV1Fields;
// One warpstate per SM (NUM_VSMS says how many).
constexpr UserPtrDesc kWaitPauseP[] = {
    {"warpstate", 0, &kWarpState, O, PtrCount::kImplied, 0, 128}};
constexpr Field kTpcExcF[] = {{"tpc_exception_en_sm_mask", 0, kU64, 1, IO, nullptr, false, H}};
constexpr Field kNumVsmsF[] = {{"num_vsms", 0, kU32, 1, O}, {"reserved", 4, kU32, 1, N}};
constexpr Field kVsmsEntryF[] = {{"gpc_index", 0, kU8, 1, O}, {"tpc_index", 1, kU8, 1, O}};
constexpr StructDesc kVsmsEntry{"vsms_mapping_entry", 2, kVsmsEntryF};
constexpr Field kVsmsF[] = {{"vsms_map_buf_addr", 0, kU64, 1, I, nullptr, false, H}};
constexpr UserPtrDesc kVsmsP[] = {{"map", 0, &kVsmsEntry, O, PtrCount::kImplied, 0, 128}};
constexpr auto& kCorrelationF = nvgpu_shared::kCpuTimeCorrelationFields;
constexpr Field kGpuTimeF[] = {{"gpu_timestamp", 0, kU64, 1, O, nullptr, false, Fmt::kDec},
                               {"reserved", 8, kU64, 1, N}};
constexpr Field kEngineInfoF[] = {{"engine_info_buf_size", 0, kU32, 1, IO},
                                  {"reserved", 4, kU32, 1, N},
                                  {"engine_info_buf_addr", 8, kU64, 1, I, nullptr, false, H}};
constexpr Field kEngineItemF[] = {{"engine_id", 0, kU32, 1, O},
                                  {"engine_instance", 4, kU32, 1, O},
                                  {"runlist_id", 8, kS32, 1, O},
                                  {"reserved", 12, kU32, 1, N}};
constexpr StructDesc kEngineItem{"engine_info_item", 16, kEngineItemF};
constexpr UserPtrDesc kEngineInfoP[] = {{"engines", 8, &kEngineItem, O, PtrCount::kBytes, 0, 16}};

constexpr IoctlDesc Row(uint32_t code, std::string_view name, std::span<const Field> fields,
                        uint32_t flags, std::string_view summary,
                        std::span<const UserPtrDesc> ptrs = {}) {
  return {code, name, fields, flags, {}, 0, {}, NvError::kSuccess, summary, {}, ptrs};
}

constexpr IoctlDesc kIoctls[] = {
    Row(kZcullGetCtxSize, "NVGPU_GPU_IOCTL_ZCULL_GET_CTX_SIZE", kCtxSizeF, kPure,
        "The size of a zcull context buffer."),
    Row(kZcullGetInfo, "NVGPU_GPU_IOCTL_ZCULL_GET_INFO", kZcullInfoF, kPure,
        "The zcull unit's geometry."),
    Row(kZbcSetTable, "NVGPU_GPU_IOCTL_ZBC_SET_TABLE", kZbcSetF, 0,
        "Adds a zero-bandwidth-clear colour or depth entry."),
    Row(kZbcQueryTable, "NVGPU_GPU_IOCTL_ZBC_QUERY_TABLE", kZbcQueryF, kPure,
        "Reads a zero-bandwidth-clear entry."),
    Row(kGetCharacteristics, "NVGPU_GPU_IOCTL_GET_CHARACTERISTICS", kGetCharF, kPure,
        "Writes min(buf_size, 256) bytes of nvgpu_gpu_characteristics at buf_addr; returns 256.",
        kGetCharP),
    Row(kAllocAs, "NVGPU_GPU_IOCTL_ALLOC_AS", kAllocAsF, 0,
        "A new address space with `big_page_size`; returns its fd."),
    Row(kOpenTsg, "NVGPU_GPU_IOCTL_OPEN_TSG", kOpenTsgF, 0,
        "A new timeslice group; returns its fd (scheduling and events live there)."),
    Row(kGetTpcMasks, "NVGPU_GPU_IOCTL_GET_TPC_MASKS", kTpcMasksF, kPure,
        "Writes one u32 TPC mask per GPC at mask_buf_addr (min of both sizes); returns its size.",
        kTpcMasksP),
    Row(kOpenChannel, "NVGPU_GPU_IOCTL_OPEN_CHANNEL", kOpenChannelF, 0,
        "A new channel on runlist `runlist_id`; returns its fd."),
    Row(kFlushL2, "NVGPU_GPU_IOCTL_FLUSH_L2", kFlushL2F, 0,
        "Flushes (bit 0), invalidates (bit 1) the L2 and flushes the FB (bit 2)."),
    Row(kSetMmuDebugMode, "NVGPU_GPU_IOCTL_SET_MMUDEBUG_MODE", kMmuDebugF, 0,
        "Turns the MMU debug mode on or off."),
    Row(kSetSmDebugMode, "NVGPU_GPU_IOCTL_SET_SM_DEBUG_MODE", kSmDebugF, 0,
        "Turns the SM debug mode of a channel's SMs on or off."),
    Row(kWaitForPause, "NVGPU_GPU_IOCTL_WAIT_FOR_PAUSE", kWaitPauseF, 0,
        "Writes one warpstate per SM at `pwarpstate`.", kWaitPauseP),
    Row(kGetTpcExceptionEnStatus, "NVGPU_GPU_IOCTL_GET_TPC_EXCEPTION_EN_STATUS", kTpcExcF, kPure,
        "Which SMs have TPC exceptions enabled."),
    Row(kNumVsms, "NVGPU_GPU_IOCTL_NUM_VSMS", kNumVsmsF, kPure, "The number of SMs."),
    Row(kVsmsMapping, "NVGPU_GPU_IOCTL_VSMS_MAPPING", kVsmsF, kPure,
        "Writes one {gpc, tpc} entry per SM at vsms_map_buf_addr.", kVsmsP),
    Row(kGetCpuTimeCorrelationInfo, "NVGPU_GPU_IOCTL_GET_CPU_TIME_CORRELATION_INFO", kCorrelationF,
        kPure, "`count` pairs of CPU and GPU timestamps."),
    Row(kGetGpuTime, "NVGPU_GPU_IOCTL_GET_GPU_TIME", kGpuTimeF, kPure, "The GPU timer."),
    Row(kGetEngineInfo, "NVGPU_GPU_IOCTL_GET_ENGINE_INFO", kEngineInfoF, kPure,
        "The GPU's engines, one 16-byte item each, at `engine_info_buf_addr`.", kEngineInfoP),
};
static_assert(TableIsSound(kIoctls), "L4T nvhost-ctrl-gpu layouts disagree with their codes");
static_assert(sizeof(GpuCharacteristics) == 256);
static_assert(sizeof(GetCharacteristics) == IocSize(kGetCharacteristics));
static_assert(sizeof(AllocAs) == IocSize(kAllocAs));
static_assert(sizeof(OpenTsg) == IocSize(kOpenTsg));
static_assert(sizeof(GetTpcMasks) == IocSize(kGetTpcMasks));
static_assert(sizeof(OpenChannel) == IocSize(kOpenChannel));
static_assert(sizeof(FlushL2) == IocSize(kFlushL2));
static_assert(sizeof(MmuDebugMode) == IocSize(kSetMmuDebugMode));
static_assert(sizeof(SmDebugMode) == IocSize(kSetSmDebugMode));
static_assert(sizeof(WarpState) == 48);
static_assert(sizeof(WaitForPause) == IocSize(kWaitForPause));
static_assert(sizeof(TpcExceptionEnStatus) == IocSize(kGetTpcExceptionEnStatus));
static_assert(sizeof(NumVsms) == IocSize(kNumVsms));
static_assert(sizeof(VsmsMappingEntry) == 2);
static_assert(sizeof(VsmsMapping) == IocSize(kVsmsMapping));
static_assert(sizeof(GetCpuTimeCorrelationInfo) == IocSize(kGetCpuTimeCorrelationInfo));
static_assert(sizeof(GetGpuTime) == IocSize(kGetGpuTime));
static_assert(sizeof(GetEngineInfo) == IocSize(kGetEngineInfo));
static_assert(sizeof(EngineInfoItem) == 16);

NVS_CHECK_MEMBER(kCharacteristicsF, GpuCharacteristics, l2_cache_size);
NVS_CHECK_MEMBER(kCharacteristicsF, GpuCharacteristics, available_big_page_sizes);
NVS_CHECK_MEMBER(kCharacteristicsF, GpuCharacteristics, flags);
NVS_CHECK_MEMBER(kCharacteristicsF, GpuCharacteristics, twod_class);
NVS_CHECK_MEMBER(kCharacteristicsF, GpuCharacteristics, dma_copy_class);
NVS_CHECK_MEMBER(kCharacteristicsF, GpuCharacteristics, gpc_mask);
NVS_CHECK_MEMBER(kCharacteristicsF, GpuCharacteristics, sm_arch_warp_count);
NVS_CHECK_MEMBER(kCharacteristicsF, GpuCharacteristics, gpu_ioctl_nr_last);
NVS_CHECK_MEMBER(kCharacteristicsF, GpuCharacteristics, as_ioctl_nr_last);
NVS_CHECK_MEMBER(kCharacteristicsF, GpuCharacteristics, gpu_va_bit_count);
NVS_CHECK_MEMBER(kCharacteristicsF, GpuCharacteristics, max_fbps_count);
NVS_CHECK_MEMBER(kCharacteristicsF, GpuCharacteristics, max_gpc_count);
NVS_CHECK_MEMBER(kCharacteristicsF, GpuCharacteristics, rop_l2_en_mask_deprecated);
NVS_CHECK_MEMBER(kCharacteristicsF, GpuCharacteristics, chipname);
NVS_CHECK_MEMBER(kCharacteristicsF, GpuCharacteristics, pad0);
NVS_CHECK_MEMBER(kCharacteristicsF, GpuCharacteristics, gr_compbit_store_base_hw);
NVS_CHECK_MEMBER(kCharacteristicsF, GpuCharacteristics, map_buffer_batch_limit);
NVS_CHECK_MEMBER(kCharacteristicsF, GpuCharacteristics, max_freq);
NVS_CHECK_MEMBER(kCharacteristicsF, GpuCharacteristics, local_video_memory_size);
NVS_CHECK_MEMBER(kCharacteristicsF, GpuCharacteristics, pci_vendor_id);
NVS_CHECK_MEMBER(kCharacteristicsF, GpuCharacteristics, pci_revision);
NVS_CHECK_MEMBER(kCharacteristicsF, GpuCharacteristics, vbios_version);
NVS_CHECK_MEMBER(kCharacteristicsF, GpuCharacteristics, reg_ops_limit);
NVS_CHECK_MEMBER(kCharacteristicsF, GpuCharacteristics, event_ioctl_nr_last);
NVS_CHECK_MEMBER(kCharacteristicsF, GpuCharacteristics, max_css_buffer_size);
NVS_CHECK_MEMBER(kGetCharF, GetCharacteristics, gpu_characteristics_buf_size);
NVS_CHECK_MEMBER(kGetCharF, GetCharacteristics, gpu_characteristics_buf_addr);
NVS_CHECK_MEMBER(kAllocAsF, AllocAs, as_fd);
NVS_CHECK_MEMBER(kAllocAsF, AllocAs, flags);
NVS_CHECK_MEMBER(kOpenTsgF, OpenTsg, tsg_fd);
NVS_CHECK_MEMBER(kTpcMasksF, GetTpcMasks, mask_buf_size);
NVS_CHECK_MEMBER(kTpcMasksF, GetTpcMasks, mask_buf_addr);
NVS_CHECK_MEMBER(kOpenChannelF, OpenChannel, channel_fd);
NVS_CHECK_MEMBER(kFlushL2F, FlushL2, flush);
NVS_CHECK_MEMBER(kFlushL2F, FlushL2, reserved);
NVS_CHECK_MEMBER(kSmDebugF, SmDebugMode, enable);
NVS_CHECK_MEMBER(kSmDebugF, SmDebugMode, sms);
NVS_CHECK_MEMBER(kWarpStateF, WarpState, trapped_warps);
NVS_CHECK_MEMBER(kWarpStateF, WarpState, paused_warps);
NVS_CHECK_MEMBER(kVsmsEntryF, VsmsMappingEntry, tpc_index);
NVS_CHECK_MEMBER(kCorrelationF, GetCpuTimeCorrelationInfo, count);
NVS_CHECK_MEMBER(kCorrelationF, GetCpuTimeCorrelationInfo, source_id);
NVS_CHECK_MEMBER(kGpuTimeF, GetGpuTime, reserved);
NVS_CHECK_MEMBER(kEngineInfoF, GetEngineInfo, engine_info_buf_addr);
NVS_CHECK_MEMBER(kEngineItemF, EngineInfoItem, runlist_id);

}  // namespace

std::span<const IoctlDesc> Ioctls() { return kIoctls; }

}  // namespace nvsentry::abi::l4t::nvgpu_ctrl
