#include "hostshim/sim/sync/syncpoints.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <set>
#include <thread>
#include <vector>

#include "absl/synchronization/barrier.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"
#include "hostshim/backend.h"
#include "tests/unit/tasks.h"

namespace nvsentry::hostshim::sim {
namespace {

using nvsentry::testing::Tasks;
using nvsentry::testing::TasksAdded;
using nvsentry::testing::TasksAddedBecome;
using nvsentry::testing::TasksAddedByRace;

class RecordingWaiter : public SyncpointWaiter {
 public:
  void Reached(uint32_t v) override {
    value = v;
    reached++;
    done.Notify();
  }
  void TimedOut() override {
    timed_out++;
    done.Notify();
  }
  bool Abandoned() override { return abandoned.load(); }
  std::atomic<int> reached{0}, timed_out{0};
  std::atomic<bool> abandoned{false};
  uint32_t value = 0;
  absl::Notification done;
};

TEST(SyncptReached, WrapsAround) {
  EXPECT_TRUE(SyncptReached(5, 5));
  EXPECT_TRUE(SyncptReached(6, 5));
  EXPECT_FALSE(SyncptReached(4, 5));
  EXPECT_TRUE(SyncptReached(2, 0xFFFFFFF0u)) << "value wrapped past the threshold";
  EXPECT_FALSE(SyncptReached(0xFFFFFFF0u, 2)) << "threshold wrapped ahead of the value";
}

TEST(Syncpoints, IncrementReadAndMax) {
  Syncpoints s;
  EXPECT_EQ(s.Read(3), 0u);
  EXPECT_EQ(s.Increment(3), 1u);
  EXPECT_EQ(s.Read(3), 1u);
  EXPECT_EQ(s.ReadMax(3), 1u);
  EXPECT_EQ(s.Read(4), 0u);
  EXPECT_TRUE(Syncpoints::ValidId(191));
  EXPECT_FALSE(Syncpoints::ValidId(192));
}

TEST(Syncpoints, CommandStreamsIncrementOnlyOwnedSyncpoints) {
  Syncpoints sp;
  uint32_t id = 0;
  ASSERT_EQ(sp.Allocate(&id), abi::NvError::kSuccess);
  EXPECT_TRUE(sp.Owned(id));
  EXPECT_EQ(sp.IncrementFromCommandStream(id), abi::NvError::kSuccess);
  EXPECT_EQ(sp.Read(id), 1u);
  // Not allocated nor claimed: refused and unchanged; an id that does not exist is BadParameter.
  EXPECT_FALSE(sp.Owned(100));
  EXPECT_EQ(sp.IncrementFromCommandStream(100), abi::NvError::kAccessDenied);
  EXPECT_EQ(sp.Read(100), 0u);
  EXPECT_EQ(sp.IncrementFromCommandStream(kNumSyncpoints), abi::NvError::kBadParameter);
  // An engine's fixed syncpoint, claimed twice (two channels), stays owned until both let go.
  sp.Claim(0x0C);
  sp.Claim(0x0C);
  sp.Unclaim(0x0C);
  EXPECT_EQ(sp.IncrementFromCommandStream(0x0C), abi::NvError::kSuccess);
  sp.Unclaim(0x0C);
  sp.Unclaim(0x0C);  // one too many changes nothing
  EXPECT_FALSE(sp.Owned(0x0C));
  // A freed channel syncpoint is no longer the guest's.
  sp.Free(id);
  sp.Free(id);
  EXPECT_EQ(sp.IncrementFromCommandStream(id), abi::NvError::kAccessDenied);
}

TEST(Syncpoints, ParkedWaiterCompletesOnIncrement) {
  Syncpoints s;
  auto w = std::make_shared<RecordingWaiter>();
  uint32_t v;
  EXPECT_EQ(s.Wait(
                9, 2, -1, [&] { return w; }, &v),
            Syncpoints::WaitStart::kParked);
  EXPECT_EQ(s.ParkedCount(), 1u);
  s.Increment(9);
  EXPECT_EQ(w->reached.load(), 0);
  s.Increment(9);
  EXPECT_TRUE(w->done.HasBeenNotified());
  EXPECT_EQ(w->value, 2u);
  EXPECT_EQ(s.ParkedCount(), 0u);
}

// Many increments at once (a host1x job's promised ones) complete the waiters they pass, once,
// and leave the far one parked.
TEST(Syncpoints, IncrementByCompletesWhatItPassesOnce) {
  Syncpoints s;
  auto near = std::make_shared<RecordingWaiter>(), far = std::make_shared<RecordingWaiter>();
  uint32_t v;
  ASSERT_EQ(s.Wait(
                9, 5, -1, [&] { return near; }, &v),
            Syncpoints::WaitStart::kParked);
  ASSERT_EQ(s.Wait(
                9, 1u << 25, -1, [&] { return far; }, &v),
            Syncpoints::WaitStart::kParked);
  EXPECT_EQ(s.IncrementBy(9, 1u << 24), 1u << 24);
  EXPECT_EQ(s.Read(9), 1u << 24);
  EXPECT_EQ(s.ReadMax(9), 1u << 24) << "the max follows the value, as for Increment";
  EXPECT_EQ(near->reached.load(), 1);
  EXPECT_EQ(near->value, 1u << 24);
  EXPECT_EQ(far->reached.load(), 0);
  EXPECT_EQ(s.ParkedCount(), 1u);
}

TEST(Syncpoints, ReachedAndZeroTimeoutAnswerWithoutParking) {
  Syncpoints s;
  s.Increment(1);
  uint32_t v = 0;
  bool made = false;
  auto make = [&] {
    made = true;
    return std::shared_ptr<SyncpointWaiter>();
  };
  EXPECT_EQ(s.Wait(1, 1, 100, make, &v), Syncpoints::WaitStart::kReached);
  EXPECT_EQ(v, 1u);
  EXPECT_EQ(s.Wait(1, 50, 0, make, &v), Syncpoints::WaitStart::kTimedOut);
  EXPECT_FALSE(made);
}

TEST(Syncpoints, TimeoutFiresOnce) {
  Syncpoints s;
  auto w = std::make_shared<RecordingWaiter>();
  uint32_t v;
  ASSERT_EQ(s.Wait(
                2, 10, 30, [&] { return w; }, &v),
            Syncpoints::WaitStart::kParked);
  ASSERT_TRUE(w->done.WaitForNotificationWithTimeout(absl::Seconds(5)));
  for (int i = 0; i < 10; ++i) s.Increment(2);
  EXPECT_EQ(w->timed_out.load(), 1);
  EXPECT_EQ(w->reached.load(), 0);
}

TEST(Syncpoints, AbandonedWaitersAreDropped) {
  Syncpoints s(absl::Milliseconds(10));
  auto w = std::make_shared<RecordingWaiter>();
  uint32_t v;
  ASSERT_EQ(s.Wait(
                4, 1, -1, [&] { return w; }, &v),
            Syncpoints::WaitStart::kParked);
  w->abandoned = true;
  NoteAbandonedCall();  // what ends a parked call without its holder announces
  for (int i = 0; i < 200 && s.ParkedCount() != 0; ++i) absl::SleepFor(absl::Milliseconds(5));
  EXPECT_EQ(s.ParkedCount(), 0u);
  s.Increment(4);
  EXPECT_EQ(w->reached.load(), 0);
}

TEST(Syncpoints, AnAbandonedWaiterStaysUntilAnEndIsAnnounced) {
  // The sweep looks only after hostshim::AbandonedCallCount() moved: idle waiters cost nothing.
  Syncpoints s(absl::Milliseconds(1));
  auto w = std::make_shared<RecordingWaiter>();
  uint32_t v;
  ASSERT_EQ(s.Wait(
                5, 1, -1, [&] { return w; }, &v),
            Syncpoints::WaitStart::kParked);
  w->abandoned = true;
  absl::SleepFor(absl::Milliseconds(30));  // many sweep periods; nothing announced
  EXPECT_EQ(s.ParkedCount(), 1u);
  NoteAbandonedCall();
  for (int i = 0; i < 200 && s.ParkedCount() != 0; ++i) absl::SleepFor(absl::Milliseconds(5));
  EXPECT_EQ(s.ParkedCount(), 0u);
}

TEST(Syncpoints, ANullWaiterIsRefusedAndLeavesNothingParked) {
  Syncpoints s;
  uint32_t v = 0;
  EXPECT_EQ(s.Wait(
                6, 3, -1, [] { return std::shared_ptr<SyncpointWaiter>(); }, &v),
            Syncpoints::WaitStart::kRefused);
  EXPECT_EQ(s.ParkedCount(), 0u);
  // The refused wait announced no waiter: an increment completes nothing and still works.
  EXPECT_EQ(s.Increment(6), 1u);
}

TEST(Syncpoints, IncrementsCompleteExactlyTheReachedWaitersInThresholdOrder) {
  Syncpoints s;
  for (int i = 0; i < 5; ++i) s.Increment(7);
  std::vector<std::shared_ptr<RecordingWaiter>> w;
  uint32_t v;
  // Thresholds 5+1 .. 5+100 in a scrambled order, on one syncpoint.
  for (int i = 0; i < 100; ++i) {
    w.push_back(std::make_shared<RecordingWaiter>());
    uint32_t thresh = 5 + 1 + (i * 37) % 100;
    ASSERT_EQ(s.Wait(
                  7, thresh, -1, [&] { return w.back(); }, &v),
              Syncpoints::WaitStart::kParked);
  }
  for (int n = 1; n <= 100; ++n) {
    s.Increment(7);
    int reached = 0;
    for (int i = 0; i < 100; ++i) {
      const bool due = (i * 37) % 100 + 1 <= n;
      EXPECT_EQ(w[i]->reached.load(), due ? 1 : 0) << "waiter " << i << " after " << n;
      reached += w[i]->reached.load();
    }
    ASSERT_EQ(reached, n);
  }
  EXPECT_EQ(s.ParkedCount(), 0u);
}

TEST(Syncpoints, WaitersAcrossTheWrapCompleteWhenReached) {
  Syncpoints s;
  uint32_t v;
  // Move the counter near 2^32 in two jumps (SetMinEqMax moves only forwards, by less than
  // 2^31), then wait across the wrap.
  s.IncrementMax(8, 0x7FFFFFF8u);
  ASSERT_EQ(s.SetMinEqMax(8), 0x7FFFFFF8u);
  s.IncrementMax(8, 0x7FFFFFF8u);
  ASSERT_EQ(s.SetMinEqMax(8), 0xFFFFFFF0u);
  auto before = std::make_shared<RecordingWaiter>(), after = std::make_shared<RecordingWaiter>();
  ASSERT_EQ(s.Wait(
                8, 0xFFFFFFFAu, -1, [&] { return before; }, &v),
            Syncpoints::WaitStart::kParked);
  ASSERT_EQ(s.Wait(
                8, 0x00000005u, -1, [&] { return after; }, &v),
            Syncpoints::WaitStart::kParked);
  for (int i = 0; i < 10; ++i) s.Increment(8);  // 0xFFFFFFFA
  EXPECT_EQ(before->reached.load(), 1);
  EXPECT_EQ(after->reached.load(), 0);
  for (int i = 0; i < 10; ++i) s.Increment(8);  // 0x00000004
  EXPECT_EQ(after->reached.load(), 0);
  s.Increment(8);
  EXPECT_EQ(after->reached.load(), 1);
  EXPECT_EQ(after->value, 5u);
}

TEST(Syncpoints, AShortDeadlineAmongManyEndlessWaitsFiresOnTime) {
  Syncpoints s;
  std::vector<std::shared_ptr<RecordingWaiter>> endless;
  uint32_t v;
  for (int i = 0; i < 1000; ++i) {
    endless.push_back(std::make_shared<RecordingWaiter>());
    ASSERT_EQ(s.Wait(
                  9, 100, -1, [&] { return endless.back(); }, &v),
              Syncpoints::WaitStart::kParked);
  }
  auto timed = std::make_shared<RecordingWaiter>();
  ASSERT_EQ(s.Wait(
                9, 100, 20, [&] { return timed; }, &v),
            Syncpoints::WaitStart::kParked);
  ASSERT_TRUE(timed->done.WaitForNotificationWithTimeout(absl::Seconds(5)));
  EXPECT_EQ(timed->timed_out.load(), 1);
  EXPECT_EQ(s.ParkedCount(), 1000u);
  for (auto& w : endless) EXPECT_EQ(w->timed_out.load(), 0);
}

// A table whose guest never parks a wait has no timer thread: reads, increments, waits answered
// at once and refused ones start none. Waits parked at once on many threads start one, and it
// keeps their deadlines.
TEST(Syncpoints, TheTimerThreadStartsWithTheFirstParkedWaiter) {
  const std::set<pid_t> before = Tasks();
  { Syncpoints unused; }  // nothing to join
  {
    Syncpoints s;
    EXPECT_TRUE(TasksAdded(before).empty()) << "made: no thread";
    uint32_t v;
    s.Increment(3);
    EXPECT_EQ(s.Wait(
                  3, 1, 100, [] { return std::make_shared<RecordingWaiter>(); }, &v),
              Syncpoints::WaitStart::kReached);
    EXPECT_EQ(s.Wait(
                  3, 5, 0, [] { return std::make_shared<RecordingWaiter>(); }, &v),
              Syncpoints::WaitStart::kTimedOut);
    EXPECT_EQ(s.Wait(
                  3, 5, 100, [] { return std::shared_ptr<SyncpointWaiter>(); }, &v),
              Syncpoints::WaitStart::kRefused);
    EXPECT_TRUE(TasksAdded(before).empty()) << "nothing parked: no thread";

    constexpr int kWaiters = 8;
    std::vector<std::shared_ptr<RecordingWaiter>> waiters;
    for (int i = 0; i < kWaiters; ++i) waiters.push_back(std::make_shared<RecordingWaiter>());
    const std::set<pid_t> added = TasksAddedByRace(before, kWaiters, [&](int i) {
      uint32_t value;
      EXPECT_EQ(s.Wait(
                    10 + i, 1, 20, [&] { return waiters[i]; }, &value),
                Syncpoints::WaitStart::kParked);
    });
    EXPECT_EQ(added.size(), 1u) << "parked: one timer thread";
    for (auto& w : waiters) {
      ASSERT_TRUE(w->done.WaitForNotificationWithTimeout(absl::Seconds(10)));
      EXPECT_EQ(w->timed_out.load(), 1);
    }
  }
  EXPECT_EQ(TasksAddedBecome(before, 0), 0u) << "destroyed: joined";
}

// The timer starts after the table was made, but an end announced in between still makes it
// look: the end may be that of a call whose waiter was about to park.
TEST(Syncpoints, AnEndAnnouncedBeforeTheFirstWaiterParkedIsLookedInto) {
  Syncpoints s(absl::Milliseconds(1));
  NoteAbandonedCall();
  auto w = std::make_shared<RecordingWaiter>();
  w->abandoned = true;
  uint32_t v;
  ASSERT_EQ(s.Wait(
                4, 1, -1, [&] { return w; }, &v),
            Syncpoints::WaitStart::kParked);
  for (int i = 0; i < 2000 && s.ParkedCount() != 0; ++i) absl::SleepFor(absl::Milliseconds(5));
  EXPECT_EQ(s.ParkedCount(), 0u);
}

}  // namespace
}  // namespace nvsentry::hostshim::sim
