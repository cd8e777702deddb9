#include "hostshim/sim/display/frame_capture.h"

#include <array>
#include <atomic>
#include <memory>

#include "abi/devices/nvdisp.h"

namespace nvsentry::hostshim::sim {
namespace {

namespace nd = abi::nvdisp;

// Tegra's window formats are named from the most significant bits down (Linux's tegra DRM
// driver gives B5G6R5 for RGB565 and B8G8R8A8 for XRGB8888): in memory, B8G8R8A8 is B, G, R, A.
std::optional<PixelFormat> FormatOf(uint32_t format) {
  switch (format) {
    case nd::kFmtB5G6R5: return PixelFormat::kRgb565;
    case nd::kFmtB8G8R8A8: return PixelFormat::kBgra8;
    case nd::kFmtR8G8B8A8: return PixelFormat::kRgba8;
    default: return std::nullopt;
  }
}

}  // namespace

std::optional<Frame> CaptureWindow(uint32_t head, uint64_t vblank, const PresentedSurface& s) {
  const std::optional<PixelFormat> format = FormatOf(s.format);
  if (!format || !s.object) return std::nullopt;
  Frame f;
  f.display = static_cast<int>(head);
  f.window = static_cast<int>(s.window);
  f.sequence = vblank;
  f.format = *format;
  f.width = s.width;
  f.height = s.height;
  f.block_linear = s.block_linear;
  f.pitch = s.pitch;
  f.block_height_log2 = s.block_height_log2;
  const uint64_t size = FrameBytes(f);
  if (size == 0) return std::nullopt;
  const uint64_t row = uint64_t{s.width} * BytesPerPixel(*format);
  if (!s.block_linear && s.pitch > row) {
    // Only the bytes shown, row by row, packed: the pitch is the guest's to choose (only the
    // object's size bounds it), and the whole span was copied into the sentry at each flip (a
    // 4096-row surface with a 1 MiB pitch: 4 GiB, three windows of it 12).
    f.pitch = static_cast<uint32_t>(row);
    f.bytes.resize(row * s.height);
    for (uint32_t y = 0; y < s.height; ++y)
      if (!s.object->Read(s.offset + uint64_t{y} * s.pitch,
                          std::span(f.bytes.data() + y * row, row)))
        return std::nullopt;
    return f;
  }
  f.bytes.resize(size);
  if (!s.object->Read(s.offset, f.bytes)) return std::nullopt;
  return f;
}

FrameObserver CaptureFrames(std::function<void(Frame)> out, uint32_t every,
                            std::function<bool()> wanted) {
  if (every == 0) every = 1;
  auto flips = std::make_shared<std::array<std::atomic<uint64_t>, 2>>();
  return [out = std::move(out), every, wanted = std::move(wanted), flips](const PresentedFrame& p) {
    if ((*flips)[p.head & 1].fetch_add(1) % every != 0) return;
    for (const auto& [window, surface] : p.windows) {
      if (!surface || (wanted && !wanted())) continue;
      if (std::optional<Frame> f = CaptureWindow(p.head, p.vblank, *surface)) out(std::move(*f));
    }
  };
}

}  // namespace nvsentry::hostshim::sim
