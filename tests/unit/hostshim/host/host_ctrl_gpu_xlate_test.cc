// The nvhost-ctrl-gpu translation's pure parts (hostshim/host/ctrl_gpu_xlate.h). Offsets and
// values typed in by hand from L4T r32.7.4's nvgpu.h (nvgpu_gpu_characteristics, 256 bytes) and
// the guest's 0xA0-byte layout (Switchbrew), never read from abi/.
#include <gtest/gtest.h>

#include <cstring>

#include "hostshim/host/ctrl_gpu_xlate.h"

namespace nvsentry::hostshim::host {
namespace {

template <typename T>
void Put32(T& s, size_t off, uint32_t v) {
  std::memcpy(reinterpret_cast<uint8_t*>(&s) + off, &v, 4);
}
template <typename T>
void Put64(T& s, size_t off, uint64_t v) {
  std::memcpy(reinterpret_cast<uint8_t*>(&s) + off, &v, 8);
}
template <typename T>
uint32_t Get32(const T& s, size_t off) {
  uint32_t v;
  std::memcpy(&v, reinterpret_cast<const uint8_t*>(&s) + off, 4);
  return v;
}
template <typename T>
uint64_t Get64(const T& s, size_t off) {
  uint64_t v;
  std::memcpy(&v, reinterpret_cast<const uint8_t*>(&s) + off, 8);
  return v;
}

TEST(HostCtrlGpuXlate, CharacteristicsMoveToTheGuestsOffsets) {
  static_assert(sizeof(abi::l4t::nvgpu_ctrl::GpuCharacteristics) == 256);
  static_assert(sizeof(abi::nvhost_ctrl_gpu::GpuCharacteristics) == 0xA0);
  abi::l4t::nvgpu_ctrl::GpuCharacteristics h;
  std::memset(&h, 0, sizeof h);
  // L4T r32.7.4 offsets: arch 0, impl 4, rev 8, num_gpc 12, l2_cache_size 16, num_tpc_per_gpc 32,
  // big_page_size 40, available_big_page_sizes 52, flags 56, twod_class 64, threed_class 68,
  // compute_class 72, gpfifo_class 76, inline_to_memory_class 80, dma_copy_class 84,
  // gpc_mask 88, sm_arch_sm_version 92, sm_arch_warp_count 100, gpu_va_bit_count (u8) 114,
  // max_fbps_count 116, max_gpc_count 136, rop_l2_en_mask 140 and 144, chipname 148,
  // gr_compbit_store_base_hw 160.
  Put32(h, 0, 0x120);
  Put32(h, 4, 0xB);
  Put32(h, 8, 0xA1);
  Put32(h, 12, 1);
  Put64(h, 16, 0x40000);
  Put32(h, 32, 2);
  Put32(h, 40, 0x20000);
  Put32(h, 52, 0x30000);
  Put64(h, 56, 0xFFFF);  // every host flag: only bits 0 and 2 reach the guest
  Put32(h, 64, 0x902D);
  Put32(h, 68, 0xB197);
  Put32(h, 72, 0xB1C0);
  Put32(h, 76, 0xB06F);
  Put32(h, 80, 0xA140);
  Put32(h, 84, 0xB0B5);
  Put32(h, 88, 1);
  Put32(h, 92, 0x503);
  Put32(h, 100, 0x80);
  reinterpret_cast<uint8_t*>(&h)[114] = 40;
  Put32(h, 116, 1);
  Put32(h, 136, 1);
  Put32(h, 140, 0x11);
  Put32(h, 144, 0x22);
  std::memcpy(reinterpret_cast<uint8_t*>(&h) + 148, "gm20b\0\0\0", 8);
  Put64(h, 160, 0x1234'5000);

  const abi::nvhost_ctrl_gpu::GpuCharacteristics g = CharacteristicsToGuest(h);
  // The guest's offsets (Switchbrew): the first 56 bytes as the host's, gpc_mask 56,
  // sm_arch_sm_version 60, sm_arch_warp_count 68, gpu_va_bit_count 72, flags 80, twod_class 88
  // ... dma_copy_class 108, max_fbps_count 112, max_gpc_count 132, rop_l2_en_mask 136 and 140,
  // chipname 144, gr_compbit_store_base_hw 152.
  EXPECT_EQ(Get32(g, 0), 0x120u);
  EXPECT_EQ(Get32(g, 4), 0xBu);
  EXPECT_EQ(Get32(g, 8), 0xA1u);
  EXPECT_EQ(Get32(g, 12), 1u);
  EXPECT_EQ(Get64(g, 16), 0x40000u);
  EXPECT_EQ(Get32(g, 32), 2u);
  EXPECT_EQ(Get32(g, 40), 0x20000u);
  EXPECT_EQ(Get32(g, 52), 0x30000u);
  EXPECT_EQ(Get32(g, 56), 1u);
  EXPECT_EQ(Get32(g, 60), 0x503u);
  EXPECT_EQ(Get32(g, 68), 0x80u);
  EXPECT_EQ(Get32(g, 72), 40u);
  EXPECT_EQ(Get32(g, 76), 0u);
  EXPECT_EQ(Get64(g, 80), 0x5u);
  EXPECT_EQ(Get32(g, 88), 0x902Du);
  EXPECT_EQ(Get32(g, 92), 0xB197u);
  EXPECT_EQ(Get32(g, 96), 0xB1C0u);
  EXPECT_EQ(Get32(g, 100), 0xB06Fu);
  EXPECT_EQ(Get32(g, 104), 0xA140u);
  EXPECT_EQ(Get32(g, 108), 0xB0B5u);
  EXPECT_EQ(Get32(g, 112), 1u);
  EXPECT_EQ(Get32(g, 132), 1u);
  EXPECT_EQ(Get32(g, 136), 0x11u);
  EXPECT_EQ(Get32(g, 140), 0x22u);
  EXPECT_EQ(Get64(g, 144), 0x000000'6230326D67u);  // "gm20b", little-endian
  EXPECT_EQ(Get64(g, 152), 0x1234'5000u);
}

TEST(HostCtrlGpuXlate, TpcMasksFillTheGuestsWordLowGpcFirst) {
  const uint32_t one[] = {0x3};
  EXPECT_EQ(TpcMaskWord(one), 0x3u);
  const uint32_t two[] = {0x3, 0x1};
  EXPECT_EQ(TpcMaskWord(two), 0x1'0000'0003u);
  EXPECT_EQ(TpcMaskWord({}), 0u);
}

TEST(HostCtrlGpuXlate, FlushL2IsCheckedThenPackedInOneByte) {
  abi::l4t::nvgpu_ctrl::FlushL2 h;
  static_assert(sizeof h == 5);  // the host's argument is 5 bytes
  EXPECT_EQ(FlushL2ToHost({0x1, 0}, &h), abi::NvError::kSuccess);
  EXPECT_EQ(reinterpret_cast<uint8_t*>(&h)[0], 0x1);
  EXPECT_EQ(FlushL2ToHost({0x7 | 0xF0, 0}, &h), abi::NvError::kSuccess);
  EXPECT_EQ(reinterpret_cast<uint8_t*>(&h)[0], 0x7) << "only the three flag bits";
  EXPECT_EQ(FlushL2ToHost({0x4, 0}, &h), abi::NvError::kSuccess);  // FB flush alone
  EXPECT_EQ(FlushL2ToHost({0x0, 0}, &h), abi::NvError::kBadParameter);
  EXPECT_EQ(FlushL2ToHost({0x6, 0}, &h), abi::NvError::kBadParameter);  // invalidate w/o L2 flush
}

TEST(HostCtrlGpuXlate, VsmsMappingTakesTheFirstTwoSms) {
  const abi::l4t::nvgpu_ctrl::VsmsMappingEntry e[] = {{0, 0}, {0, 1}, {1, 0}};
  const abi::nvhost_ctrl_gpu::VsmsMapping g = VsmsToGuest(e);
  const uint8_t* b = reinterpret_cast<const uint8_t*>(&g);
  EXPECT_EQ(b[0], 0);
  EXPECT_EQ(b[1], 0);
  EXPECT_EQ(b[2], 0);
  EXPECT_EQ(b[3], 1);
  const abi::nvhost_ctrl_gpu::VsmsMapping one = VsmsToGuest(std::span(e).first(1));
  EXPECT_EQ(reinterpret_cast<const uint8_t*>(&one)[3], 0);
}

}  // namespace
}  // namespace nvsentry::hostshim::host
