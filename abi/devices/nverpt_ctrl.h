// /dev/nverpt-ctrl: telemetry submissions that become error reports (firmware 3.0.0+).
#pragma once

#include <span>

#include "abi/catalogue.h"

namespace nvsentry::abi::nverpt_ctrl {

constexpr uint32_t kTelemetrySubmitData = 0xC1280701;
constexpr uint32_t kTelemetrySubmitDisplayData = 0xCF580702;

// Argument structs, as the guest lays them out (natural alignment; the implicit holes are
// written out as padding members).
struct TelemetrySubmitData {
  uint64_t test_u64;
  uint32_t test_u32;
  uint8_t padding0[4];
  int64_t test_i64;
  int32_t test_i32;
  char test_string[32];
  uint8_t test_u8_array[8];
  uint32_t test_u8_array_size;
  uint32_t test_u32_array[8];
  uint32_t test_u32_array_size;
  uint8_t align0[4];  // before the u64 array
  uint64_t test_u64_array[8];
  uint32_t test_u64_array_size;
  int32_t test_i32_array[8];
  uint32_t test_i32_array_size;
  int64_t test_i64_array[8];
  uint32_t test_i64_array_size;
  uint16_t test_u16;
  uint8_t test_u8;
  uint8_t align1;  // before the s16
  int16_t test_i16;
  int8_t test_i8;
  uint8_t padding1[5];
};
struct TelemetrySubmitDisplayData {
  uint32_t codec_type;
  uint32_t decode_buffers;
  uint32_t frame_width;
  uint32_t frame_height;
  uint8_t color_primaries;
  uint8_t transfer_characteristics;
  uint8_t matrix_coefficients;
  uint8_t padding;
  uint32_t display_width;
  uint32_t display_height;
  uint32_t dar_width;
  uint32_t dar_height;
  uint32_t color_format;
  uint32_t color_space[8];
  uint32_t color_space_size;
  uint32_t surface_layout[8];
  uint32_t surface_layout_size;
  char error_string[64];
  uint32_t video_dec_state;
  uint8_t video_log[3712];
  uint32_t video_log_size;
  // Switchbrew's members end at 3896 bytes; the code encodes 3928. The rest is not described.
  uint8_t unknown[32];
};

std::span<const IoctlDesc> Ioctls();

}  // namespace nvsentry::abi::nverpt_ctrl
