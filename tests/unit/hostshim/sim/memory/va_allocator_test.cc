#include "hostshim/sim/memory/va_allocator.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace nvsentry::hostshim::sim {
namespace {

constexpr uint64_t k4K = 0x1000, k64K = 0x10000, k128K = 0x20000;

TEST(VaAllocator, AnywhereAllocationsAscendFromTheStart) {
  VaAllocator a(0x100000, 0x200000, k4K);
  EXPECT_EQ(a.free_bytes(), 0x100000u);
  EXPECT_EQ(a.Allocate(k4K, 0), 0x100000u);
  EXPECT_EQ(a.Allocate(2 * k4K, k4K), 0x101000u);
  EXPECT_EQ(a.Allocate(k4K, k4K), 0x103000u);
  EXPECT_EQ(a.free_bytes(), 0x100000u - 4 * k4K);
}

TEST(VaAllocator, AlignmentIsHonoured) {
  VaAllocator a(0x1000, 0x1000000, k4K);
  auto first = a.Allocate(k4K, 0);
  ASSERT_TRUE(first);
  EXPECT_EQ(*first, 0x1000u);
  auto aligned = a.Allocate(k4K, k64K);
  ASSERT_TRUE(aligned);
  EXPECT_EQ(*aligned % k64K, 0u);
  EXPECT_EQ(*aligned, 0x10000u) << "the lowest 64 KiB boundary above the first page";
  auto big = a.Allocate(k128K, 0x100000);
  ASSERT_TRUE(big);
  EXPECT_EQ(*big % 0x100000, 0u);
  // The gap left below the aligned block is still usable.
  EXPECT_EQ(a.Allocate(k4K, 0), 0x2000u);
}

TEST(VaAllocator, AlignmentBelowTheGranuleMeansTheGranule) {
  VaAllocator a(k128K, 64 * k128K, k128K);
  EXPECT_EQ(a.Allocate(k128K, k4K), k128K);
  EXPECT_EQ(a.Allocate(k128K, 1), 2 * k128K);
}

TEST(VaAllocator, RefusesBadArguments) {
  VaAllocator a(0x10000, 0x20000, k4K);
  EXPECT_FALSE(a.Allocate(0, 0)) << "empty";
  EXPECT_FALSE(a.Allocate(0x800, 0)) << "not a granule multiple";
  EXPECT_FALSE(a.Allocate(k4K, 0x3000)) << "alignment not a power of two";
  EXPECT_FALSE(a.AllocateFixed(0x10800, k4K)) << "unaligned start";
  EXPECT_FALSE(a.AllocateFixed(0x1F000, 2 * k4K)) << "runs past the end";
  EXPECT_FALSE(a.AllocateFixed(0xF000, 2 * k4K)) << "starts before the region";
  EXPECT_FALSE(a.AllocateFixed(~uint64_t{0} - 0xFFF, k4K)) << "wraps around";
  EXPECT_EQ(a.free_bytes(), 0x10000u) << "refusals take nothing";
}

TEST(VaAllocator, FixedAllocationRefusesOverlap) {
  VaAllocator a(0x100000, 0x200000, k4K);
  EXPECT_TRUE(a.AllocateFixed(0x150000, 0x10000));
  EXPECT_FALSE(a.AllocateFixed(0x150000, k4K)) << "same start";
  EXPECT_FALSE(a.AllocateFixed(0x14F000, 2 * k4K)) << "overlaps the first page";
  EXPECT_FALSE(a.AllocateFixed(0x15F000, 2 * k4K)) << "overlaps the last page";
  EXPECT_FALSE(a.AllocateFixed(0x140000, 0x30000)) << "covers it";
  EXPECT_TRUE(a.AllocateFixed(0x14F000, k4K)) << "adjacent below";
  EXPECT_TRUE(a.AllocateFixed(0x160000, k4K)) << "adjacent above";
  EXPECT_FALSE(a.IsFree(0x150000, k4K));
  EXPECT_TRUE(a.IsFree(0x161000, k4K));
}

TEST(VaAllocator, AnywhereSkipsFixedRanges) {
  VaAllocator a(0x10000, 0x20000, k4K);
  ASSERT_TRUE(a.AllocateFixed(0x10000, 0x8000));
  EXPECT_EQ(a.Allocate(k4K, 0), 0x18000u);
}

TEST(VaAllocator, FreeCoalescesNeighbours) {
  VaAllocator a(0x10000, 0x20000, k4K);
  auto x = a.Allocate(k4K, 0), y = a.Allocate(k4K, 0), z = a.Allocate(k4K, 0);
  ASSERT_TRUE(x && y && z);
  EXPECT_EQ(a.free_ranges(), 1u);
  EXPECT_TRUE(a.Free(*x, k4K));
  EXPECT_EQ(a.free_ranges(), 2u) << "hole at the start, rest after z";
  EXPECT_TRUE(a.Free(*z, k4K));
  EXPECT_EQ(a.free_ranges(), 2u) << "z merged with the tail";
  EXPECT_TRUE(a.Free(*y, k4K));
  EXPECT_EQ(a.free_ranges(), 1u) << "all one range again";
  EXPECT_EQ(a.free_bytes(), 0x10000u);
  // The whole region can be taken in one piece again.
  EXPECT_EQ(a.Allocate(0x10000, 0), 0x10000u);
}

TEST(VaAllocator, DoubleAndOverlappingFreesAreRefused) {
  VaAllocator a(0x10000, 0x20000, k4K);
  auto x = a.Allocate(2 * k4K, 0);
  ASSERT_TRUE(x);
  EXPECT_TRUE(a.Free(*x, 2 * k4K));
  EXPECT_FALSE(a.Free(*x, 2 * k4K)) << "double free";
  auto y = a.Allocate(k4K, 0);
  ASSERT_TRUE(y);
  EXPECT_FALSE(a.Free(*y, 2 * k4K)) << "second page is free already";
  EXPECT_FALSE(a.Free(0x8000, k4K)) << "outside the region";
  EXPECT_FALSE(a.Free(0x20000, k4K)) << "past the end";
  EXPECT_EQ(a.free_bytes(), 0x10000u - k4K);
}

TEST(VaAllocator, ExhaustionAndRecovery) {
  VaAllocator a(k128K, 9 * k128K, k128K);
  std::vector<uint64_t> got;
  for (int i = 0; i < 8; i++) {
    auto v = a.Allocate(k128K, 0);
    ASSERT_TRUE(v) << i;
    got.push_back(*v);
  }
  EXPECT_FALSE(a.Allocate(k128K, 0));
  EXPECT_EQ(a.free_bytes(), 0u);
  ASSERT_TRUE(a.Free(got[3], k128K));
  EXPECT_FALSE(a.Allocate(2 * k128K, 0)) << "one page free only";
  EXPECT_EQ(a.Allocate(k128K, 0), got[3]);
}

TEST(VaAllocator, AlignedRequestFindsSpaceBeyondFragments) {
  // Many small free holes that are big enough but badly aligned, then one good range.
  VaAllocator a(0x1000, 0x10000000, k4K);
  std::vector<uint64_t> keep;
  for (int i = 0; i < 200; i++) {
    auto hole = a.Allocate(2 * k4K, 0);
    auto pin = a.Allocate(k4K, 0);
    ASSERT_TRUE(hole && pin);
    keep.push_back(*hole);
  }
  for (uint64_t h : keep) ASSERT_TRUE(a.Free(h, 2 * k4K));
  auto v = a.Allocate(2 * k4K, 0x100000);
  ASSERT_TRUE(v);
  EXPECT_EQ(*v % 0x100000, 0u);
}

TEST(VaAllocator, EmptyRegionNeverAllocates) {
  VaAllocator a(0x40000, 0x40000, k128K);
  EXPECT_EQ(a.free_bytes(), 0u);
  EXPECT_FALSE(a.Allocate(k128K, 0));
  EXPECT_FALSE(a.AllocateFixed(0x40000, k128K));
}

TEST(VaAllocator, FortyBitRegionBounds) {
  const uint64_t end = uint64_t{1} << 40;
  VaAllocator a(end - 4 * k128K, end, k128K);
  EXPECT_TRUE(a.AllocateFixed(end - k128K, k128K));
  EXPECT_FALSE(a.AllocateFixed(end, k128K));
  EXPECT_FALSE(a.Allocate(4 * k128K, 0));
  EXPECT_EQ(a.Allocate(k128K, uint64_t{1} << 39), std::nullopt)
      << "the only 2^39-aligned address below 2^40 is outside the region";
}

TEST(VaAllocator, ManyAllocationsAndFreesStayFast) {
  // A sanity check of the logarithmic structure: 20000 allocations of mixed sizes, frees in a
  // random order, then everything must be one free range again. (No timing assertion; the
  // elapsed time is printed for the curious.)
  VaAllocator a(0x100000, uint64_t{1} << 37, k4K);
  std::mt19937_64 rng(7);
  struct A {
    uint64_t va, size;
  };
  std::vector<A> live;
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 20000; i++) {
    uint64_t size = k4K * (1 + rng() % 32);
    uint64_t align = uint64_t{1} << (12 + rng() % 6);
    auto v = a.Allocate(size, align);
    ASSERT_TRUE(v);
    ASSERT_EQ(*v % align, 0u);
    live.push_back({*v, size});
    if (rng() % 3 == 0) {
      size_t j = rng() % live.size();
      ASSERT_TRUE(a.Free(live[j].va, live[j].size));
      live[j] = live.back();
      live.pop_back();
    }
  }
  std::shuffle(live.begin(), live.end(), rng);
  for (const A& x : live) ASSERT_TRUE(a.Free(x.va, x.size));
  auto ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0);
  EXPECT_EQ(a.free_ranges(), 1u);
  EXPECT_EQ(a.free_bytes(), (uint64_t{1} << 37) - 0x100000);
  std::printf("20000 allocations with frees: %.1f ms\n", ms.count());
}

}  // namespace
}  // namespace nvsentry::hostshim::sim
