// A frame the simulated display presented: a window's surface as the guest laid it out in
// memory, copied when the flip took effect, and its conversion to plain RGBA rows for whoever
// records frames (sentry/core/frames.h).
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"

namespace nvsentry::hostshim::sim {

// The colour formats a frame is converted from (the display's window formats nvsentry knows).
enum class PixelFormat : uint8_t {
  kRgba8,   // bytes R, G, B, A
  kBgra8,   // bytes B, G, R, A
  kRgb565,  // little-endian 16 bits: R in 15:11, G in 10:5, B in 4:0
};
uint32_t BytesPerPixel(PixelFormat f);

struct Frame {
  int display = 0;        // 0: the internal panel
  int window = 0;         // the display's window that showed it
  uint64_t sequence = 0;  // the display's flip count when it took effect
  PixelFormat format = PixelFormat::kRgba8;
  uint32_t width = 0, height = 0;  // pixels
  // The layout of `bytes`: rows `pitch` bytes apart, or block-linear (a surface width of
  // width x bytes-per-pixel rounded up to whole GOBs, blocks 2^block_height_log2 GOBs tall).
  bool block_linear = false;
  uint32_t pitch = 0;
  uint32_t block_height_log2 = 0;
  std::vector<uint8_t> bytes;
};

// The bytes of `frame.bytes` a frame of this shape needs; 0 when the shape is invalid.
uint64_t FrameBytes(const Frame& frame);

// The frame as width x height pixels of RGBA (4 bytes each, rows packed). An error when the
// frame's bytes are fewer than its layout needs, or its shape is invalid.
absl::StatusOr<std::vector<uint8_t>> ToRgba(const Frame& frame);

}  // namespace nvsentry::hostshim::sim
