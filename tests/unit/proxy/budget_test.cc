// The budget accounting the driver's resources charge: limits from the policy, refusal with
// InsufficientMemory (Switchbrew), peaks, and no over-charge under concurrent callers.
#include "proxy/budget.h"

#include <atomic>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace nvsentry::proxy {
namespace {

abi::Budgets Small() {
  abi::Budgets b;
  b.open_fds = 3;
  b.nvmap_objects = 2;
  b.channels = 1;
  b.address_spaces = 0;
  b.pinned_bytes = 0x10000;
  return b;
}

TEST(Budget, LimitsComeFromThePolicy) {
  BudgetAccount a(Small());
  EXPECT_EQ(a.limit(BudgetKind::kOpenFds), 3u);
  EXPECT_EQ(a.limit(BudgetKind::kNvmapObjects), 2u);
  EXPECT_EQ(a.limit(BudgetKind::kChannels), 1u);
  EXPECT_EQ(a.limit(BudgetKind::kAddressSpaces), 0u);
  EXPECT_EQ(a.limit(BudgetKind::kPinnedBytes), 0x10000u);
  BudgetAccount d{abi::Budgets{}};
  EXPECT_EQ(d.limit(BudgetKind::kOpenFds), 1024u);
  EXPECT_EQ(d.limit(BudgetKind::kNvmapObjects), 65536u);
  EXPECT_EQ(d.limit(BudgetKind::kChannels), 64u);
  EXPECT_EQ(d.limit(BudgetKind::kAddressSpaces), 16u);
  EXPECT_EQ(d.limit(BudgetKind::kPinnedBytes), 4ull << 30);
}

TEST(Budget, ChargeUpToTheLimitThenInsufficientMemory) {
  BudgetAccount a(Small());
  EXPECT_EQ(a.Charge(BudgetKind::kNvmapObjects), abi::NvError::kSuccess);
  EXPECT_EQ(a.Charge(BudgetKind::kNvmapObjects), abi::NvError::kSuccess);
  EXPECT_EQ(a.Charge(BudgetKind::kNvmapObjects), abi::NvError::kInsufficientMemory);
  EXPECT_EQ(a.used(BudgetKind::kNvmapObjects), 2u);
  EXPECT_EQ(a.refused(BudgetKind::kNvmapObjects), 1u);
  a.Release(BudgetKind::kNvmapObjects);
  EXPECT_EQ(a.Charge(BudgetKind::kNvmapObjects), abi::NvError::kSuccess);
  EXPECT_EQ(a.peak(BudgetKind::kNvmapObjects), 2u);
  // Budgets are independent.
  EXPECT_EQ(a.used(BudgetKind::kOpenFds), 0u);
}

TEST(Budget, ZeroAllowsNone) {
  BudgetAccount a(Small());
  EXPECT_EQ(a.Charge(BudgetKind::kAddressSpaces), abi::NvError::kInsufficientMemory);
  EXPECT_EQ(a.Charge(BudgetKind::kAddressSpaces, 0), abi::NvError::kSuccess);
}

TEST(Budget, AmountsInBytesAndNoWrapAround) {
  BudgetAccount a(Small());
  EXPECT_EQ(a.Charge(BudgetKind::kPinnedBytes, 0xF000), abi::NvError::kSuccess);
  EXPECT_EQ(a.Charge(BudgetKind::kPinnedBytes, 0x1001), abi::NvError::kInsufficientMemory);
  EXPECT_EQ(a.Charge(BudgetKind::kPinnedBytes, UINT64_MAX), abi::NvError::kInsufficientMemory);
  EXPECT_EQ(a.Charge(BudgetKind::kPinnedBytes, 0x1000), abi::NvError::kSuccess);
  EXPECT_EQ(a.used(BudgetKind::kPinnedBytes), 0x10000u);
  a.Release(BudgetKind::kPinnedBytes, 0x20000);  // more than held: back to zero, not below
  EXPECT_EQ(a.used(BudgetKind::kPinnedBytes), 0u);
  EXPECT_EQ(a.peak(BudgetKind::kPinnedBytes), 0x10000u);
}

TEST(Budget, ConcurrentChargesNeverPassTheLimit) {
  abi::Budgets b;
  b.nvmap_objects = 1000;
  BudgetAccount a(b);
  std::atomic<int> granted{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 500; ++i)
        if (a.Charge(BudgetKind::kNvmapObjects) == abi::NvError::kSuccess) ++granted;
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(granted.load(), 1000);
  EXPECT_EQ(a.used(BudgetKind::kNvmapObjects), 1000u);
  EXPECT_EQ(a.refused(BudgetKind::kNvmapObjects), 3000u);
  EXPECT_EQ(a.peak(BudgetKind::kNvmapObjects), 1000u);
}

TEST(Budget, Names) {
  EXPECT_EQ(BudgetName(BudgetKind::kOpenFds), "open_fds");
  EXPECT_EQ(BudgetName(BudgetKind::kPinnedBytes), "pinned_bytes");
  EXPECT_EQ(BudgetName(BudgetKind::kMappings), "mappings");
  EXPECT_EQ(BudgetName(BudgetKind::kParkedWaits), "parked_waits");
  EXPECT_EQ(BudgetName(BudgetKind::kTwinBytes), "twin_bytes");
}

TEST(Budget, AHoldGivesItsChargeBackExactlyOnce) {
  abi::Budgets b;
  b.parked_waits = 2;
  auto a = std::make_shared<BudgetAccount>(b);
  {
    hostshim::BudgetHold one, two, three;
    EXPECT_TRUE(one.Take(a, BudgetKind::kParkedWaits));
    EXPECT_TRUE(two.Take(a, BudgetKind::kParkedWaits));
    EXPECT_FALSE(three.Take(a, BudgetKind::kParkedWaits)) << "spent";
    EXPECT_FALSE(three.held());
    EXPECT_EQ(a->used(BudgetKind::kParkedWaits), 2u);
    // Released from several threads at once: one charge back, not two.
    std::vector<std::thread> t;
    for (int i = 0; i < 4; ++i) t.emplace_back([&] { one.Release(); });
    for (auto& th : t) th.join();
    EXPECT_EQ(a->used(BudgetKind::kParkedWaits), 1u);
    EXPECT_TRUE(three.Take(a, BudgetKind::kParkedWaits));
  }  // two and three go with their holds
  EXPECT_EQ(a->used(BudgetKind::kParkedWaits), 0u);
  EXPECT_EQ(a->peak(BudgetKind::kParkedWaits), 2u);
  EXPECT_EQ(a->refused(BudgetKind::kParkedWaits), 1u);
  hostshim::BudgetHold none;
  EXPECT_TRUE(none.Take(nullptr, BudgetKind::kParkedWaits)) << "no account: nothing to charge";
}

}  // namespace
}  // namespace nvsentry::proxy
