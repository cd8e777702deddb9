// The host backend's syncpoint mirror (hostshim/host/syncpoint_mirror.h): guest waits park in the
// sentry and complete when the host's value gets there; guest memory is brought in first.
#include <gtest/gtest.h>

#include <atomic>

#include "absl/synchronization/notification.h"
#include "hostshim/host/syncpoint_mirror.h"

namespace nvsentry::hostshim::host {
namespace {

class Waiter : public sim::SyncpointWaiter {
 public:
  explicit Waiter(std::atomic<int>* pulls_seen_at_reach) : pulls_(pulls_seen_at_reach) {}
  void Reached(uint32_t v) override {
    value = v;
    pulls_at_reach = pulls_->load();
    done.Notify();
  }
  void TimedOut() override {
    timed_out = true;
    done.Notify();
  }
  bool Abandoned() override { return false; }
  std::atomic<int>* pulls_;
  uint32_t value = 0;
  int pulls_at_reach = -1;
  bool timed_out = false;
  absl::Notification done;
};

struct FakeHost {
  std::atomic<uint32_t> value[sim::kNumSyncpoints] = {};
  std::atomic<bool> broken{false};
  SyncpointMirror::ReadHost reader() {
    return [this](uint32_t id) -> absl::StatusOr<uint32_t> {
      if (broken) return absl::UnavailableError("host gone");
      return value[id].load();
    };
  }
};

TEST(HostSyncpointMirror, RefreshMovesTheMirrorToTheHostsValueAfterThePull) {
  sim::Syncpoints table;
  FakeHost host;
  std::atomic<int> pulls{0};
  SyncpointMirror m(table, host.reader(), [&] { ++pulls; });
  host.value[7] = 5000;  // a host whose syncpoint has history
  auto v = m.Refresh(7);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, 5000u);
  EXPECT_EQ(table.Read(7), 5000u);
  EXPECT_EQ(pulls.load(), 1);
  // Unchanged: no pull, nothing moves.
  ASSERT_TRUE(m.Refresh(7).ok());
  EXPECT_EQ(pulls.load(), 1);
  // A failing host read leaves the mirror as it was.
  host.broken = true;
  EXPECT_FALSE(m.Refresh(7).ok());
  EXPECT_EQ(table.Read(7), 5000u);
}

TEST(HostSyncpointMirror, AParkedWaitCompletesWhenTheHostGetsThereWithMemoryPulledFirst) {
  sim::Syncpoints table;
  FakeHost host;
  std::atomic<int> pulls{0};
  SyncpointMirror m(table, host.reader(), [&] { ++pulls; });
  host.value[3] = 10;
  ASSERT_TRUE(m.Refresh(3).ok());
  auto w = std::make_shared<Waiter>(&pulls);
  uint32_t v = 0;
  ASSERT_EQ(table.Wait(
                3, 12, 5000, [&] { return w; }, &v),
            sim::Syncpoints::WaitStart::kParked);
  host.value[3] = 11;  // not yet
  absl::SleepFor(absl::Milliseconds(5));
  EXPECT_FALSE(w->done.HasBeenNotified());
  const int pulls_before = pulls.load();
  host.value[3] = 12;
  ASSERT_TRUE(w->done.WaitForNotificationWithTimeout(absl::Seconds(5)));
  EXPECT_FALSE(w->timed_out);
  EXPECT_EQ(w->value, 12u);
  EXPECT_GT(w->pulls_at_reach, pulls_before) << "the waiter ran before guest memory was pulled";
}

TEST(HostSyncpointMirror, NothingParkedMeansNoPolling) {
  sim::Syncpoints table;
  FakeHost host;
  SyncpointMirror m(table, host.reader(), nullptr);
  host.value[4] = 1;
  auto w = std::make_shared<Waiter>(new std::atomic<int>(0));
  uint32_t v = 0;
  ASSERT_EQ(table.Wait(
                4, 1, 5000, [&] { return w; }, &v),
            sim::Syncpoints::WaitStart::kParked);
  ASSERT_TRUE(w->done.WaitForNotificationWithTimeout(absl::Seconds(5)));
  // The wait is over: the poll forgets the syncpoint and host reads stop.
  absl::SleepFor(absl::Milliseconds(20));
  const uint64_t reads = m.host_reads();
  absl::SleepFor(absl::Milliseconds(50));
  EXPECT_EQ(m.host_reads(), reads);
  delete w->pulls_;
}

}  // namespace
}  // namespace nvsentry::hostshim::host
