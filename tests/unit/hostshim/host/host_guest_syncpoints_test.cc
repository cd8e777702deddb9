// The guest's count of its channels' syncpoints (hostshim/host/guest_syncpoints.h): the guest's
// value moves by what its jobs made when the host reaches each job's fence, its max by what they
// promised, and a wait for a guest value is the host fence of the job that makes it.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "hostshim/host/guest_syncpoints.h"

namespace nvsentry::hostshim::host {
namespace {

TEST(HostGuestSyncpoints, JobsLandInOrderAtTheirHostFences) {
  sim::Syncpoints table;
  GuestSyncpoints g(table);
  int landed_calls = 0;
  g.Keep(5, [&] { ++landed_calls; });
  EXPECT_TRUE(g.Kept(5));
  EXPECT_FALSE(g.LastHost(5).has_value()) << "no host value seen yet";
  // Two jobs: the host's kernel gives them fences 12 and 14 (two increments each).
  EXPECT_EQ(g.Submitted(5, 12, 3, 3), 3u) << "the guest's fence is its new max";
  EXPECT_EQ(g.Submitted(5, 14, 2, 1), 4u);
  EXPECT_EQ(table.ReadMax(5), 4u);
  EXPECT_TRUE(g.Pending(5));
  GuestSyncpoints::Landing l = g.Landed(5, 11);
  EXPECT_EQ(l.jobs, 0u);
  EXPECT_EQ(*g.LastHost(5), 11u);
  l = g.Landed(5, 12);
  EXPECT_EQ(l.jobs, 1u);
  EXPECT_EQ(l.increments, 3u);
  l = g.Landed(5, 10);  // a stale read moves nothing back
  EXPECT_EQ(l.jobs, 0u);
  EXPECT_EQ(*g.LastHost(5), 12u);
  l = g.Landed(5, 20);
  EXPECT_EQ(l.jobs, 1u);
  EXPECT_EQ(l.increments, 2u);
  EXPECT_FALSE(g.Pending(5));
  EXPECT_EQ(g.Landed(6, 100).jobs, 0u) << "not kept";
  ASSERT_TRUE(g.OnLanded(5));
  g.OnLanded(5)();
  EXPECT_EQ(landed_calls, 1);
}

TEST(HostGuestSyncpoints, AWaitIsTheHostFenceOfTheJobThatMakesTheValue) {
  sim::Syncpoints table;
  GuestSyncpoints g(table);
  g.Keep(7);
  g.Submitted(7, 100, 1, 1);
  g.Submitted(7, 102, 2, 2);
  EXPECT_TRUE(g.WaitFor(7, 0).reached);
  GuestSyncpoints::HostWait w = g.WaitFor(7, 1);
  EXPECT_FALSE(w.reached);
  EXPECT_EQ(w.at, 100u);
  EXPECT_EQ(g.WaitFor(7, 3).at, 102u);
  EXPECT_FALSE(g.WaitFor(7, 4).at.has_value()) << "no submitted job makes it";
  const uint32_t n = g.Landed(7, 100).increments;
  EXPECT_TRUE(g.WaitFor(7, 1).reached) << "landed, the table not moved yet: made all the same";
  g.Apply(7, n);
  EXPECT_EQ(table.Read(7), 1u) << "the table moved by what landed";
  EXPECT_TRUE(g.WaitFor(7, 1).reached);
  EXPECT_FALSE(g.WaitFor(7, 2).reached);
  EXPECT_EQ(g.WaitFor(7, 2).at, 102u);
}

// A FENCE_WAIT named while the mirror's thread applies a landing never counts the landed jobs
// twice, once in the table and once as landed (it then passed a value no job had made, and a
// submission held behind another channel's fence went to the host at once).
TEST(HostGuestSyncpoints, AWaitDuringALandingCountsItsJobsOnce) {
  sim::Syncpoints table;
  GuestSyncpoints g(table);
  g.Keep(7);
  constexpr uint32_t kJobs = 20000;
  std::atomic<uint32_t> landed{0};  // jobs handed to Landed so far: the most the guest has made
  std::thread mirror([&] {
    for (uint32_t i = 1; i <= kJobs; ++i) {
      g.Submitted(7, 2 * i, 1, 1);
      landed.store(i);
      g.Apply(7, g.Landed(7, 2 * i).increments);
    }
  });
  uint32_t overcounts = 0;
  while (landed.load() < kJobs) {
    const uint32_t before = landed.load();
    const bool reached = g.WaitFor(7, before + 1).reached;
    if (reached && landed.load() < before + 1) ++overcounts;
  }
  mirror.join();
  EXPECT_EQ(overcounts, 0u);
  EXPECT_EQ(table.Read(7), kJobs);
}

TEST(HostGuestSyncpoints, AJobHeldBackLandsOnlyOnceItsFenceIsNamed) {
  sim::Syncpoints table;
  GuestSyncpoints g(table);
  g.Keep(9);
  EXPECT_EQ(g.Submitted(9, std::nullopt, 2, 2), 2u) << "the guest's fence all the same";
  g.Submitted(9, 50, 1, 1);  // behind it
  EXPECT_FALSE(g.WaitFor(9, 1).at.has_value()) << "its host fence is not known";
  EXPECT_EQ(g.Landed(9, 1000).jobs, 0u) << "nothing lands past a job held back";
  g.Resolve(9, 48);
  EXPECT_EQ(g.WaitFor(9, 3).at, 50u);
  const GuestSyncpoints::Landing l = g.Landed(9, 50);
  EXPECT_EQ(l.jobs, 2u);
  EXPECT_EQ(l.increments, 3u);
}

TEST(HostGuestSyncpoints, KeepingStartsTheValueAtTheMaxAndReleaseForgets) {
  sim::Syncpoints table;
  table.IncrementMax(3, 5);  // a channel's jobs that never landed before it closed
  table.IncrementBy(3, 2);
  GuestSyncpoints g(table);
  g.Keep(3);
  EXPECT_EQ(table.Read(3), 5u);
  EXPECT_EQ(table.ReadMax(3), 5u);
  table.IncrementBy(4, 9);  // a host value mirrored before: the max follows it
  g.Keep(4);
  EXPECT_EQ(table.ReadMax(4), 9u);
  g.Release(3);
  EXPECT_FALSE(g.Kept(3));
  EXPECT_FALSE(g.OnLanded(3));
}

}  // namespace
}  // namespace nvsentry::hostshim::host
