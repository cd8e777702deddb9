// The park watch against real threads: a stopped child process stands in for a guest thread
// asleep in a parked call (a signal sent to it stays pending, as for a thread in a killable
// wait), its death for a guest thread's.
#include "sentry/core/park_watch.h"

#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <set>
#include <thread>
#include <vector>

#include "absl/synchronization/barrier.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"
#include "tests/unit/tasks.h"

namespace nvsentry::sentry {
namespace {

using nvsentry::testing::Tasks;
using nvsentry::testing::TasksAdded;
using nvsentry::testing::TasksAddedBecome;
using nvsentry::testing::TasksAddedByRace;

class FakeCall : public WatchedCall {
 public:
  bool Waiting() override { return !ended; }
  bool StillPending() override {
    ++pending_asks;
    return pending;
  }
  void Interrupted(bool thread_directed) override {
    if (ended.exchange(true)) return;
    thread = thread_directed;
    interrupted = true;
    done.Notify();
  }
  void Gone() override {
    if (ended.exchange(true)) return;
    gone = true;
    done.Notify();
  }
  std::atomic<bool> ended{false}, pending{true}, interrupted{false}, gone{false}, thread{false};
  std::atomic<int> pending_asks{0};
  absl::Notification done;
};

// A child that stops itself at once and is stopped when this returns; SIGKILLed and reaped by
// the destructor.
class StoppedChild {
 public:
  StoppedChild() {
    pid_ = fork();
    if (pid_ == 0) {
      signal(SIGUSR1, [](int) {});  // caught: pending, not ignored
      raise(SIGSTOP);
      for (;;) pause();
    }
    int status = 0;
    waitpid(pid_, &status, WUNTRACED);
  }
  ~StoppedChild() { Kill(); }
  void Kill() {
    if (pid_ <= 0) return;
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
};

ParkWatch::Options Fast() {
  ParkWatch::Options o;
  o.first_check = absl::Milliseconds(1);
  o.max_interval = absl::Milliseconds(4);
  o.period = absl::Milliseconds(10);
  o.work_per_period = absl::Milliseconds(5);
  return o;
}

TEST(ThreadStatus, PendingSignalsLessBlockedAndIgnored) {
  ThreadSignals s;
  ASSERT_TRUE(
      ParseThreadStatus("Name:\tx\nState:\tS (sleeping)\nSigQ:\t1/10\n"
                        "SigPnd:\t0000000000000202\nShdPnd:\t0000000000004000\n"
                        "SigBlk:\t0000000000000002\nSigIgn:\t0000000000000000\n",
                        &s));
  EXPECT_EQ(s.thread, 0x200u);
  EXPECT_EQ(s.process, 0x4000u);
  EXPECT_FALSE(s.dead);
  ASSERT_TRUE(
      ParseThreadStatus("State:\tZ (zombie)\nSigPnd:\t0\nShdPnd:\t0\nSigBlk:\t0\n"
                        "SigIgn:\t0000000000004000\n",
                        &s));
  EXPECT_TRUE(s.dead);
  EXPECT_EQ(s.process, 0u);
  EXPECT_FALSE(ParseThreadStatus("State:\tS\n", &s)) << "no signal lines";
}

// A status read between kill(SIGKILL) and the death (ParkWatch.DeathDropsTheCallAndItsFile saw
// it once in a full suite run): a dying thread's call is gone, not interrupted.
TEST(ThreadStatus, APendingKillMeansDying) {
  ThreadSignals s;
  ASSERT_TRUE(
      ParseThreadStatus("State:\tS (sleeping)\nSigPnd:\t0000000000000000\n"
                        "ShdPnd:\t0000000000000100\nSigBlk:\t0\nSigIgn:\t0\n",
                        &s));
  EXPECT_TRUE(Dying(s)) << "SIGKILL pending for the process";
  ASSERT_TRUE(
      ParseThreadStatus("State:\tS (sleeping)\nSigPnd:\t0000000000000100\n"
                        "ShdPnd:\t0\nSigBlk:\t0\nSigIgn:\t0\n",
                        &s));
  EXPECT_TRUE(Dying(s)) << "SIGKILL pending for the thread";
  ASSERT_TRUE(
      ParseThreadStatus("State:\tS (sleeping)\nSigPnd:\t0000000000000200\n"
                        "ShdPnd:\t0\nSigBlk:\t0\nSigIgn:\t0\n",
                        &s));
  EXPECT_FALSE(Dying(s)) << "SIGUSR1 interrupts, it does not kill";
}

TEST(ParkWatch, ASignalPendingForAProcessInterruptsItsCall) {
  StoppedChild child;
  ParkWatch watch(Fast());
  auto call = std::make_shared<FakeCall>();
  watch.Watch(call, child.pid());
  ASSERT_TRUE(kill(child.pid(), SIGUSR1) == 0);
  ASSERT_TRUE(call->done.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_TRUE(call->interrupted);
  EXPECT_FALSE(call->thread) << "kill() is process-directed";
}

TEST(ParkWatch, AThreadDirectedSignalAsksForTheRestartCode) {
  StoppedChild child;
  ParkWatch watch(Fast());
  auto call = std::make_shared<FakeCall>();
  watch.Watch(call, child.pid());
  ASSERT_EQ(syscall(SYS_tgkill, child.pid(), child.pid(), SIGUSR1), 0);
  ASSERT_TRUE(call->done.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_TRUE(call->interrupted);
  EXPECT_TRUE(call->thread);
}

TEST(ParkWatch, ABlockedOrIgnoredSignalDoesNotInterrupt) {
  StoppedChild child;
  ParkWatch watch(Fast());
  auto call = std::make_shared<FakeCall>();
  watch.Watch(call, child.pid());
  // SIGCHLD's default is to ignore it: never queued. Then the call is confirmed pending once (it
  // reached the longest interval) and goes on being watched.
  ASSERT_EQ(kill(child.pid(), SIGCHLD), 0);
  while (call->pending_asks.load() == 0) absl::SleepFor(absl::Milliseconds(1));
  EXPECT_FALSE(call->ended);
  EXPECT_EQ(watch.watched(), 1u);
  EXPECT_GT(watch.stats().checks, 0u);
}

TEST(ParkWatch, DeathDropsTheCallAndItsFile) {
  auto child = std::make_unique<StoppedChild>();
  ParkWatch watch(Fast());
  auto call = std::make_shared<FakeCall>();
  watch.Watch(call, child->pid());
  // Let it open the status file first: from then on a read, not an open, must notice the end.
  while (watch.stats().checks == 0) absl::SleepFor(absl::Milliseconds(1));
  child->Kill();
  ASSERT_TRUE(call->done.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_TRUE(call->gone);
  while (watch.watched() != 0) absl::SleepFor(absl::Milliseconds(1));
}

TEST(ParkWatch, ACallTheKernelNoLongerHoldsIsGoneOnceConfirmed) {
  // A live thread whose call is not pending: its tid was reused after the call's thread died.
  StoppedChild child;
  ParkWatch watch(Fast());
  auto call = std::make_shared<FakeCall>();
  call->pending = false;
  watch.Watch(call, child.pid());
  ASSERT_TRUE(call->done.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_TRUE(call->gone);
  EXPECT_EQ(call->pending_asks.load(), 1);
}

TEST(ParkWatch, AnEndedOrForgottenCallIsNoLongerWatched) {
  StoppedChild child;
  ParkWatch watch(Fast());
  auto ended = std::make_shared<FakeCall>(), forgotten = std::make_shared<FakeCall>();
  watch.Watch(ended, child.pid());
  uint64_t ticket = watch.Watch(forgotten, child.pid());
  watch.Forget(ticket);
  ended->ended = true;
  while (watch.watched() != 0) absl::SleepFor(absl::Milliseconds(1));
  EXPECT_FALSE(ended->interrupted || ended->gone);
  EXPECT_FALSE(forgotten->interrupted || forgotten->gone);
  // A call whose last reference went is dropped from the watch without a callback.
  auto dropped = std::make_shared<FakeCall>();
  watch.Watch(dropped, child.pid());
  dropped.reset();
  while (watch.watched() != 0) absl::SleepFor(absl::Milliseconds(1));
}

// A sentry whose guest never parks a wait has no watch thread: it starts with the first call
// watched, and serves it. Guest threads that park their first calls at once start one.
TEST(ParkWatch, ItsThreadStartsWithTheFirstWatchedCall) {
  StoppedChild child;
  const std::set<pid_t> before = Tasks();
  { ParkWatch unused(Fast()); }  // nothing to join
  {
    ParkWatch watch(Fast());
    EXPECT_TRUE(TasksAdded(before).empty()) << "made: no thread";
    constexpr int kWatchers = 8;
    std::vector<std::shared_ptr<FakeCall>> calls;
    for (int i = 0; i < kWatchers; ++i) calls.push_back(std::make_shared<FakeCall>());
    const std::set<pid_t> added =
        TasksAddedByRace(before, kWatchers, [&](int i) { watch.Watch(calls[i], child.pid()); });
    EXPECT_EQ(added.size(), 1u) << "watched: one thread";
    ASSERT_EQ(kill(child.pid(), SIGUSR1), 0);
    for (auto& call : calls) {
      ASSERT_TRUE(call->done.WaitForNotificationWithTimeout(absl::Seconds(10)));
      EXPECT_TRUE(call->interrupted);
    }
  }
  EXPECT_EQ(TasksAddedBecome(before, 0), 0u) << "destroyed: joined";
}

}  // namespace
}  // namespace nvsentry::sentry
