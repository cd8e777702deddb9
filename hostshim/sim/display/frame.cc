#include "hostshim/sim/display/frame.h"

#include "absl/strings/str_cat.h"
#include "hostshim/sim/memory/block_linear.h"

namespace nvsentry::hostshim::sim {
namespace {

// Frames larger than any panel the display offers are refused rather than converted.
constexpr uint32_t kMaxSide = 16384;

BlockLinearSurface SurfaceOf(const Frame& f) {
  BlockLinearSurface s;
  s.width = uint64_t{f.width} * BytesPerPixel(f.format);
  s.height = f.height;
  s.block_height_log2 = f.block_height_log2;
  return s;
}

// One pixel from its bytes `p` to R, G, B, A at `out`.
void Convert(PixelFormat format, const uint8_t* p, uint8_t* out) {
  switch (format) {
    case PixelFormat::kRgba8: out[0] = p[0], out[1] = p[1], out[2] = p[2], out[3] = p[3]; return;
    case PixelFormat::kBgra8: out[0] = p[2], out[1] = p[1], out[2] = p[0], out[3] = p[3]; return;
    case PixelFormat::kRgb565: {
      const uint16_t v = static_cast<uint16_t>(p[0] | (p[1] << 8));
      const uint32_t r = (v >> 11) & 31, g = (v >> 5) & 63, b = v & 31;
      // Widened by repeating the high bits, so 0 and full scale map to 0 and 255.
      out[0] = static_cast<uint8_t>((r << 3) | (r >> 2));
      out[1] = static_cast<uint8_t>((g << 2) | (g >> 4));
      out[2] = static_cast<uint8_t>((b << 3) | (b >> 2));
      out[3] = 255;
      return;
    }
  }
}

}  // namespace

uint32_t BytesPerPixel(PixelFormat f) { return f == PixelFormat::kRgb565 ? 2 : 4; }

uint64_t FrameBytes(const Frame& f) {
  if (f.width == 0 || f.height == 0 || f.width > kMaxSide || f.height > kMaxSide) return 0;
  const uint64_t row = uint64_t{f.width} * BytesPerPixel(f.format);
  if (f.block_linear) {
    if (f.block_height_log2 > kMaxBlockLog2) return 0;
    return SurfaceOf(f).SizeBytes();
  }
  if (f.pitch < row) return 0;
  return uint64_t{f.pitch} * (f.height - 1) + row;
}

absl::StatusOr<std::vector<uint8_t>> ToRgba(const Frame& f) {
  const uint64_t need = FrameBytes(f);
  if (need == 0)
    return absl::InvalidArgumentError(
        absl::StrCat("frame: invalid shape ", f.width, "x", f.height, " pitch ", f.pitch));
  if (f.bytes.size() < need)
    return absl::InvalidArgumentError(
        absl::StrCat("frame: ", f.bytes.size(), " bytes where its layout needs ", need));
  const uint32_t bpp = BytesPerPixel(f.format);
  const BlockLinearSurface s = SurfaceOf(f);
  std::vector<uint8_t> rgba(uint64_t{f.width} * f.height * 4);
  for (uint32_t y = 0; y < f.height; ++y) {
    for (uint32_t x = 0; x < f.width; ++x) {
      const uint64_t at =
          f.block_linear ? s.Offset(uint64_t{x} * bpp, y, 0) : uint64_t{y} * f.pitch + x * bpp;
      Convert(f.format, &f.bytes[at], &rgba[(uint64_t{y} * f.width + x) * 4]);
    }
  }
  return rgba;
}

}  // namespace nvsentry::hostshim::sim
