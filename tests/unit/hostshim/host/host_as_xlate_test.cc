// The nvhost-as-gpu translation's pure parts (hostshim/host/as_xlate.h). Values typed in by hand
// from L4T r32.7.4's nvgpu.h (nvgpu_as_map_buffer_ex_args, NVGPU_AS_MAP_BUFFER_FLAGS_*, 40
// bytes) and the guest's layouts (Switchbrew).
#include <gtest/gtest.h>

#include <cstring>

#include "hostshim/host/as_xlate.h"

namespace nvsentry::hostshim::host {
namespace {

using abi::NvError;
namespace l4t = abi::l4t::nvgpu_as;

MapObject Object() { return MapObject{true, 0x10000, 0xFE, 77}; }

template <typename T>
uint32_t Get32(const T& s, size_t off) {
  uint32_t v;
  std::memcpy(&v, reinterpret_cast<const uint8_t*>(&s) + off, 4);
  return v;
}
template <typename T>
uint16_t Get16(const T& s, size_t off) {
  uint16_t v;
  std::memcpy(&v, reinterpret_cast<const uint8_t*>(&s) + off, 2);
  return v;
}
template <typename T>
uint64_t Get64(const T& s, size_t off) {
  uint64_t v;
  std::memcpy(&v, reinterpret_cast<const uint8_t*>(&s) + off, 8);
  return v;
}

TEST(HostAsXlate, MapBufferExLaysOutDirectKindWithTheTwinsHandle) {
  GuestMap g;
  g.flags = 0x4;  // cacheable
  g.kind = 0xDB;
  g.buffer_offset = 0x1000;
  g.mapping_size = 0x2000;
  g.offset_or_align = 0x10000;  // an alignment (not fixed)
  HostMap m;
  ASSERT_EQ(MapToHost(g, Object(), &m), NvError::kSuccess);
  static_assert(sizeof m.arg == 40);
  // flags 0: DIRECT_KIND_CTRL (0x100) | cacheable (0x4); compr_kind (s16) 4: -1; incompr_kind 6;
  // dmabuf_fd 8; page_size 12: 0; buffer_offset 16, mapping_size 24 and offset 32 all 0: r32.7.4
  // refuses them on an anywhere map (L4T-AS-8), so the part is the space's to place (partial).
  EXPECT_EQ(Get32(m.arg, 0), 0x104u);
  EXPECT_EQ(Get16(m.arg, 4), 0xFFFFu);
  EXPECT_EQ(Get16(m.arg, 6), 0xDBu);
  EXPECT_EQ(Get32(m.arg, 8), 77u);
  EXPECT_EQ(Get32(m.arg, 12), 0u);
  EXPECT_EQ(Get64(m.arg, 16), 0u);
  EXPECT_EQ(Get64(m.arg, 24), 0u);
  EXPECT_EQ(Get64(m.arg, 32), 0u);
  EXPECT_EQ(m.size, 0x2000u);
  EXPECT_EQ(m.buffer_offset, 0x1000u);
  EXPECT_TRUE(m.partial);
  EXPECT_EQ(m.kind, 0xDB);
  // The whole object anywhere: nothing but the buffer, not partial.
  g.buffer_offset = 0;
  g.mapping_size = 0;
  ASSERT_EQ(MapToHost(g, Object(), &m), NvError::kSuccess);
  EXPECT_EQ(Get64(m.arg, 24), 0u);
  EXPECT_FALSE(m.partial);
}

TEST(HostAsXlate, MapBufferDefaultsTakeTheObjectsKindAndRestAndFixedPassesTheVa) {
  GuestMap g;
  g.flags = 0x1;  // fixed
  g.offset_or_align = 0x4'0000'0000;
  HostMap m;
  ASSERT_EQ(MapToHost(g, Object(), &m), NvError::kSuccess);
  EXPECT_EQ(Get32(m.arg, 0), 0x101u);
  EXPECT_EQ(Get16(m.arg, 6), 0xFEu) << "kind -1: the object's own";
  EXPECT_EQ(Get64(m.arg, 24), 0x10000u) << "size 0: to the end of the object";
  EXPECT_FALSE(m.partial);
  EXPECT_EQ(Get64(m.arg, 32), 0x4'0000'0000u);
}

TEST(HostAsXlate, MapBufferRefusesAsSimulatedAndNeverPassesUnknownFlags) {
  HostMap m;
  GuestMap g;
  g.flags = 0xFFFF'FEFF;  // everything but modify
  ASSERT_EQ(MapToHost(g, Object(), &m), NvError::kSuccess);
  EXPECT_EQ(Get32(m.arg, 0), 0x105u) << "only fixed and cacheable, plus DIRECT_KIND_CTRL";

  g = {};
  g.flags = 0x100;  // the guest's modify: the host's bit 8 is DIRECT_KIND_CTRL
  EXPECT_EQ(MapToHost(g, Object(), &m), NvError::kNotSupported);
  g = {};
  MapObject unallocated = Object();
  unallocated.allocated = false;
  EXPECT_EQ(MapToHost(g, unallocated, &m), NvError::kBadValue);
  g.kind = 0x100;
  EXPECT_EQ(MapToHost(g, Object(), &m), NvError::kBadValue);
  g.kind = -2;
  EXPECT_EQ(MapToHost(g, Object(), &m), NvError::kBadValue);
  g = {};
  g.buffer_offset = 0x10000;
  EXPECT_EQ(MapToHost(g, Object(), &m), NvError::kBadValue);
  g.buffer_offset = 0x8000;
  g.mapping_size = 0x8001;
  EXPECT_EQ(MapToHost(g, Object(), &m), NvError::kBadValue);
  g.mapping_size = ~uint64_t{0};  // no wrap-around past the object
  EXPECT_EQ(MapToHost(g, Object(), &m), NvError::kBadValue);
  g = {};
  g.offset_or_align = 0x3000;  // not a power of two
  EXPECT_EQ(MapToHost(g, Object(), &m), NvError::kBadValue);
}

TEST(HostAsXlate, AsRequestsAreCheckedThenMustBeTheHostsLayout) {
  EXPECT_EQ(CheckAsRequest(0, 0, 0, 0), NvError::kSuccess);
  EXPECT_EQ(CheckAsRequest(0x10000, 0, 0, 0), NvError::kSuccess);
  EXPECT_EQ(CheckAsRequest(0x20000, 0, 0, 0), NvError::kSuccess);
  EXPECT_EQ(CheckAsRequest(0x1000, 0, 0, 0), NvError::kBadValue);
  EXPECT_EQ(CheckAsRequest(0x20000, 0x800'0000, 0x4'0000'0000, 0x20'0000'0000), NvError::kSuccess);
  EXPECT_EQ(CheckAsRequest(0x20000, 0x800'1000, 0x4'0000'0000, 0x20'0000'0000), NvError::kBadValue);
  EXPECT_EQ(CheckAsRequest(0x20000, 0x800'0000, 0x4'0000'0000, 0x200'0000'0000), NvError::kBadValue)
      << "past 2^40";
  EXPECT_EQ(CheckAsRequest(0x20000, 0x800'0000, 0x800'0000 - 0x20000, 0x20'0000'0000),
            NvError::kBadValue);

  // A GM20B host's default: small pages from 128 MiB (big << 10) to 16 GiB, 128 KiB pages to
  // 128 GiB.
  const l4t::VaRegion host[] = {
      {0x800'0000, 0x1000, 0, (0x4'0000'0000 - 0x800'0000) / 0x1000},
      {0x4'0000'0000, 0x20000, 0, (0x20'0000'0000 - 0x4'0000'0000) / 0x20000},
  };
  EXPECT_EQ(AsRequestFitsHost(0, 0, 0, 0, host), NvError::kSuccess);
  EXPECT_EQ(AsRequestFitsHost(0x20000, 0, 0, 0, host), NvError::kSuccess);
  EXPECT_EQ(AsRequestFitsHost(0x10000, 0, 0, 0, host), NvError::kNotSupported);
  EXPECT_EQ(AsRequestFitsHost(0x20000, 0x800'0000, 0x4'0000'0000, 0x20'0000'0000, host),
            NvError::kSuccess);
  EXPECT_EQ(AsRequestFitsHost(0x20000, 0x800'0000, 0x2'0000'0000, 0x20'0000'0000, host),
            NvError::kNotSupported);
  EXPECT_EQ(AsRequestFitsHost(0, 0x800'0000, 0x4'0000'0000, 0x20'0000'0000, {}),
            NvError::kNotSupported);
}

TEST(HostAsXlate, RegionsGoInlineWithTheGuestsSize) {
  const l4t::VaRegion host[] = {{0x800'0000, 0x1000, 0, 0x3F800},
                                {0x4'0000'0000, 0x20000, 0, 0xE0000}};
  abi::nvhost_as_gpu::GetVaRegions g{};
  g.buf_size = 0x1234;
  RegionsToGuest(host, &g);
  static_assert(sizeof g == 0x40);
  // buf_size at 8: two 24-byte regions; regions at 16 and 40: offset, page_size, reserved, pages.
  EXPECT_EQ(Get32(g, 8), 48u);
  EXPECT_EQ(Get64(g, 16), 0x800'0000u);
  EXPECT_EQ(Get32(g, 24), 0x1000u);
  EXPECT_EQ(Get64(g, 32), 0x3F800u);
  EXPECT_EQ(Get64(g, 40), 0x4'0000'0000u);
  EXPECT_EQ(Get32(g, 48), 0x20000u);
  EXPECT_EQ(Get64(g, 56), 0xE0000u);
  RegionsToGuest(std::span(host).first(1), &g);
  EXPECT_EQ(Get64(g, 40), 0u) << "a region the host has not: zeros";
}

}  // namespace
}  // namespace nvsentry::hostshim::host
