// The fake Jetson's translations with logic (hostshim/fake_l4t/translate.h); offsets and bits
// typed in from r32.7.4's nvgpu.h and nvmap.h.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>

#include "hostshim/fake_l4t/translate.h"

namespace nvsentry::hostshim::fake_l4t {
namespace {

template <typename T>
uint32_t U32At(const T& s, size_t off) {
  uint32_t v;
  std::memcpy(&v, reinterpret_cast<const uint8_t*>(&s) + off, 4);
  return v;
}

TEST(FakeL4tTranslate, CharacteristicsTakeTheHostOrder) {
  abi::nvhost_ctrl_gpu::GpuCharacteristics g{};
  g.arch = 0x120;
  g.num_gpc = 1;
  g.gpc_mask = 0x1;
  g.flags = 0x55;
  g.threed_class = 0xB197;
  g.dma_copy_class = 0xB0B5;
  g.gpu_va_bit_count = 40;
  g.chipname = 0x6230326D67;  // "gm20b"
  g.gr_compbit_store_base_hw = 0x1234;
  const auto h = ToL4tCharacteristics(g);
  static_assert(sizeof h == 256);
  EXPECT_EQ(U32At(h, 0), 0x120u);
  EXPECT_EQ(U32At(h, 12), 1u);
  // flags (u64) at 56: r32.7.4's own for a GM20B (L4T-CTRL-3), not the guest's
  EXPECT_EQ(U32At(h, 56), 0x1840187u);
  EXPECT_EQ(U32At(h, 68), 0xB197u);                          // threed_class
  EXPECT_EQ(U32At(h, 84), 0xB0B5u);                          // dma_copy_class
  EXPECT_EQ(U32At(h, 88), 1u);                               // gpc_mask
  EXPECT_EQ(reinterpret_cast<const uint8_t*>(&h)[114], 40);  // gpu_va_bit_count, a u8
  EXPECT_EQ(std::memcmp(reinterpret_cast<const char*>(&h) + 148, "gm20b", 6), 0);
  EXPECT_EQ(U32At(h, 160), 0x1234u);  // gr_compbit_store_base_hw
}

TEST(FakeL4tTranslate, SubmitFlags) {
  uint32_t g = 0xFFFF;
  EXPECT_EQ(SubmitFlagsToGuest(0x13, &g), 0);  // FENCE_WAIT | FENCE_GET | SUPPRESS_WFI
  EXPECT_EQ(g, 0x13u);
  EXPECT_EQ(SubmitFlagsToGuest(0x62, &g),
            0);  // SKIP_BUFFER_REFCOUNTING, RESCHEDULE_RUNLIST dropped
  EXPECT_EQ(g, 0x2u);
  // SYNC_FENCE with a fence to wait on or get: a sync_file, which the fake has none of.
  EXPECT_EQ(SubmitFlagsToGuest((1u << 3) | 1, &g), EINVAL);
  EXPECT_EQ(SubmitFlagsToGuest((1u << 3) | 2, &g), EINVAL);
  // Bits r32.7.4 does not define are ignored (L4T-CH-10), and never reach the sim, whose bit 8
  // is its own increment-by-value.
  EXPECT_EQ(SubmitFlagsToGuest(1u << 8, &g), 0);
  EXPECT_EQ(g, 0u);
}

TEST(FakeL4tTranslate, MapBufferExNeedsDirectKindControl) {
  uint32_t flags = 0;
  int32_t kind = 0;
  EXPECT_EQ(MapBufferExToGuest(0, -1, 0, &flags, &kind), EINVAL);
  EXPECT_EQ(MapBufferExToGuest(1u << 8, -1, -1, &flags, &kind), ENOMEM);  // no kind: L4T-AS-12
  EXPECT_EQ(MapBufferExToGuest((1u << 8) | 1 | 4 | (1u << 5), -1, 0xFE, &flags, &kind), 0);
  EXPECT_EQ(kind, 0xFE);
  EXPECT_EQ(flags, 5u);  // FIXED_OFFSET and CACHEABLE only; never the sim's bit 8
  EXPECT_EQ(MapBufferExToGuest(1u << 8, 0xDB, 0xFE, &flags, &kind), 0);
  EXPECT_EQ(kind, 0xDB);  // compr_kind first
}

TEST(FakeL4tTranslate, ReadWritePlans) {
  std::vector<RwAtom> atoms;
  abi::l4t::nvmap::RwHandle rw{0x1000, 1, 0, 16, 32, 16, 4};
  ASSERT_EQ(PlanRw(rw, 4096, &atoms), 0);
  ASSERT_EQ(atoms.size(), 4u);
  EXPECT_EQ(atoms[3].object_offset, 96u);
  EXPECT_EQ(atoms[3].caller_addr, 0x1000u + 48);
  // Contiguous on both sides: one piece.
  rw = {0x1000, 1, 8, 16, 16, 16, 4};
  ASSERT_EQ(PlanRw(rw, 4096, &atoms), 0);
  ASSERT_EQ(atoms.size(), 1u);
  EXPECT_EQ(atoms[0].len, 64u);
  // Refusals: zero sizes, past the object, overflowing strides, the caller's address space
  // wrapping, too many atoms.
  rw = {0x1000, 1, 0, 0, 16, 16, 1};
  EXPECT_EQ(PlanRw(rw, 4096, &atoms), EINVAL);
  rw = {0x1000, 1, 4090, 8, 8, 8, 1};
  EXPECT_EQ(PlanRw(rw, 4096, &atoms), EINVAL);
  rw = {0x1000, 1, 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF};
  EXPECT_EQ(PlanRw(rw, ~uint64_t{0}, &atoms), EINVAL);
  rw = {~uint64_t{0} - 8, 1, 0, 16, 16, 16, 1};
  EXPECT_EQ(PlanRw(rw, 4096, &atoms), EINVAL);
  rw = {0x1000, 1, 0, 1, 2, 2, (1u << 20) + 1};
  EXPECT_EQ(PlanRw(rw, uint64_t{1} << 22, &atoms), EINVAL);
}

TEST(FakeL4tTranslate, WaitTimeoutsAreEagain) {
  EXPECT_EQ(ErrnoOf(abi::NvError::kTimeout, true), EAGAIN);
  EXPECT_EQ(ErrnoOf(abi::NvError::kTimeout), ETIMEDOUT);
  EXPECT_EQ(ErrnoOf(abi::NvError::kBadValue), EINVAL);
  EXPECT_EQ(ErrnoOf(abi::NvError::kSuccess), 0);
}

}  // namespace
}  // namespace nvsentry::hostshim::fake_l4t
