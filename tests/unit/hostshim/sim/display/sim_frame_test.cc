// Frames converted to RGBA from each format and layout, with the expected pixels worked out here.
#include <gtest/gtest.h>

#include "abi/devices/nvdisp.h"
#include "hostshim/budget.h"
#include "hostshim/sim/display/frame.h"
#include "hostshim/sim/display/frame_capture.h"
#include "hostshim/sim/memory/nvmap.h"

namespace nvsentry::hostshim::sim {
namespace {

// Byte x of row y of a one-GOB-wide, one-GOB-tall block-linear surface, from the GOB formula as
// the Tegra X1 TRM states it, written out here on its own: bits x5 y2 y1 x4 y0 x3 x2 x1 x0.
uint32_t TrmOffset(uint32_t x, uint32_t y) {
  return ((x >> 5) & 1) << 8 | ((y >> 2) & 1) << 7 | ((y >> 1) & 1) << 6 | ((x >> 4) & 1) << 5 |
         (y & 1) << 4 | (x & 15);
}

TEST(SimFrame, PitchFormatsBecomeRgba) {
  Frame f;
  f.width = 2;
  f.height = 1;
  f.pitch = 8;
  f.format = PixelFormat::kBgra8;
  f.bytes = {1, 2, 3, 4, 5, 6, 7, 8};
  auto rgba = ToRgba(f);
  ASSERT_TRUE(rgba.ok()) << rgba.status();
  EXPECT_EQ(*rgba, (std::vector<uint8_t>{3, 2, 1, 4, 7, 6, 5, 8}));
  f.format = PixelFormat::kRgba8;
  EXPECT_EQ(*ToRgba(f), (std::vector<uint8_t>{1, 2, 3, 4, 5, 6, 7, 8}));
  // RGB565: pure red, pure green, pure blue, white, with padding at the end of the row.
  f.format = PixelFormat::kRgb565;
  f.width = 4;
  f.pitch = 10;
  f.bytes = {0x00, 0xF8, 0xE0, 0x07, 0x1F, 0x00, 0xFF, 0xFF, 0xAA, 0xAA};
  EXPECT_EQ(*ToRgba(f), (std::vector<uint8_t>{255, 0, 0, 255, 0, 255, 0, 255, 0, 0, 255, 255, 255,
                                              255, 255, 255}));
}

TEST(SimFrame, BlockLinearPixelsComeFromTheirGobPlaces) {
  // 16 x 8 RGBA pixels: one GOB (64 bytes x 8 rows). Each pixel's red byte is its index.
  Frame f;
  f.width = 16;
  f.height = 8;
  f.block_linear = true;
  f.format = PixelFormat::kRgba8;
  f.bytes.assign(512, 0);
  for (uint32_t y = 0; y < 8; ++y)
    for (uint32_t x = 0; x < 16; ++x)
      f.bytes[TrmOffset(x * 4, y)] = static_cast<uint8_t>(y * 16 + x);
  auto rgba = ToRgba(f);
  ASSERT_TRUE(rgba.ok()) << rgba.status();
  for (uint32_t i = 0; i < 128; ++i) EXPECT_EQ((*rgba)[i * 4], i) << "pixel " << i;
}

TEST(SimFrame, TooFewBytesOrABadShapeIsAnError) {
  Frame f;
  f.width = 4;
  f.height = 4;
  f.pitch = 16;
  f.bytes.assign(63, 0);  // needs 16 * 3 + 16 = 64
  EXPECT_FALSE(ToRgba(f).ok());
  f.bytes.assign(64, 0);
  EXPECT_TRUE(ToRgba(f).ok());
  f.pitch = 8;  // narrower than a row
  EXPECT_FALSE(ToRgba(f).ok());
  f.block_linear = true;
  f.block_height_log2 = 9;
  EXPECT_FALSE(ToRgba(f).ok());
}

// A window's capture holds the bytes shown, not the span its pitch covers: the pitch is the
// guest's to choose. (Before: a 3-row surface of 2 pixels with a 64 KiB pitch copied 128 KiB per
// flip into the sentry; 4096 rows with a 1 MiB pitch, 4 GiB.)
TEST(SimFrame, ACaptureCopiesTheRowsShownNotThePitch) {
  BudgetAccount budget{abi::Budgets{}};
  Nvmap nvmap(&budget, 0, 0);
  uint32_t handle = 0, align = 0x1000;
  constexpr uint32_t kPitch = 64 << 10;
  ASSERT_EQ(nvmap.Create(getpid(), 4 * kPitch, &handle), abi::NvError::kSuccess);
  ASSERT_EQ(nvmap.Alloc(getpid(), handle, 0, 0, &align, 0, 0), abi::NvError::kSuccess);
  std::shared_ptr<NvmapObject> object = nvmap.Resolve(getpid(), handle);
  ASSERT_TRUE(object);
  for (uint32_t y = 0; y < 3; ++y) {
    const uint8_t px[8] = {uint8_t(y), 1, 2, 255, uint8_t(y + 10), 3, 4, 255};
    ASSERT_TRUE(object->Write(uint64_t{y} * kPitch, px));
  }
  PresentedSurface s;
  s.object = object;
  s.format = abi::nvdisp::kFmtR8G8B8A8;
  s.bytes_per_pixel = 4;
  s.width = 2;
  s.height = 3;
  s.pitch = kPitch;
  std::optional<Frame> f = CaptureWindow(0, 1, s);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->bytes.size(), 2u * 4 * 3);
  absl::StatusOr<std::vector<uint8_t>> rgba = ToRgba(*f);
  ASSERT_TRUE(rgba.ok()) << rgba.status();
  ASSERT_EQ(rgba->size(), 24u);
  for (uint32_t y = 0; y < 3; ++y) {
    EXPECT_EQ((*rgba)[y * 8], y) << "row " << y;
    EXPECT_EQ((*rgba)[y * 8 + 4], y + 10) << "row " << y;
  }
}

}  // namespace
}  // namespace nvsentry::hostshim::sim
