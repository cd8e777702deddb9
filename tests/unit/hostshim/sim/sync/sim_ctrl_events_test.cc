// The syncpoint events, module mutexes and small ioctls of /dev/nvhost-ctrl on the simulated GPU,
// driven through the device's ioctls as a guest would (Switchbrew's codes and layouts; the client
// fence-wait sequence of the reference: ALLOC_EVENT, QueryEvent, WAIT_EVENT_EX, event, CLEAR).
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "abi/catalogue.h"
#include "abi/devices/nvhost_ctrl.h"
#include "gtest/gtest.h"
#include "hostshim/budget.h"
#include "hostshim/sim/sync/ctrl_device.h"

namespace nvsentry::hostshim::sim {
namespace {

namespace ctrl = abi::nvhost_ctrl;
using abi::NvError;

// Switchbrew's layouts, typed in here.
struct Slot {
  uint32_t event_slot;
};
struct SlotMask {
  uint64_t event_slot_mask;
};
struct Mutex {
  uint32_t id;
  uint32_t lock;
};
struct Shift {
  uint32_t syncpt_shift;
};
struct Config {
  char name[0x41];
  char key[0x41];
  char value[0x101];
};
struct RegRdWr {
  uint32_t id, num_offsets, block_size, offsets, values, write;
};

class NoParker : public Parker {
 public:
  std::shared_ptr<Continuation> Park() override {
    ADD_FAILURE() << "an event ioctl parked";
    return nullptr;
  }
};

template <typename T>
NvError Do(DeviceBackend& dev, uint32_t code, T& arg) {
  const abi::IoctlDesc* d = abi::FindIoctl(abi::Device(abi::DeviceId::kNvhostCtrl), code);
  EXPECT_NE(d, nullptr);
  EXPECT_EQ(sizeof(T), d->fixed_size());
  NoParker parker;
  std::span<uint8_t> a(reinterpret_cast<uint8_t*>(&arg), sizeof arg);
  Call call{*d, a, parker, abi::Via::kDirect, {}, {}, {}, nullptr};
  Result r = dev.Ioctl(call);
  EXPECT_FALSE(r.parked);
  return r.err;
}

// True when `fd` becomes readable within `ms`.
bool Readable(int fd, int ms) {
  pollfd p{fd, POLLIN, 0};
  return poll(&p, 1, ms) == 1 && (p.revents & POLLIN);
}

constexpr uint32_t kEvent = 0x10000000;

class SimCtrlEventsTest : public ::testing::Test {
 protected:
  NvError Alloc(uint32_t slot, CtrlDevice* d = nullptr) {
    Slot s{slot};
    return Do(d ? *d : dev_, ctrl::kSyncptAllocEvent, s);
  }
  NvError Free(uint32_t slot) {
    Slot s{slot};
    return Do(dev_, ctrl::kSyncptFreeEvent, s);
  }
  NvError FreeBatch(uint64_t mask) {
    SlotMask m{mask};
    return Do(dev_, ctrl::kSyncptFreeEventBatch, m);
  }
  NvError Clear(uint32_t event) {
    Slot s{event};
    return Do(dev_, ctrl::kSyncptClearEventWait, s);
  }
  NvError WaitEx(uint32_t id, uint32_t thresh, int32_t timeout, uint32_t slot, uint32_t* value) {
    ctrl::SyncptWaitEx w{id, thresh, timeout, slot};
    NvError e = Do(dev_, ctrl::kSyncptWaitEventEx, w);
    *value = w.value;
    return e;
  }
  NvError WaitAlloc(uint32_t id, uint32_t thresh, int32_t timeout, uint32_t* value) {
    ctrl::SyncptWaitEx w{id, thresh, timeout, 0x5A5A5A5A};
    NvError e = Do(dev_, ctrl::kSyncptWaitEvent, w);
    *value = w.value;
    return e;
  }
  int Query(uint32_t event_id) {
    int fd = -1;
    NvError e = dev_.QueryEvent(event_id, &fd);
    EXPECT_EQ(e, NvError::kSuccess) << std::hex << event_id;
    return fd;
  }

  Syncpoints syncpoints_{absl::Milliseconds(10)};
  ModuleMutexes mutexes_;
  CtrlDevice dev_{syncpoints_, mutexes_};
};

TEST_F(SimCtrlEventsTest, ArmedEventFiresWhenTheSyncpointReachesTheThreshold) {
  ASSERT_EQ(Alloc(1), NvError::kSuccess);
  const int fd = Query(kEvent | 1);
  ASSERT_GE(fd, 0);
  uint32_t v;
  ASSERT_EQ(WaitEx(20, 2, -1, 1, &v), NvError::kTimeout) << "not reached: armed, answered at once";
  EXPECT_EQ(v, (20u << 4) | 1u) << "Switchbrew: event_slot | syncpt_id << 4";
  EXPECT_TRUE(dev_.events().Armed(1));
  EXPECT_FALSE(Readable(fd, 0));
  syncpoints_.Increment(20);
  EXPECT_FALSE(Readable(fd, 20)) << "1 of 2";
  std::thread incr([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    syncpoints_.Increment(20);
  });
  EXPECT_TRUE(Readable(fd, 5000));
  incr.join();
  uint64_t count = 0;
  ASSERT_EQ(read(fd, &count, sizeof count), static_cast<ssize_t>(sizeof count));
  EXPECT_EQ(count, 1u);
  EXPECT_FALSE(dev_.events().Armed(1));
  // The slot is idle again: a later wait arms it afresh and fires again.
  ASSERT_EQ(WaitEx(20, 3, 1000, 1, &v), NvError::kTimeout);
  EXPECT_FALSE(Readable(fd, 0));
  syncpoints_.Increment(20);
  EXPECT_TRUE(Readable(fd, 5000));
  EXPECT_EQ(Free(1), NvError::kSuccess);
}

TEST_F(SimCtrlEventsTest, AlreadyReachedAnswersAtOnceWithTheValue) {
  ASSERT_EQ(Alloc(2), NvError::kSuccess);
  for (int i = 0; i < 3; ++i) syncpoints_.Increment(21);
  uint32_t v = 0;
  EXPECT_EQ(WaitEx(21, 2, -1, 2, &v), NvError::kSuccess);
  EXPECT_EQ(v, 3u);
  EXPECT_EQ(WaitEx(21, 3, 0, 2, &v), NvError::kSuccess);
  EXPECT_EQ(v, 3u);
  EXPECT_FALSE(dev_.events().Armed(2));
  // Wrap-around: 0xFFFFFFF0 is 19 increments behind 3.
  EXPECT_EQ(WaitEx(21, 0xFFFFFFF0u, -1, 2, &v), NvError::kSuccess);
  EXPECT_EQ(WaitAlloc(21, 1, -1, &v), NvError::kSuccess);
  EXPECT_EQ(v, 3u);
}

TEST_F(SimCtrlEventsTest, TimeoutZeroAnswersTimeoutWithoutArming) {
  ASSERT_EQ(Alloc(4), NvError::kSuccess);
  const int fd = Query(kEvent | 4);
  uint32_t v;
  EXPECT_EQ(WaitEx(22, 1, 0, 4, &v), NvError::kTimeout);
  EXPECT_FALSE(dev_.events().Armed(4));
  syncpoints_.Increment(22);
  EXPECT_FALSE(Readable(fd, 50)) << "a zero-timeout wait leaves nothing armed";
  EXPECT_EQ(WaitAlloc(23, 1, 0, &v), NvError::kTimeout);
  EXPECT_EQ(v & kEvent, 0u) << "no event allocated";
  EXPECT_EQ(syncpoints_.ParkedCount(), 0u);
}

TEST_F(SimCtrlEventsTest, SlotsOutOfRangeAreRefusedBeforeUse) {
  uint32_t v;
  EXPECT_EQ(Alloc(64), NvError::kBadParameter);
  EXPECT_EQ(Alloc(0xFFFFFFFF), NvError::kBadParameter);
  EXPECT_EQ(Free(64), NvError::kBadParameter);
  EXPECT_EQ(Clear(64), NvError::kBadParameter);
  EXPECT_EQ(Clear(kEvent | 64), NvError::kBadParameter);
  EXPECT_EQ(Clear(0x20000001), NvError::kBadParameter);
  EXPECT_EQ(WaitEx(20, 1, -1, 64, &v), NvError::kBadParameter);
  EXPECT_EQ(WaitEx(20, 1, -1, 0x80000000u, &v), NvError::kBadParameter);
  EXPECT_EQ(WaitEx(20, 1, 0, 1000000, &v), NvError::kBadParameter);
  int fd = -1;
  EXPECT_EQ(dev_.QueryEvent(kEvent | 64, &fd), NvError::kBadParameter);
  EXPECT_EQ(dev_.QueryEvent(kEvent | 0xFFFF, &fd), NvError::kBadParameter);
  EXPECT_EQ(dev_.QueryEvent(1, &fd), NvError::kBadParameter) << "not an event id";
  EXPECT_EQ(dev_.QueryEvent(0x30000001, &fd), NvError::kBadParameter);
  // Slot 63 is the last one.
  EXPECT_EQ(Alloc(63), NvError::kSuccess);
  EXPECT_GE(Query(kEvent | 63), 0);
  // Syncpoint ids are checked too.
  EXPECT_EQ(WaitEx(192, 1, -1, 63, &v), NvError::kBadParameter);
  EXPECT_EQ(WaitAlloc(0xFFFFFFFF, 1, -1, &v), NvError::kBadParameter);
}

TEST_F(SimCtrlEventsTest, UnallocatedSlots) {
  uint32_t v;
  EXPECT_EQ(WaitEx(20, 1, -1, 5, &v), NvError::kBadParameter);
  EXPECT_EQ(WaitEx(20, 1, 0, 5, &v), NvError::kBadParameter);
  int fd = -1;
  EXPECT_EQ(dev_.QueryEvent(kEvent | 5, &fd), NvError::kBadParameter);
  EXPECT_EQ(Free(5), NvError::kBadParameter);
  EXPECT_EQ(Clear(5), NvError::kBadParameter);
  EXPECT_EQ(syncpoints_.ParkedCount(), 0u);
}

TEST_F(SimCtrlEventsTest, FreeAndReallocate) {
  ASSERT_EQ(Alloc(3), NvError::kSuccess);
  EXPECT_EQ(Free(3), NvError::kSuccess);
  EXPECT_EQ(Free(3), NvError::kBadParameter) << "already freed";
  ASSERT_EQ(Alloc(3), NvError::kSuccess);
  uint32_t v;
  ASSERT_EQ(WaitEx(24, 1, -1, 3, &v), NvError::kTimeout);
  EXPECT_EQ(Free(3), NvError::kBusy) << "armed";
  EXPECT_EQ(Alloc(3), NvError::kBusy) << "armed";
  EXPECT_EQ(WaitEx(24, 2, -1, 3, &v), NvError::kBusy) << "one wait per slot";
  EXPECT_EQ(Clear(3), NvError::kSuccess);
  EXPECT_EQ(Free(3), NvError::kSuccess);
  EXPECT_FALSE(dev_.events().Allocated(3));
}

TEST_F(SimCtrlEventsTest, FreeBatch) {
  for (uint32_t s : {0u, 1u, 2u, 5u, 63u}) ASSERT_EQ(Alloc(s), NvError::kSuccess);
  EXPECT_EQ(FreeBatch((1ull << 0) | (1ull << 1) | (1ull << 40) | (1ull << 63)), NvError::kSuccess);
  EXPECT_FALSE(dev_.events().Allocated(0));
  EXPECT_FALSE(dev_.events().Allocated(1));
  EXPECT_FALSE(dev_.events().Allocated(63));
  EXPECT_TRUE(dev_.events().Allocated(2));
  EXPECT_TRUE(dev_.events().Allocated(5));
  uint32_t v;
  ASSERT_EQ(WaitEx(25, 1, -1, 5, &v), NvError::kTimeout);
  EXPECT_EQ(FreeBatch(~0ull), NvError::kBusy) << "slot 5 is armed";
  EXPECT_TRUE(dev_.events().Allocated(2)) << "a refused batch frees nothing";
  EXPECT_EQ(Clear(kEvent | 5), NvError::kSuccess);
  EXPECT_EQ(FreeBatch(~0ull), NvError::kSuccess);
  EXPECT_FALSE(dev_.events().Allocated(2));
  EXPECT_FALSE(dev_.events().Allocated(5));
  EXPECT_EQ(FreeBatch(0), NvError::kSuccess);
}

TEST_F(SimCtrlEventsTest, ClearEventWaitCancelsTheArmedWait) {
  ASSERT_EQ(Alloc(6), NvError::kSuccess);
  const int fd = Query(kEvent | 6);
  uint32_t v;
  ASSERT_EQ(WaitEx(26, 1, 100, 6, &v), NvError::kTimeout);
  // The client's give-up path passes the event id it queried.
  EXPECT_EQ(Clear(kEvent | 6), NvError::kSuccess);
  EXPECT_FALSE(dev_.events().Armed(6));
  syncpoints_.Increment(26);
  EXPECT_FALSE(Readable(fd, 50)) << "a cancelled wait never fires";
  // A bare slot clears too, and drops a signal nobody read.
  ASSERT_EQ(WaitEx(26, 2, -1, 6, &v), NvError::kTimeout);
  syncpoints_.Increment(26);
  ASSERT_TRUE(Readable(fd, 5000));
  EXPECT_EQ(Clear(6), NvError::kSuccess);
  EXPECT_FALSE(Readable(fd, 0));
  // The cancelled waiter leaves the syncpoint table at its next sweep.
  for (int i = 0; i < 200 && syncpoints_.ParkedCount() != 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(syncpoints_.ParkedCount(), 0u);
}

TEST_F(SimCtrlEventsTest, ArmingDropsAStaleSignal) {
  ASSERT_EQ(Alloc(7), NvError::kSuccess);
  const int fd = Query(kEvent | 7);
  uint32_t v;
  ASSERT_EQ(WaitEx(27, 1, -1, 7, &v), NvError::kTimeout);
  syncpoints_.Increment(27);
  ASSERT_TRUE(Readable(fd, 5000));
  ASSERT_EQ(WaitEx(27, 5, -1, 7, &v), NvError::kTimeout);
  EXPECT_FALSE(Readable(fd, 0)) << "the new wait is not answered by the old signal";
}

TEST_F(SimCtrlEventsTest, AllocatingWaitPicksASlot) {
  uint32_t v;
  ASSERT_EQ(Alloc(0), NvError::kSuccess);  // the guest's own slot is never picked
  ASSERT_EQ(WaitAlloc(30, 1, 100, &v), NvError::kTimeout);
  EXPECT_EQ(v & 0xF0000000u, kEvent) << "is_valid";
  EXPECT_EQ((v >> 16) & 0xFFF, 30u);
  const uint32_t slot = v & 0xFFFF;
  EXPECT_EQ(slot, 1u) << "the lowest free slot";
  EXPECT_TRUE(dev_.events().Armed(slot));
  const int fd = Query(v);  // QueryEvent with the answer as is
  ASSERT_GE(fd, 0);
  syncpoints_.Increment(30);
  EXPECT_TRUE(Readable(fd, 5000));
  EXPECT_EQ(Clear(v), NvError::kSuccess);
  // The idle slot it picked for syncpoint 30 is picked again for 30.
  uint32_t v2;
  ASSERT_EQ(WaitAlloc(30, 2, 100, &v2), NvError::kTimeout);
  EXPECT_EQ(v2 & 0xFFFF, slot);
  // Another syncpoint while that one is armed: a new slot.
  uint32_t v3;
  ASSERT_EQ(WaitAlloc(31, 1, 100, &v3), NvError::kTimeout);
  EXPECT_EQ(v3 & 0xFFFF, 2u);
}

TEST_F(SimCtrlEventsTest, AllocatingWaitRunsOutOfSlots) {
  uint32_t v;
  for (uint32_t i = 0; i < 64; ++i) ASSERT_EQ(WaitAlloc(32, 1000, -1, &v), NvError::kTimeout) << i;
  EXPECT_EQ(WaitAlloc(32, 1000, -1, &v), NvError::kBusy);
  EXPECT_EQ(syncpoints_.ParkedCount(), 64u);
  EXPECT_EQ(FreeBatch(~0ull), NvError::kBusy);
}

TEST_F(SimCtrlEventsTest, SessionEndCancelsItsEvents) {
  {
    CtrlDevice other(syncpoints_, mutexes_);
    ASSERT_EQ(Alloc(1, &other), NvError::kSuccess);
    ctrl::SyncptWaitEx w{33, 1, -1, 1};
    ASSERT_EQ(Do(other, ctrl::kSyncptWaitEventEx, w), NvError::kTimeout);
    EXPECT_EQ(syncpoints_.ParkedCount(), 1u);
    int fd = -1;
    EXPECT_EQ(dev_.QueryEvent(kEvent | 1, &fd), NvError::kBadParameter) << "events are per session";
  }
  for (int i = 0; i < 200 && syncpoints_.ParkedCount() != 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(syncpoints_.ParkedCount(), 0u);
  syncpoints_.Increment(33);  // nothing left to fire
}

// What a parked SYNCPT_WAIT's parker answers when the parked_waits budget is spent.
class RefusingParker : public Parker {
 public:
  std::shared_ptr<Continuation> Park() override {
    ++asked;
    return nullptr;
  }
  int asked = 0;
};

TEST_F(SimCtrlEventsTest, ArmedEventsTakeTheParkedWaitsBudget) {
  abi::Budgets b;
  b.parked_waits = 2;
  auto budget = std::make_shared<BudgetAccount>(b);
  {
    CtrlDevice d(syncpoints_, mutexes_, budget);
    for (uint32_t s = 0; s < 4; ++s) ASSERT_EQ(Alloc(s, &d), NvError::kSuccess);
    auto wait_ex = [&](uint32_t slot, uint32_t thresh) {
      ctrl::SyncptWaitEx w{40, thresh, -1, slot};
      return Do(d, ctrl::kSyncptWaitEventEx, w);
    };
    EXPECT_EQ(wait_ex(0, 1), NvError::kTimeout);
    EXPECT_EQ(wait_ex(1, 2), NvError::kTimeout);
    EXPECT_EQ(budget->used(BudgetKind::kParkedWaits), 2u);
    // Spent: refused with the driver's out-of-waiters answer, nothing armed.
    EXPECT_EQ(wait_ex(2, 3), NvError::kInsufficientMemory);
    EXPECT_FALSE(d.events().Armed(2));
    ctrl::SyncptWaitEx picked{40, 3, -1, 0};
    EXPECT_EQ(Do(d, ctrl::kSyncptWaitEvent, picked), NvError::kInsufficientMemory);
    // A reached threshold needs no charge.
    EXPECT_EQ(wait_ex(2, 0), NvError::kSuccess);
    // Firing gives the charge back, and so does clearing.
    syncpoints_.Increment(40);
    EXPECT_EQ(budget->used(BudgetKind::kParkedWaits), 1u);
    EXPECT_EQ(wait_ex(2, 5), NvError::kTimeout);
    Slot clear{1};
    EXPECT_EQ(Do(d, ctrl::kSyncptClearEventWait, clear), NvError::kSuccess);
    EXPECT_EQ(budget->used(BudgetKind::kParkedWaits), 1u);
    EXPECT_EQ(wait_ex(3, 6), NvError::kTimeout);
    EXPECT_EQ(budget->used(BudgetKind::kParkedWaits), 2u);
  }
  // The session's end cancels its armed events: every charge is back.
  EXPECT_EQ(budget->used(BudgetKind::kParkedWaits), 0u);
  EXPECT_EQ(budget->peak(BudgetKind::kParkedWaits), 2u);
}

TEST_F(SimCtrlEventsTest, AWaitTheBudgetRefusesIsInsufficientMemory) {
  const abi::IoctlDesc* d =
      abi::FindIoctl(abi::Device(abi::DeviceId::kNvhostCtrl), ctrl::kSyncptWaitEx);
  ASSERT_NE(d, nullptr);
  RefusingParker parker;
  ctrl::SyncptWaitEx w{41, 1, -1, 0x12345678};
  std::span<uint8_t> a(reinterpret_cast<uint8_t*>(&w), sizeof w);
  Call call{*d, a, parker, abi::Via::kDirect, {}, {}, {}, nullptr};
  Result r = dev_.Ioctl(call);
  EXPECT_FALSE(r.parked);
  EXPECT_EQ(r.err, NvError::kInsufficientMemory);
  EXPECT_EQ(parker.asked, 1);
  EXPECT_EQ(syncpoints_.ParkedCount(), 0u);
  syncpoints_.Increment(41);  // nothing was left behind to complete
}

TEST_F(SimCtrlEventsTest, IncrementRacingSessionEnd) {
  for (int round = 0; round < 50; ++round) {
    auto d = std::make_unique<CtrlDevice>(syncpoints_, mutexes_);
    for (uint32_t s = 0; s < 8; ++s) {
      ASSERT_EQ(Alloc(s, d.get()), NvError::kSuccess);
      ctrl::SyncptWaitEx w{34, syncpoints_.Read(34) + 1, -1, s};
      ASSERT_EQ(Do(*d, ctrl::kSyncptWaitEventEx, w), NvError::kTimeout);
    }
    std::thread t([&] { syncpoints_.Increment(34); });
    d.reset();
    t.join();
  }
}

TEST_F(SimCtrlEventsTest, ConcurrentWaitersOnManySlots) {
  constexpr int kThreads = 4, kRounds = 50;
  for (uint32_t s = 0; s < kThreads; ++s) ASSERT_EQ(Alloc(s), NvError::kSuccess);
  std::vector<std::thread> threads;
  std::atomic<int> fired{0};
  for (uint32_t s = 0; s < kThreads; ++s) {
    threads.emplace_back([&, s] {
      const int fd = Query(kEvent | s);
      const uint32_t id = 40 + s;
      for (int r = 0; r < kRounds; ++r) {
        uint32_t v;
        NvError e = WaitEx(id, syncpoints_.Read(id) + 1, -1, s, &v);
        if (e != NvError::kTimeout) {
          ADD_FAILURE() << "wait " << static_cast<int>(e);
          return;
        }
        syncpoints_.Increment(id);
        if (!Readable(fd, 5000)) {
          ADD_FAILURE() << "slot " << s << " round " << r;
          return;
        }
        uint64_t c;
        (void)!read(fd, &c, sizeof c);
        fired++;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(fired.load(), kThreads * kRounds);
}

TEST_F(SimCtrlEventsTest, ModuleMutexes) {
  CtrlDevice other(syncpoints_, mutexes_);
  Mutex m{3, 1};
  EXPECT_EQ(Do(dev_, ctrl::kModuleMutex, m), NvError::kSuccess);
  EXPECT_EQ(Do(other, ctrl::kModuleMutex, m), NvError::kBusy) << "held by the first session";
  EXPECT_EQ(Do(dev_, ctrl::kModuleMutex, m), NvError::kSuccess) << "taking it again is a no-op";
  Mutex unlock{3, 0};
  EXPECT_EQ(Do(other, ctrl::kModuleMutex, unlock), NvError::kSuccess) << "not held: no-op";
  EXPECT_EQ(Do(other, ctrl::kModuleMutex, m), NvError::kBusy) << "still held by the first";
  EXPECT_EQ(Do(dev_, ctrl::kModuleMutex, unlock), NvError::kSuccess);
  EXPECT_EQ(Do(other, ctrl::kModuleMutex, m), NvError::kSuccess);
  Mutex zero{0, 1};
  EXPECT_EQ(Do(dev_, ctrl::kModuleMutex, zero), NvError::kSuccess);
  EXPECT_EQ(Do(other, ctrl::kModuleMutex, zero), NvError::kSuccess) << "lock 0 excludes nobody";
  Mutex bad{16, 1};
  EXPECT_EQ(Do(dev_, ctrl::kModuleMutex, bad), NvError::kBadParameter);
  bad = {1, 2};
  EXPECT_EQ(Do(dev_, ctrl::kModuleMutex, bad), NvError::kBadParameter);
  {
    CtrlDevice third(syncpoints_, mutexes_);
    Mutex five{5, 1};
    EXPECT_EQ(Do(third, ctrl::kModuleMutex, five), NvError::kSuccess);
    EXPECT_EQ(Do(dev_, ctrl::kModuleMutex, five), NvError::kBusy);
  }
  Mutex five{5, 1};
  EXPECT_EQ(Do(dev_, ctrl::kModuleMutex, five), NvError::kSuccess)
      << "released when its session closed";
}

TEST_F(SimCtrlEventsTest, GetConfigShiftAndRegRdWr) {
  Config c{};
  std::strcpy(c.name, "nv");
  std::strcpy(c.key, "NV_DEBUG_SOMETHING");
  EXPECT_EQ(Do(dev_, ctrl::kGetConfig, c), NvError::kConfigVarNotFound);
  std::memset(c.name, 'a', sizeof c.name);
  EXPECT_EQ(Do(dev_, ctrl::kGetConfig, c), NvError::kBadParameter) << "unterminated name";
  std::strcpy(c.name, "nv");
  std::memset(c.key, 'k', sizeof c.key);
  EXPECT_EQ(Do(dev_, ctrl::kGetConfig, c), NvError::kBadParameter) << "unterminated key";

  Shift s{0xFFFFFFFF};
  EXPECT_EQ(Do(dev_, ctrl::kSyncptGetShift, s), NvError::kSuccess);
  EXPECT_TRUE(s.syncpt_shift == 0x00 || s.syncpt_shift == 0x60) << "Switchbrew's two values";

  RegRdWr r{1, 1, 4, 0x1000, 0x2000, 0};
  EXPECT_EQ(Do(dev_, ctrl::kModuleRegRdWr, r), NvError::kNotSupported);
}

// Each eventfd the sentry holds is one open_fds charge (before: 64 events per session, not
// charged, took the sentry to its fd limit): refused with InsufficientMemory past the budget,
// given back by FREE_EVENT(_BATCH) and by the session's end.
TEST_F(SimCtrlEventsTest, EventFdsAreChargedToOpenFds) {
  abi::Budgets limits;
  limits.open_fds = 5;
  auto budget = std::make_shared<BudgetAccount>(limits);
  {
    CtrlDevice dev(syncpoints_, mutexes_, budget);
    for (uint32_t s = 0; s < 5; ++s) ASSERT_EQ(Alloc(s, &dev), NvError::kSuccess) << s;
    EXPECT_EQ(Alloc(5, &dev), NvError::kInsufficientMemory);
    EXPECT_EQ(budget->used(BudgetKind::kOpenFds), 5u);
    EXPECT_EQ(Alloc(4, &dev), NvError::kSuccess) << "allocating a slot again costs nothing";
    Slot one{1};
    ASSERT_EQ(Do(dev, ctrl::kSyncptFreeEvent, one), NvError::kSuccess);
    EXPECT_EQ(budget->used(BudgetKind::kOpenFds), 4u) << "FREE_EVENT closes the eventfd";
    ASSERT_EQ(Alloc(5, &dev), NvError::kSuccess);
    SlotMask two{(1ull << 2) | (1ull << 3)};
    ASSERT_EQ(Do(dev, ctrl::kSyncptFreeEventBatch, two), NvError::kSuccess);
    EXPECT_EQ(budget->used(BudgetKind::kOpenFds), 3u);
    // WAIT_EVENT on a reached fence takes a free slot only to give it back at once.
    syncpoints_.Increment(30);
    ctrl::SyncptWaitEx w{30, 1, -1, 0};
    ASSERT_EQ(Do(dev, ctrl::kSyncptWaitEvent, w), NvError::kSuccess);
    EXPECT_EQ(budget->used(BudgetKind::kOpenFds), 3u);
    // One that arms keeps its slot's eventfd.
    ctrl::SyncptWaitEx armed{30, 5, -1, 0};
    ASSERT_EQ(Do(dev, ctrl::kSyncptWaitEvent, armed), NvError::kTimeout);
    EXPECT_EQ(budget->used(BudgetKind::kOpenFds), 4u);
  }
  EXPECT_EQ(budget->used(BudgetKind::kOpenFds), 0u) << "the session's end closes them all";
  EXPECT_EQ(budget->peak(BudgetKind::kOpenFds), 5u);
}

}  // namespace
}  // namespace nvsentry::hostshim::sim
