// Field tables the guest's /dev/nvhost-ctrl-gpu (abi/devices/nvhost_ctrl_gpu.cc) and L4T's
// nvgpu ctrl node (abi/l4t/nvgpu_ctrl.cc) share byte for byte (zcull, ZBC, SM debug mode,
// WAIT_FOR_PAUSE's first form, the CPU/GPU time correlation): nvgpu's own layouts, which the
// guest ABI kept unchanged. One table each, so the two catalogues cannot drift apart; each
// catalogue still checks them against its own struct (NVS_CHECK_MEMBER).
#pragma once

#include "abi/catalogue.h"

namespace nvsentry::abi::nvgpu_shared {

inline constexpr Field kZcullCtxSizeFields[] = {
    {"size", 0, FieldType::kU32, 1, Dir::kOut, nullptr, false, Fmt::kHex}};
inline constexpr Field kZcullInfoFields[] = {
    {"width_align_pixels", 0, FieldType::kU32, 1, Dir::kOut},
    {"height_align_pixels", 4, FieldType::kU32, 1, Dir::kOut},
    {"pixel_squares_by_aliquots", 8, FieldType::kU32, 1, Dir::kOut},
    {"aliquot_total", 12, FieldType::kU32, 1, Dir::kOut},
    {"region_byte_multiplier", 16, FieldType::kU32, 1, Dir::kOut},
    {"region_header_size", 20, FieldType::kU32, 1, Dir::kOut},
    {"subregion_header_size", 24, FieldType::kU32, 1, Dir::kOut},
    {"subregion_width_align_pixels", 28, FieldType::kU32, 1, Dir::kOut},
    {"subregion_height_align_pixels", 32, FieldType::kU32, 1, Dir::kOut},
    {"subregion_count", 36, FieldType::kU32, 1, Dir::kOut},
};

// The rest, in the catalogues' own shorthand.
using enum FieldType;
inline constexpr Dir I = Dir::kIn, O = Dir::kOut, IO = Dir::kInOut;
inline constexpr Fmt H = Fmt::kHex;

inline constexpr Field kTimeSampleFields[] = {
    {"cpu_timestamp", 0, kU64, 1, O, nullptr, false, Fmt::kDec},
    {"gpu_timestamp", 8, kU64, 1, O, nullptr, false, Fmt::kDec}};
inline constexpr StructDesc kTimeSample{"time_correlation_sample", 16, kTimeSampleFields};
inline constexpr Field kZbcSetFields[] = {
    {"color_ds", 0, kU32, 4, I, nullptr, false, H},
    {"color_l2", 16, kU32, 4, I, nullptr, false, H},
    {"depth", 32, kU32, 1, I, nullptr, false, H},
    {"format", 36, kU32, 1, I},
    {"type", 40, kU32, 1, I},
};
inline constexpr Field kZbcQueryFields[] = {
    {"color_ds", 0, kU32, 4, O, nullptr, false, H},
    {"color_l2", 16, kU32, 4, O, nullptr, false, H},
    {"depth", 32, kU32, 1, O, nullptr, false, H},
    {"ref_cnt", 36, kU32, 1, O},
    {"format", 40, kU32, 1, O},
    {"type", 44, kU32, 1, I},
    {"index_size", 48, kU32, 1, IO},
};
inline constexpr Field kSmDebugModeFields[] = {{"channel_fd", 0, kS32, 1, I},
                                               {"enable", 4, kU32, 1, I},
                                               {"sms", 8, kU64, 1, I, nullptr, false, H}};
inline constexpr Field kWaitForPauseV1Fields[] = {{"pwarpstate", 0, kU64, 1, I, nullptr, false, H}};
inline constexpr Field kCpuTimeCorrelationFields[] = {{"samples", 0, kStruct, 16, O, &kTimeSample},
                                                      {"count", 256, kU32, 1, I},
                                                      {"source_id", 260, kU32, 1, I}};

}  // namespace nvsentry::abi::nvgpu_shared
