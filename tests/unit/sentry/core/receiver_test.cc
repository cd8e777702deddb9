// The receiver against a real seccomp listener: a thread of the test traps its getppid(2) calls
// as a guest's trapped calls are (argument 0: fast, 1: slow). The receiver's threads are detached
// and end with the process, so the receiver and its listener are never destroyed here.
#include "sentry/core/receiver.h"

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstddef>
#include <memory>
#include <set>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"
#include "sentry/core/listener.h"
#include "tests/unit/tasks.h"

namespace nvsentry::sentry {
namespace {

using nvsentry::testing::Tasks;
using nvsentry::testing::TasksAdded;

constexpr long kFast = 0, kSlow = 1;

pid_t Tid() { return static_cast<pid_t>(syscall(SYS_gettid)); }

// Traps getppid(2) of the calling thread and of the threads it makes from now on; the listener,
// or -1.
int TrapGetppid() {
#if defined(__x86_64__)
  constexpr uint32_t kArch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
  constexpr uint32_t kArch = AUDIT_ARCH_AARCH64;
#endif
  sock_filter code[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kArch, 0, 3),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  sock_fprog prog{static_cast<unsigned short>(sizeof code / sizeof code[0]), code};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return -1;
  return static_cast<int>(
      syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog));
}

// A thread whose getppid calls are trapped, making them when asked: Call(kinds) makes one call
// per kind at once, each on a thread of its own (the first on this one).
class Guest {
 public:
  Guest() : thread_([this] { Run(); }) { ready_.WaitForNotification(); }
  ~Guest() {
    {
      absl::MutexLock l(&mu_);
      quit_ = true;
    }
    thread_.join();
  }
  int listener_fd() const { return fd_; }
  // Every thread that made calls, to leave out of the counts.
  std::set<pid_t> tids() {
    absl::MutexLock l(&mu_);
    return tids_;
  }
  std::vector<long> Call(const std::vector<long>& kinds) {
    absl::MutexLock l(&mu_);
    kinds_ = kinds;
    pending_ = true;
    mu_.Await(absl::Condition(
        +[](bool* p) { return !*p; }, &pending_));
    return results_;
  }

 private:
  void Run() {
    fd_ = TrapGetppid();
    {
      absl::MutexLock l(&mu_);
      tids_.insert(Tid());
    }
    ready_.Notify();
    for (;;) {
      std::vector<long> kinds;
      {
        absl::MutexLock l(&mu_);
        auto asked = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return pending_ || quit_; };
        mu_.Await(absl::Condition(&asked));
        if (quit_) return;
        kinds = kinds_;
      }
      std::vector<long> results(kinds.size());
      std::vector<std::thread> others;
      for (size_t i = 1; i < kinds.size(); ++i)
        others.emplace_back([this, &kinds, &results, i] {
          {
            absl::MutexLock l(&mu_);
            tids_.insert(Tid());
          }
          results[i] = syscall(SYS_getppid, kinds[i]);
        });
      results[0] = syscall(SYS_getppid, kinds[0]);
      for (auto& t : others) t.join();
      absl::MutexLock l(&mu_);
      results_ = results;
      pending_ = false;
    }
  }

  int fd_ = -1;
  absl::Notification ready_;
  absl::Mutex mu_;
  std::vector<long> kinds_ ABSL_GUARDED_BY(mu_), results_ ABSL_GUARDED_BY(mu_);
  bool pending_ ABSL_GUARDED_BY(mu_) = false;
  bool quit_ ABSL_GUARDED_BY(mu_) = false;
  std::set<pid_t> tids_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;
};

// What the receiver's threads did. A call answers 7; with hold_slow, a slow call waits (at most
// 10 s) until two slow calls are inside at once and answers 2 if they were, 1 if not.
struct Served {
  absl::Mutex mu;
  std::vector<pid_t> by ABSL_GUARDED_BY(mu);  // the thread that served each call
  bool hold_slow ABSL_GUARDED_BY(mu) = false;
  int slow_inside ABSL_GUARDED_BY(mu) = 0;
};

// The pool's threads and the stall watch start when first needed: a guest that makes no trapped
// call costs the receiving thread only, one that makes fast calls only no pool thread, and the
// pool grows by one thread for each slow call no started thread is free to take, up to its size.
// (Whether a slow call right after another finds the first thread free again is the scheduler's
// choice, so the counts are taken where they do not depend on it.)
TEST(Receiver, ThreadsStartAtTheirFirstUse) {
  Guest guest;
  if (guest.listener_fd() < 0) GTEST_SKIP() << "no seccomp listener here";
  const std::set<pid_t> before = Tasks();
  auto added = [&] {
    std::set<pid_t> a = TasksAdded(before);
    for (pid_t t : guest.tids()) a.erase(t);
    return a;
  };
  auto served = std::make_shared<Served>();
  auto serve = [served, listener = new Listener(guest.listener_fd())](const seccomp_notif& req) {
    int64_t value = 7;
    {
      absl::MutexLock l(&served->mu);
      // The first call is held a while: the watch, started for it, looks at it meanwhile.
      if (served->by.empty()) absl::SleepFor(absl::Milliseconds(20));
      served->by.push_back(Tid());
      if (req.data.args[0] == kSlow && served->hold_slow) {
        ++served->slow_inside;
        auto two = [s = served.get()]()
                       ABSL_EXCLUSIVE_LOCKS_REQUIRED(s->mu) { return s->slow_inside >= 2; };
        value = served->mu.AwaitWithTimeout(absl::Condition(&two), absl::Seconds(10)) ? 2 : 1;
      }
    }
    listener->Return(req.id, value);
  };
  Receiver::Options o;
  o.pool_threads = 2;
  o.stall_after = absl::Hours(1);  // no take-over, whatever the scheduler does
  auto* receiver = new Receiver(
      *new Listener(guest.listener_fd()), o,
      [](const seccomp_notif& req) { return req.data.args[0] == kSlow; }, serve, nullptr);
  EXPECT_TRUE(added().empty()) << "made: no thread";

  receiver->Start();
  const std::set<pid_t> receiving = added();
  ASSERT_EQ(receiving.size(), 1u) << "started: the receiving thread only";
  const pid_t receiver_tid = *receiving.begin();

  EXPECT_EQ(guest.Call({kFast}), std::vector<long>{7});
  std::set<pid_t> now = added();
  EXPECT_EQ(now.size(), 2u) << "the first fast call: the stall watch starts, no pool thread";
  EXPECT_EQ(receiver->stats().takeovers, 0u) << "a call held 20 ms of the hour it may take";
  {
    absl::MutexLock l(&served->mu);
    EXPECT_EQ(served->by.back(), receiver_tid) << "a fast call is served where it is received";
  }

  EXPECT_EQ(guest.Call({kSlow}), std::vector<long>{7});
  now = added();
  EXPECT_EQ(now.size(), 3u) << "the first slow call: one pool thread";
  {
    absl::MutexLock l(&served->mu);
    EXPECT_NE(served->by.back(), receiver_tid);
    EXPECT_TRUE(now.contains(served->by.back()));
  }

  // Two slow calls at once run at once: the second starts the pool's second thread. Of three,
  // one waits for a free thread (the pool is full).
  {
    absl::MutexLock l(&served->mu);
    served->hold_slow = true;
  }
  EXPECT_EQ(guest.Call({kSlow, kSlow}), (std::vector<long>{2, 2}));
  EXPECT_EQ(added().size(), 4u);
  {
    absl::MutexLock l(&served->mu);
    served->slow_inside = 0;
  }
  EXPECT_EQ(guest.Call({kSlow, kSlow, kSlow}), (std::vector<long>{2, 2, 2}));
  EXPECT_EQ(added().size(), 4u) << "never more than the pool's size";
  EXPECT_EQ(receiver->stats().handed_off, 6u);
  EXPECT_EQ(receiver->stats().served_inline, 1u);
}

}  // namespace
}  // namespace nvsentry::sentry
