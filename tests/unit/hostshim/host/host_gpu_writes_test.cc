// The record of where the host's GPU may have written (hostshim/host/gpu_writes.h): a pull's plan
// is every pending job's ranges and the error notifiers' records, per object, merged and clipped;
// a job retires only after a pull that began once its fence had passed, or once its host channel
// went (if it ever reached it); a record grown past kMaxJobs makes pulls read everything.
#include <gtest/gtest.h>
#include <unistd.h>

#include <map>
#include <utility>
#include <vector>

#include "hostshim/budget.h"
#include "hostshim/host/gpu_writes.h"
#include "hostshim/sim/memory/nvmap.h"

namespace nvsentry::hostshim::host {
namespace {

using Ranges = std::vector<std::pair<uint64_t, uint64_t>>;

class HostGpuWrites : public ::testing::Test {
 protected:
  HostGpuWrites() : budget_(abi::Budgets{}), nvmap_(&budget_, 0, 1) {}
  std::shared_ptr<sim::NvmapObject> Object(uint32_t size, uint32_t* handle = nullptr) {
    uint32_t h = 0;
    EXPECT_EQ(nvmap_.Create(getpid(), size, &h), abi::NvError::kSuccess);
    if (handle != nullptr) *handle = h;
    return nvmap_.Resolve(getpid(), h);
  }
  static Ranges Of(const SyncPlan& plan, const sim::NvmapObject* o) {
    Ranges out;
    for (const ObjectSide::Interval& i : plan.Of(o)) out.emplace_back(i.begin, i.end);
    return out;
  }
  // Which fences have passed: (id, value) <= passed_[id].
  GpuWrites::Passed Passed() {
    return [this](uint32_t id, uint32_t value) { return passed_[id] >= value; };
  }
  BudgetAccount budget_;
  sim::Nvmap nvmap_;
  std::map<uint32_t, uint32_t> passed_;
  GpuWrites writes_;
  const int channel_ = 0, other_ = 0;
};

TEST_F(HostGpuWrites, APlanMergesClipsAndSortsEachObjectsRanges) {
  auto a = Object(0x10000), b = Object(0x1000);
  writes_.Add(&channel_, {{a, 0x800, 0x10}, {a, 0x100, 0x10}, {a, 0x108, 0x20}, {b, 0xFF0, 0x40}});
  writes_.Add(&other_, {{a, 0x810, 0x10}, {b, 0x2000, 0x10}});
  SyncPlan plan = writes_.Plan(Passed());
  EXPECT_EQ(Of(plan, a.get()), (Ranges{{0x100, 0x128}, {0x800, 0x820}}));
  EXPECT_EQ(Of(plan, b.get()), (Ranges{{0xFF0, 0x1000}})) << "clipped to the object";
  EXPECT_FALSE(plan.everything);
  EXPECT_EQ(plan.alive.size(), 2u);
}

TEST_F(HostGpuWrites, AJobRetiresAfterAPullThatBeganOnceItsFencePassed) {
  auto a = Object(0x1000);
  const uint64_t job = writes_.Add(&channel_, {{a, 0, 16}});
  // No fence yet (held back, or not yet taken by the host): pulled, kept.
  SyncPlan plan = writes_.Plan(Passed());
  writes_.Retire(plan);
  EXPECT_EQ(writes_.pending(), 1u);
  writes_.Fenced(job, 7, 10);
  passed_[7] = 9;
  plan = writes_.Plan(Passed());
  EXPECT_EQ(Of(plan, a.get()), (Ranges{{0, 16}}));
  writes_.Retire(plan);
  EXPECT_EQ(writes_.pending(), 1u) << "its fence had not passed when the pull began";
  passed_[7] = 10;
  plan = writes_.Plan(Passed());
  EXPECT_EQ(Of(plan, a.get()), (Ranges{{0, 16}})) << "read once more, after its fence";
  writes_.Retire(plan);
  EXPECT_EQ(writes_.pending(), 0u);
  EXPECT_TRUE(writes_.Plan(Passed()).where.empty());
}

TEST_F(HostGpuWrites, AJobAddedDuringAPullIsNotRetiredByIt) {
  auto a = Object(0x1000);
  writes_.Fenced(writes_.Add(&channel_, {{a, 0, 16}}), 7, 1);
  passed_[7] = 1;
  SyncPlan plan = writes_.Plan(Passed());
  writes_.Fenced(writes_.Add(&channel_, {{a, 32, 16}}), 7, 1);  // meanwhile, already passed
  writes_.Retire(plan);
  EXPECT_EQ(writes_.pending(), 1u);
  EXPECT_EQ(Of(writes_.Plan(Passed()), a.get()), (Ranges{{32, 48}}));
}

TEST_F(HostGpuWrites, NotifiersArePulledAlwaysUntilCleared) {
  auto a = Object(0x1000);
  writes_.SetNotifier(&channel_, WriteTarget{a, 0x40, 16});
  for (int i = 0; i < 2; ++i) {
    SyncPlan plan = writes_.Plan(Passed());
    EXPECT_EQ(Of(plan, a.get()), (Ranges{{0x40, 0x50}}));
    writes_.Retire(plan);
  }
  writes_.SetNotifier(&channel_, std::nullopt);
  EXPECT_TRUE(writes_.Plan(Passed()).where.empty());
}

TEST_F(HostGpuWrites, AGoneChannelsJobsRetireAtTheNextPullButNotThoseThatNeverReachedIt) {
  auto a = Object(0x1000);
  const uint64_t ran = writes_.Add(&channel_, {{a, 0, 16}});
  writes_.Fenced(ran, 7, 100);            // never passes
  writes_.Add(&channel_, {{a, 64, 16}});  // held back: it will run on the next host channel
  writes_.Fenced(writes_.Add(&other_, {{a, 128, 16}}), 8, 100);
  writes_.ChannelGone(&channel_);
  SyncPlan plan = writes_.Plan(Passed());
  EXPECT_EQ(Of(plan, a.get()), (Ranges{{0, 16}, {64, 80}, {128, 144}}));
  writes_.Retire(plan);
  EXPECT_EQ(Of(writes_.Plan(Passed()), a.get()), (Ranges{{64, 80}, {128, 144}}));
}

TEST_F(HostGpuWrites, ADroppedJobIsForgottenAndAFreedObjectIsNotRead) {
  uint32_t hb = 0;
  auto a = Object(0x1000), b = Object(0x1000, &hb);
  writes_.Dropped(writes_.Add(&channel_, {{a, 0, 16}}));
  writes_.Add(&channel_, {{b, 0, 16}});
  b.reset();
  uint64_t addr;
  uint32_t size, flags;
  ASSERT_EQ(nvmap_.Free(getpid(), hb, &addr, &size, &flags), abi::NvError::kSuccess);
  SyncPlan plan = writes_.Plan(Passed());
  EXPECT_TRUE(plan.where.empty());
}

// A job that may wait for memory the CPU writes keeps AnyWaits true until a pull retires it, even
// when it writes nothing; a dropped one stops counting at once.
TEST_F(HostGpuWrites, AWaitingJobCountsUntilItRetires) {
  EXPECT_FALSE(writes_.AnyWaits());
  const uint64_t job = writes_.Add(&channel_, {}, true);
  const uint64_t other = writes_.Add(&channel_, {}, true);
  EXPECT_TRUE(writes_.AnyWaits());
  writes_.Dropped(other);
  writes_.Fenced(job, 7, 1);
  SyncPlan plan = writes_.Plan(Passed());
  writes_.Retire(plan);
  EXPECT_TRUE(writes_.AnyWaits()) << "its fence has not passed";
  passed_[7] = 1;
  plan = writes_.Plan(Passed());
  EXPECT_TRUE(plan.where.empty());
  writes_.Retire(plan);
  EXPECT_FALSE(writes_.AnyWaits());
}

// A hostile guest's jobs of thousands of ranges each cannot grow the record past kMaxTargets:
// the job that would pass it is kept as writing everything, and only until it retires.
TEST_F(HostGpuWrites, PastKMaxTargetsAJobIsKeptAsWritingEverything) {
  auto a = Object(0x1000);
  std::vector<WriteTarget> many(GpuWrites::kMaxTargets, WriteTarget{a, 0, 16});
  const uint64_t first = writes_.Add(&channel_, many);
  EXPECT_FALSE(writes_.Plan(Passed()).everything);
  const uint64_t second = writes_.Add(&channel_, {{a, 32, 16}});
  EXPECT_TRUE(writes_.Plan(Passed()).everything);
  writes_.Dropped(second);
  writes_.Dropped(first);
  writes_.Add(&channel_, {{a, 32, 16}});
  EXPECT_FALSE(writes_.Plan(Passed()).everything);
}

TEST_F(HostGpuWrites, PastKMaxJobsAPullReadsEverything) {
  auto a = Object(0x1000);
  for (size_t i = 0; i <= GpuWrites::kMaxJobs; ++i) writes_.Add(&channel_, {{a, 0, 16}});
  EXPECT_TRUE(writes_.Plan(Passed()).everything);
}

}  // namespace
}  // namespace nvsentry::hostshim::host
