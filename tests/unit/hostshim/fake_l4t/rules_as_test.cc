// The fake Jetson answers as r32.7.4 does: the nvhost-as-gpu rules of docs/host-abi.md, one test
// per rule id.
#include <gtest/gtest.h>

#include <cerrno>

#include "abi/l4t/nvgpu_as.h"
#include "abi/l4t/nvmap.h"
#include "tests/unit/hostshim/fake_l4t/fake_jetson_harness.h"

namespace nvsentry::hostshim::fake_l4t {
namespace {

namespace ha = abi::l4t::nvgpu_as;
constexpr uint32_t kDirect = ha::kMapDirectKindCtrl;

ha::MapBufferEx Anywhere(uint32_t handle) {
  ha::MapBufferEx m{};
  m.flags = kDirect;
  m.compr_kind = ha::kKindInvalid;
  m.incompr_kind = 0;  // pitch
  m.dmabuf_fd = handle;
  return m;
}

class FakeL4tAsRules : public FakeL4tRules {
 protected:
  void SetUp() override {
    nvmap_ = Open(L4tNode::kNvmap);
    as_ = Open(L4tNode::kNvhostAsGpu);
  }
  void TearDown() override {
    fake_.Release(as_);
    fake_.Release(nvmap_);
  }
  uint64_t nvmap_ = 0, as_ = 0;
};

TEST_F(FakeL4tAsRules, L4T_AS_2_GetVaRegionsWritesWhatFitsAndSaysAll) {
  ha::VaRegion r[2] = {};
  ha::GetVaRegions g{reinterpret_cast<uint64_t>(r), sizeof(ha::VaRegion), 0};
  ASSERT_EQ(Call(as_, ha::kGetVaRegions, &g), 0);
  EXPECT_EQ(g.buf_size, 48u);
  EXPECT_EQ(r[0].page_size, 0x1000u);  // small pages first
  EXPECT_EQ(r[1].page_size, 0u);       // did not fit
}

TEST_F(FakeL4tAsRules, L4T_AS_3_ASecondBindChannelIsEinval) {
  const uint64_t ch = BoundChannel(as_);
  uint32_t bind = 40;
  EXPECT_EQ(Call(as_, ha::kBindChannel, &bind), EINVAL);  // the same address space again
  const uint64_t as2 = Open(L4tNode::kNvhostAsGpu);
  EXPECT_EQ(Call(as2, ha::kBindChannel, &bind), EINVAL);  // another one
  uint32_t not_channel = 41;
  caller_.fds[41] = nvmap_;
  EXPECT_EQ(Call(as2, ha::kBindChannel, &not_channel), EINVAL);
  fake_.Release(as2);
  fake_.Release(ch);
}

TEST_F(FakeL4tAsRules, L4T_AS_5_FreeSpaceFreesTheReservationHoldingTheOffset) {
  ha::FreeSpace nothing{0x4000000000ull, 1, 0x1000};
  EXPECT_EQ(Call(as_, ha::kFreeSpace, &nothing), 0);  // no reservation there: nothing, 0
  ha::AllocSpace a{16, 0x1000, 0, 0, 0};
  ASSERT_EQ(Call(as_, ha::kAllocSpace, &a), 0);
  const uint64_t base = a.offset_or_align;
  ha::MapBufferEx m = Anywhere(NewObject(nvmap_, 4096));
  m.flags |= ha::kMapFixedOffset;
  m.offset = base + 0x2000;
  ASSERT_EQ(Call(as_, ha::kMapBufferEx, &m), 0);
  // An offset inside it, with made-up sizes: the reservation goes, and its mapping with it.
  ha::FreeSpace f{base + 0x1000, 99, 0x20000};
  EXPECT_EQ(Call(as_, ha::kFreeSpace, &f), 0);
  ha::AllocSpace again{16, 0x1000, 1 /* fixed */, 0, base};
  EXPECT_EQ(Call(as_, ha::kAllocSpace, &again), 0);  // the range is free again
}

TEST_F(FakeL4tAsRules, L4T_AS_6_MapBufferExNeedsDirectKindControl) {
  ha::MapBufferEx m = Anywhere(NewObject(nvmap_, 4096));
  m.flags = 0;
  EXPECT_EQ(Call(as_, ha::kMapBufferEx, &m), EINVAL);
}

TEST_F(FakeL4tAsRules, L4T_AS_8_AnAnywhereMapIsOfTheWholeBuffer) {
  const uint32_t h = NewObject(nvmap_, 0x4000);
  ha::MapBufferEx m = Anywhere(h);
  m.mapping_size = 0x1000;
  EXPECT_EQ(Call(as_, ha::kMapBufferEx, &m), EINVAL);
  m = Anywhere(h);
  m.buffer_offset = 0x1000;
  EXPECT_EQ(Call(as_, ha::kMapBufferEx, &m), EINVAL);
  m = Anywhere(h);
  m.offset = 0x10000000;
  EXPECT_EQ(Call(as_, ha::kMapBufferEx, &m), EINVAL);
  m = Anywhere(h);
  EXPECT_EQ(Call(as_, ha::kMapBufferEx, &m), 0);
}

TEST_F(FakeL4tAsRules, L4T_AS_9_TheRangeLiesInTheBuffersPages) {
  ha::AllocSpace a{16, 0x1000, 0, 0, 0};
  ASSERT_EQ(Call(as_, ha::kAllocSpace, &a), 0);
  const uint32_t h = NewObject(nvmap_, 0x1800);  // two pages
  ha::MapBufferEx m = Anywhere(h);
  m.flags |= ha::kMapFixedOffset;
  m.offset = a.offset_or_align;
  m.mapping_size = 0x3000;
  EXPECT_EQ(Call(as_, ha::kMapBufferEx, &m), EINVAL);
  m.mapping_size = 0x1000;
  m.buffer_offset = 0x1001;
  EXPECT_EQ(Call(as_, ha::kMapBufferEx, &m), EINVAL);
  m.buffer_offset = 0x1000;  // the second page: inside the rounded size
  EXPECT_EQ(Call(as_, ha::kMapBufferEx, &m), 0);
}

TEST_F(FakeL4tAsRules, L4T_AS_10_PageSizeIsIgnored) {
  ha::MapBufferEx m = Anywhere(NewObject(nvmap_, 4096));
  m.page_size = 12345;
  EXPECT_EQ(Call(as_, ha::kMapBufferEx, &m), 0);
}

TEST_F(FakeL4tAsRules, L4T_AS_12_NoKindAtAllIsEnomem) {
  ha::MapBufferEx m = Anywhere(NewObject(nvmap_, 4096));
  m.incompr_kind = ha::kKindInvalid;
  EXPECT_EQ(Call(as_, ha::kMapBufferEx, &m), ENOMEM);
}

TEST_F(FakeL4tAsRules, L4T_AS_13_TheSameMappingTwiceIsOneMappingWithTwoReferences) {
  const uint32_t h = NewObject(nvmap_, 4096);
  ha::MapBufferEx m1 = Anywhere(h), m2 = Anywhere(h);
  ASSERT_EQ(Call(as_, ha::kMapBufferEx, &m1), 0);
  ASSERT_EQ(Call(as_, ha::kMapBufferEx, &m2), 0);
  EXPECT_EQ(m2.offset, m1.offset);
  // Another kind is another mapping.
  ha::MapBufferEx other = Anywhere(h);
  other.incompr_kind = 0xFE;
  ASSERT_EQ(Call(as_, ha::kMapBufferEx, &other), 0);
  EXPECT_NE(other.offset, m1.offset);
  // Fixed, twice at the same address: one mapping, two references. The first UNMAP leaves it
  // mapped (another buffer there clashes), the second unmaps it.
  ha::AllocSpace a{16, 0x1000, 0, 0, 0};
  ASSERT_EQ(Call(as_, ha::kAllocSpace, &a), 0);
  ha::MapBufferEx f1 = Anywhere(h);
  f1.flags |= ha::kMapFixedOffset;
  f1.offset = a.offset_or_align;
  ha::MapBufferEx f2 = f1;
  ASSERT_EQ(Call(as_, ha::kMapBufferEx, &f1), 0);
  ASSERT_EQ(Call(as_, ha::kMapBufferEx, &f2), 0);
  ha::UnmapBuffer u{a.offset_or_align};
  ASSERT_EQ(Call(as_, ha::kUnmapBuffer, &u), 0);
  ha::MapBufferEx x = Anywhere(NewObject(nvmap_, 4096));
  x.flags |= ha::kMapFixedOffset;
  x.offset = a.offset_or_align;
  EXPECT_EQ(Call(as_, ha::kMapBufferEx, &x), EINVAL);  // still mapped
  ASSERT_EQ(Call(as_, ha::kUnmapBuffer, &u), 0);
  EXPECT_EQ(Call(as_, ha::kMapBufferEx, &x), 0);  // gone with its last reference
}

TEST_F(FakeL4tAsRules, L4T_AS_15_UnmapOfNothingIsZero) {
  ha::UnmapBuffer u{0x123456000ull};
  EXPECT_EQ(Call(as_, ha::kUnmapBuffer, &u), 0);
  ha::MapBufferEx m = Anywhere(NewObject(nvmap_, 4096));
  ASSERT_EQ(Call(as_, ha::kMapBufferEx, &m), 0);
  u.offset = m.offset + 0x10;  // inside, but no mapping's start
  EXPECT_EQ(Call(as_, ha::kUnmapBuffer, &u), 0);
  u.offset = m.offset;
  EXPECT_EQ(Call(as_, ha::kUnmapBuffer, &u), 0);
  EXPECT_EQ(Call(as_, ha::kUnmapBuffer, &u), 0);  // again: nothing there now, still 0
}

}  // namespace
}  // namespace nvsentry::hostshim::fake_l4t
