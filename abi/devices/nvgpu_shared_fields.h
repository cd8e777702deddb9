// Field tables the guest's /dev/nvhost-ctrl-gpu (abi/devices/nvhost_ctrl_gpu.cc) and L4T's
// nvgpu ctrl node (abi/l4t/nvgpu_ctrl.cc) share byte for byte: nvgpu's own layouts, which the
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

}  // namespace nvsentry::abi::nvgpu_shared
