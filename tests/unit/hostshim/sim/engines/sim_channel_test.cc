// GPU channels on the simulated GPU: submission through the real command processor on the runlist's
// engine threads, fences (Switchbrew flag bits, the Linux driver's +2), fence waits, the ring's
// Busy, faults and the error notifier, FORCE_RESET, WAIT, destruction with work queued, and the
// syncpoint allocator channels take their syncpoints from.
#include <poll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <thread>
#include <vector>

#include "abi/devices/channel.h"
#include "absl/synchronization/barrier.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "hostshim/budget.h"
#include "hostshim/sim/engines/gpu_channel.h"
#include "hostshim/sim/engines/runlist.h"
#include "hostshim/sim/memory/address_space.h"
#include "hostshim/sim/memory/nvmap.h"
#include "hostshim/sim/memory/nvmap_device.h"
#include "hostshim/sim/sync/syncpoints.h"
#include "tests/unit/fake_caller.h"
#include "tests/unit/tasks.h"

namespace nvsentry::hostshim::sim {
namespace {
namespace ch = abi::channel;
using abi::NvError;
using nvsentry::testing::Tasks;
using nvsentry::testing::TasksAdded;
using nvsentry::testing::TasksAddedBecome;
using nvsentry::testing::TasksAddedByRace;

const abi::IoctlDesc& Desc(uint32_t code) {
  for (const auto& d : ch::Ioctls())
    if (d.code == code) return d;
  ADD_FAILURE() << "no ioctl " << std::hex << code;
  return ch::Ioctls()[0];
}

class TestContinuation : public Continuation {
 public:
  explicit TestContinuation(std::vector<uint8_t> arg) : arg_(std::move(arg)) {}
  std::span<uint8_t> arg() override { return arg_; }
  void Finish(NvError err) override {
    finishes++;
    result = err;
    done.Notify();
  }
  bool Abandoned() override { return false; }
  std::vector<uint8_t> arg_;
  std::atomic<int> finishes{0};
  NvError result = NvError::kSuccess;
  absl::Notification done;
};

class TestParker : public Parker {
 public:
  explicit TestParker(std::span<uint8_t> arg) : arg_(arg) {}
  std::shared_ptr<Continuation> Park() override {
    parked = std::make_shared<TestContinuation>(std::vector<uint8_t>(arg_.begin(), arg_.end()));
    return parked;
  }
  std::span<uint8_t> arg_;
  std::shared_ptr<TestContinuation> parked;
};

// Pushbuffer words.
constexpr uint32_t Incr(uint32_t method_byte, uint32_t count, uint32_t subch = 0) {
  return (1u << 29) | (count << 16) | (subch << 13) | (method_byte >> 2);
}
std::vector<uint32_t> SyncptIncrWords(uint32_t id) {
  return {Incr(0x70, 1), 0, Incr(0x74, 1), (id << 8) | 1};  // SYNCPOINTA, SYNCPOINTB INCR
}
// A host semaphore acquire: wait until the u32 at `va` equals `payload`.
std::vector<uint32_t> SemAcquireWords(uint64_t va, uint32_t payload) {
  return {Incr(0x10, 4), static_cast<uint32_t>(va >> 32) & 0xFF, static_cast<uint32_t>(va), payload,
          1 /* ACQUIRE */};
}

ch::GpfifoEntry Entry(uint64_t va, uint32_t words) {
  return {static_cast<uint32_t>(va), static_cast<uint32_t>((va >> 32) & 0xFF) | (words << 10)};
}

template <typename Pred>
bool Eventually(Pred p, absl::Duration limit = absl::Seconds(5)) {
  absl::Time end = absl::Now() + limit;
  while (absl::Now() < end) {
    if (p()) return true;
    absl::SleepFor(absl::Milliseconds(1));
  }
  return p();
}

class SimChannel : public ::testing::Test {
 protected:
  SimChannel() {
    AsLayout l;
    l.small_start = 0x20000;
    l.small_end = 0x4000000;
    l.big_start = 0x4000000;
    l.big_end = 0x100000000;
    as_ = AddressSpace::Create(l, nullptr);
  }

  static abi::Budgets Limits() {
    abi::Budgets b;
    b.channels = 4;
    return b;
  }

  std::unique_ptr<GpuChannel> Open(NvError* err = nullptr, BudgetAccount* budget = nullptr) {
    std::unique_ptr<GpuChannel> c;
    NvError e = GpuChannel::Create(
        ChannelDeps{syncpoints_, runlist_, nvmap_, budget ? budget : &budget_}, &c);
    if (err) *err = e;
    return c;
  }

  // Runs one ioctl with a fixed-size argument.
  template <typename T>
  NvError Ioctl(GpuChannel& c, uint32_t code, T* arg, TestParker** parker_out = nullptr) {
    std::span<uint8_t> a{reinterpret_cast<uint8_t*>(arg), sizeof(T)};
    auto parker = std::make_unique<TestParker>(a);
    Call call{Desc(code), a, *parker};
    call.caller = &caller_;
    Result r = c.Ioctl(call);
    if (r.parked) {
      last_parker_ = std::move(parker);
      if (parker_out) *parker_out = last_parker_.get();
      return NvError::kSuccess;
    }
    return r.err;
  }
  NvError Ioctl0(GpuChannel& c, uint32_t code) {
    uint8_t none[1];
    TestParker parker({none, 0});
    Call call{Desc(code), {none, 0}, parker};
    call.caller = &caller_;
    return c.Ioctl(call).err;
  }

  // SUBMIT_GPFIFO with the entries inline (or, with `ioctl2`, SUBMIT_GPFIFO2 with them in the
  // second buffer).
  NvError Submit(GpuChannel& c, std::vector<ch::GpfifoEntry> entries, uint32_t flags,
                 ch::Fence* fence, bool ioctl2 = false) {
    std::vector<uint8_t> buf(sizeof(ch::SubmitGpfifoHeader) +
                             (ioctl2 ? 0 : entries.size() * sizeof(ch::GpfifoEntry)));
    ch::SubmitGpfifoHeader h{};
    h.num_entries = static_cast<uint32_t>(entries.size());
    h.flags = flags;
    h.fence = *fence;
    std::memcpy(buf.data(), &h, sizeof h);
    std::span<uint8_t> array;
    if (ioctl2) {
      array = {reinterpret_cast<uint8_t*>(entries.data()),
               entries.size() * sizeof(ch::GpfifoEntry)};
    } else {
      std::memcpy(buf.data() + sizeof h, entries.data(), entries.size() * sizeof(ch::GpfifoEntry));
      array = {buf.data() + sizeof h, entries.size() * sizeof(ch::GpfifoEntry)};
    }
    std::span<uint8_t> arrays[] = {array};
    TestParker parker(buf);
    Call call{Desc(ioctl2 ? ch::kSubmitGpfifo2 : ch::kSubmitGpfifo), buf, parker};
    call.arrays = arrays;
    call.caller = &caller_;
    Result r = c.Ioctl(call);
    EXPECT_FALSE(r.parked);
    std::memcpy(&h, buf.data(), sizeof h);
    if (r.err == NvError::kSuccess) *fence = h.fence;
    return r.err;
  }

  // A channel ready to run: address space bound, ring of `entries`, 3D context.
  std::unique_ptr<GpuChannel> Ready(uint32_t entries = 0x800, BudgetAccount* budget = nullptr) {
    auto c = Open(nullptr, budget);
    EXPECT_TRUE(c);
    if (!c) return c;
    EXPECT_EQ(c->BindAddressSpace(as_), NvError::kSuccess);
    ch::AllocGpfifoEx a{};
    a.num_entries = entries;
    a.flags = 1;
    EXPECT_EQ(Ioctl(*c, ch::kAllocGpfifoEx2, &a), NvError::kSuccess);
    ch::AllocObjCtx o{0xB197, 0, 0};
    EXPECT_EQ(Ioctl(*c, ch::kAllocObjCtx, &o), NvError::kSuccess);
    return c;
  }

  // An nvmap object of `size` bytes in sentry memory, held by this process.
  std::shared_ptr<NvmapObject> Object(uint32_t size, uint32_t* handle_out = nullptr) {
    uint32_t handle = 0, align = 0x1000;
    EXPECT_EQ(nvmap_.Create(getpid(), size, &handle), NvError::kSuccess);
    EXPECT_EQ(nvmap_.Alloc(getpid(), handle, 0, 0, &align, 0, 0), NvError::kSuccess);
    if (handle_out) *handle_out = handle;
    return nvmap_.Resolve(getpid(), handle);
  }

  // Puts `words` in a fresh object mapped into the address space; returns its GPU VA.
  uint64_t Pushbuffer(const std::vector<uint32_t>& words) {
    auto obj = Object(0x1000);
    EXPECT_TRUE(obj->Write(0, {reinterpret_cast<const uint8_t*>(words.data()), words.size() * 4}));
    AddressSpace::MapArgs m;
    m.object = obj;
    uint64_t va = 0;
    int32_t kind = 0;
    EXPECT_EQ(as_->Map(m, &va, &kind), NvError::kSuccess);
    return va;
  }

  uint32_t Read32(NvmapObject& o, uint64_t off) {
    uint32_t v = 0;
    EXPECT_TRUE(o.Read(off, {reinterpret_cast<uint8_t*>(&v), 4}));
    return v;
  }

  BudgetAccount budget_{Limits()};
  Syncpoints syncpoints_{absl::Milliseconds(10)};
  Runlist runlist_{2};
  Nvmap nvmap_{&budget_, 0, 0};
  std::shared_ptr<AddressSpace> as_;
  FakeCaller caller_;
  std::unique_ptr<TestParker> last_parker_;
};

TEST(SimSyncpointAlloc, NeverHandsOutReservedIdsAndRunsOut) {
  Syncpoints s;
  std::vector<uint32_t> got;
  uint32_t id;
  while (s.Allocate(&id) == NvError::kSuccess) {
    ASSERT_LT(got.size(), kNumSyncpoints);
    got.push_back(id);
  }
  // 192 syncpoints minus 0, the display's 8, 9, 26, 27 and the engines' 0x0C, 0x36, 0x37.
  EXPECT_EQ(got.size(), 192u - 8u);
  for (uint32_t r : {0u, 8u, 9u, 26u, 27u, 0x0Cu, 0x36u, 0x37u})
    EXPECT_EQ(std::count(got.begin(), got.end(), r), 0) << r;
  EXPECT_EQ(s.Allocate(&id), NvError::kInsufficientMemory);
  s.Free(got[5]);
  EXPECT_FALSE(s.Allocated(got[5]));
  ASSERT_EQ(s.Allocate(&id), NvError::kSuccess);
  EXPECT_EQ(id, got[5]);
}

TEST(SimSyncpointAlloc, MaxGrowsByPromisesAndMinEqMaxReleasesWaiters) {
  Syncpoints s;
  uint32_t id;
  ASSERT_EQ(s.Allocate(&id), NvError::kSuccess);
  EXPECT_EQ(s.IncrementMax(id, 2), 2u);
  EXPECT_EQ(s.IncrementMax(id, 3), 5u);
  EXPECT_EQ(s.Read(id), 0u);
  struct W : SyncpointWaiter {
    void Reached(uint32_t v) override { value = v; }
    void TimedOut() override {}
    bool Abandoned() override { return false; }
    uint32_t value = 0;
  };
  auto w = std::make_shared<W>();
  uint32_t v;
  ASSERT_EQ(s.Wait(
                id, 5, -1, [&] { return w; }, &v),
            Syncpoints::WaitStart::kParked);
  EXPECT_EQ(s.SetMinEqMax(id), 5u);
  EXPECT_EQ(w->value, 5u);
  EXPECT_EQ(s.ParkedCount(), 0u);
}

TEST(SimRunlist, NeverRunsOneRunnableOnTwoThreads) {
  Runlist rl(2);
  struct R : Runnable {
    void Run() override {
      int now = ++inside;
      if (now > 1) overlap = true;
      absl::SleepFor(absl::Microseconds(200));
      --inside;
      ++runs;
    }
    std::atomic<int> inside{0}, runs{0};
    std::atomic<bool> overlap{false};
  };
  auto r = std::make_shared<R>();
  for (int i = 0; i < 200; ++i) {
    rl.Schedule(r);
    if (i % 10 == 0) absl::SleepFor(absl::Microseconds(300));
  }
  ASSERT_TRUE(Eventually([&] { return r->inside == 0 && r->runs > 0; }));
  EXPECT_FALSE(r->overlap);
  // Scheduled while running: it runs once more afterwards, not never.
  int before = r->runs;
  rl.Schedule(r);
  EXPECT_TRUE(Eventually([&] { return r->runs > before; }));
}

TEST(SimRunlist, TimersFireAndGoneRunnablesAreSkipped) {
  Runlist rl(1);
  absl::Notification fired;
  absl::Time start = absl::Now();
  rl.After(absl::Milliseconds(20), [&] { fired.Notify(); });
  ASSERT_TRUE(fired.WaitForNotificationWithTimeout(absl::Seconds(5)));
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(20));
  struct R : Runnable {
    void Run() override { ADD_FAILURE() << "a destroyed runnable ran"; }
  };
  auto r = std::make_shared<R>();
  rl.ScheduleAfter(r, absl::Milliseconds(5));
  r.reset();
  absl::SleepFor(absl::Milliseconds(30));
}

// A runnable held in Run() until released (a long slice).
struct HeldRunnable : Runnable {
  void Run() override {
    absl::MutexLock l(&mu);
    ++inside;
    auto go = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) { return released; };
    mu.AwaitWithTimeout(absl::Condition(&go), absl::Seconds(10));
    --inside;
    ++runs;
  }
  bool Inside() {
    absl::MutexLock l(&mu);
    return inside > 0;
  }
  int Runs() {
    absl::MutexLock l(&mu);
    return runs;
  }
  void Release() {
    absl::MutexLock l(&mu);
    released = true;
  }
  absl::Mutex mu;
  int inside ABSL_GUARDED_BY(mu) = 0;
  int runs ABSL_GUARDED_BY(mu) = 0;
  bool released ABSL_GUARDED_BY(mu) = false;
};

// The engine threads start as work comes: none for a GPU nobody gives work, one for a first
// runnable or timer, another when work is queued while the started ones are busy, never more than
// the pool's size.
TEST(SimRunlist, ThreadsStartAsWorkComes) {
  const std::set<pid_t> before = Tasks();
  { Runlist unused(2); }  // nothing to join
  {
    Runlist rl(2);
    EXPECT_TRUE(TasksAdded(before).empty()) << "made: no thread";
    EXPECT_TRUE(rl.WaitIdle(absl::Seconds(1)));
    auto a = std::make_shared<HeldRunnable>(), b = std::make_shared<HeldRunnable>(),
         c = std::make_shared<HeldRunnable>();
    rl.Schedule(a);
    EXPECT_EQ(TasksAdded(before).size(), 1u) << "the first runnable: one thread";
    ASSERT_TRUE(Eventually([&] { return a->Inside(); }));
    rl.Schedule(b);
    EXPECT_EQ(TasksAdded(before).size(), 2u) << "queued while the first is busy: the second";
    ASSERT_TRUE(Eventually([&] { return b->Inside(); })) << "both run at once";
    rl.Schedule(c);
    absl::Notification fired;
    rl.After(absl::Milliseconds(1), [&] { fired.Notify(); });
    EXPECT_EQ(TasksAdded(before).size(), 2u) << "the pool is full";
    a->Release();
    b->Release();
    c->Release();
    EXPECT_TRUE(fired.WaitForNotificationWithTimeout(absl::Seconds(10)));
    EXPECT_TRUE(Eventually([&] { return c->Runs() == 1; }));
  }
  EXPECT_EQ(TasksAddedBecome(before, 0), 0u) << "destroyed: joined";
  {
    Runlist rl(2);
    absl::Notification fired;
    rl.After(absl::Milliseconds(1), [&] { fired.Notify(); });
    EXPECT_EQ(TasksAdded(before).size(), 1u) << "a first timer: one thread";
    EXPECT_TRUE(fired.WaitForNotificationWithTimeout(absl::Seconds(10)));
  }
}

// Channels of guest threads that submit their first work at once: the pool's threads start, no
// more, and run all of it.
TEST(SimRunlist, WorkQueuedAtOnceStartsThePoolOnly) {
  constexpr int kSchedulers = 8;
  const std::set<pid_t> before = Tasks();
  Runlist rl(2);
  std::vector<std::shared_ptr<HeldRunnable>> work;
  for (int i = 0; i < kSchedulers; ++i) work.push_back(std::make_shared<HeldRunnable>());
  const std::set<pid_t> added =
      TasksAddedByRace(before, kSchedulers, [&](int i) { rl.Schedule(work[i]); });
  EXPECT_EQ(added.size(), 2u);
  for (auto& w : work) w->Release();
  for (auto& w : work) EXPECT_TRUE(Eventually([&] { return w->Runs() == 1; }));
}

TEST_F(SimChannel, SubmitRunsThePushbufferAndReturnsTheFence) {
  auto c = Ready();
  const uint32_t id = c->syncpoint_id();
  EXPECT_FALSE(Syncpoints::Reserved(id));
  uint64_t va = Pushbuffer(SyncptIncrWords(id));
  // libnx's way: the pushbuffer increments once, flag bit 8 tells the channel by how much.
  ch::Fence f{0, 1};
  ASSERT_EQ(Submit(*c, {Entry(va, 4)}, (1u << 8) | ch::kHwFormat, &f), NvError::kSuccess);
  EXPECT_EQ(f.id, id);
  EXPECT_EQ(f.value, 1u);
  EXPECT_EQ(syncpoints_.ReadMax(id), 1u);
  EXPECT_TRUE(Eventually([&] { return syncpoints_.Read(id) == 1; }));
  EXPECT_EQ(c->engine().entries_done(), 1u);
}

TEST_F(SimChannel, AllocGpfifoEx2ReturnsTheChannelFence) {
  auto c = Open();
  ASSERT_TRUE(c);
  ch::AllocGpfifoEx a{};
  a.num_entries = 0x800;
  a.fence = {77, 77};
  ASSERT_EQ(Ioctl(*c, ch::kAllocGpfifoEx2, &a), NvError::kSuccess);
  EXPECT_EQ(a.fence.id, c->syncpoint_id());
  EXPECT_EQ(a.fence.value, syncpoints_.ReadMax(c->syncpoint_id()));
}

TEST_F(SimChannel, FenceIncrementAddsTwoAfterTheEntries) {
  auto c = Ready();
  const uint32_t id = c->syncpoint_id();
  uint64_t va = Pushbuffer(SyncptIncrWords(id));
  // The pushbuffer's own increment (bit 8, value 1) plus the channel's two.
  ch::Fence f{0, 1};
  ASSERT_EQ(Submit(*c, {Entry(va, 4)}, ch::kFenceGet | (1u << 8), &f), NvError::kSuccess);
  EXPECT_EQ(f.value, 3u);
  ch::Fence g{};
  ASSERT_EQ(Submit(*c, {}, ch::kFenceGet | ch::kSuppressWfi, &g), NvError::kSuccess);
  EXPECT_EQ(g.id, id);
  EXPECT_EQ(g.value, 5u);
  EXPECT_EQ(syncpoints_.ReadMax(id), 5u);
  // 1 from the pushbuffer plus 2 + 2 from the channel's increments.
  EXPECT_TRUE(Eventually([&] { return syncpoints_.Read(id) == 5; }));
}

TEST_F(SimChannel, IncrementByValueWithFenceWaitIsBadParameter) {
  auto c = Ready();
  ch::Fence f{c->syncpoint_id(), 1};
  EXPECT_EQ(Submit(*c, {}, ch::kFenceWait | (1u << 8), &f), NvError::kBadParameter);
  ch::Fence bad{kNumSyncpoints, 1};
  EXPECT_EQ(Submit(*c, {}, ch::kFenceWait, &bad), NvError::kBadParameter);
}

TEST_F(SimChannel, FenceWaitHoldsTheEntriesUntilTheSyncpointIsReached) {
  auto c = Ready();
  const uint32_t id = c->syncpoint_id();
  uint32_t other;
  ASSERT_EQ(syncpoints_.Allocate(&other), NvError::kSuccess);
  uint64_t va = Pushbuffer(SyncptIncrWords(id));
  ch::Fence f{other, syncpoints_.Read(other) + 2};
  ASSERT_EQ(Submit(*c, {Entry(va, 4)}, ch::kFenceWait | ch::kFenceGet, &f), NvError::kSuccess);
  EXPECT_EQ(f.id, id);
  EXPECT_EQ(f.value, 2u);
  absl::SleepFor(absl::Milliseconds(50));
  EXPECT_EQ(syncpoints_.Read(id), 0u) << "ran before the fence";
  EXPECT_EQ(c->engine().entries_done(), 0u);
  syncpoints_.Increment(other);
  absl::SleepFor(absl::Milliseconds(20));
  EXPECT_EQ(syncpoints_.Read(id), 0u) << "ran one increment early";
  syncpoints_.Increment(other);
  EXPECT_TRUE(Eventually([&] { return syncpoints_.Read(id) == 3; }));
}

TEST_F(SimChannel, BusyWhenTheRingIsFull) {
  auto c = Ready(4);
  ASSERT_EQ(Ioctl0(*c, ch::kDisable), NvError::kSuccess);
  const uint32_t id = c->syncpoint_id();
  uint64_t va = Pushbuffer(SyncptIncrWords(id));
  ch::Fence f{};
  for (int i = 0; i < 4; ++i) ASSERT_EQ(Submit(*c, {Entry(va, 4)}, 0, &f), NvError::kSuccess);
  EXPECT_EQ(Submit(*c, {Entry(va, 4)}, 0, &f), NvError::kBusy);
  // Larger than the whole ring: never fits (Linux ENOMEM).
  EXPECT_EQ(Submit(*c, std::vector<ch::GpfifoEntry>(5, Entry(va, 4)), 0, &f),
            NvError::kInsufficientMemory);
  EXPECT_EQ(syncpoints_.Read(id), 0u) << "a disabled channel ran";
  ASSERT_EQ(Ioctl0(*c, ch::kEnable), NvError::kSuccess);
  EXPECT_TRUE(Eventually([&] { return syncpoints_.Read(id) == 4; }));
  EXPECT_TRUE(Eventually([&] { return c->engine().pending_jobs() == 0; }));
  EXPECT_EQ(Submit(*c, {Entry(va, 4)}, 0, &f), NvError::kSuccess);
}

// Queued jobs hold the guest's queued_bytes until they are done: past the budget a submission is
// Busy (the client retries) though the ring has room; done or dropped, they give it back.
// (Before: nothing counted them; 64 channels of 65,535 queued one-entry jobs held some 230 MB.)
TEST_F(SimChannel, QueuedJobsHoldQueuedBytesUntilDoneOrDropped) {
  abi::Budgets limits = Limits();
  limits.queued_bytes = 16 << 10;
  BudgetAccount budget(limits);
  auto c = Ready(0x800, &budget);
  ASSERT_EQ(Ioctl0(*c, ch::kDisable), NvError::kSuccess);  // it keeps its jobs, runs none
  const uint32_t id = c->syncpoint_id();
  uint64_t va = Pushbuffer(SyncptIncrWords(id));
  ch::Fence f{};
  size_t queued = 0;
  NvError e;
  while ((e = Submit(*c, {Entry(va, 4)}, 0, &f)) == NvError::kSuccess && queued < 0x800) ++queued;
  EXPECT_EQ(e, NvError::kBusy);
  EXPECT_LT(queued, 0x800u) << "refused by the budget, not the ring";
  EXPECT_EQ(budget.refused(BudgetKind::kQueuedBytes), 1u);
  EXPECT_LE(budget.used(BudgetKind::kQueuedBytes), limits.queued_bytes);
  ASSERT_EQ(Ioctl0(*c, ch::kEnable), NvError::kSuccess);
  EXPECT_TRUE(Eventually([&] { return c->engine().pending_jobs() == 0; }));
  EXPECT_EQ(budget.used(BudgetKind::kQueuedBytes), 0u) << "done jobs keep their charge";
  ASSERT_EQ(Ioctl0(*c, ch::kDisable), NvError::kSuccess);
  ASSERT_EQ(Submit(*c, {Entry(va, 4)}, 0, &f), NvError::kSuccess);
  EXPECT_GT(budget.used(BudgetKind::kQueuedBytes), 0u);
  c.reset();
  EXPECT_TRUE(Eventually([&] { return budget.used(BudgetKind::kQueuedBytes) == 0; }))
      << "dropped jobs keep their charge";
}

TEST_F(SimChannel, SubmitGpfifo2TakesTheEntriesFromTheSecondBuffer) {
  auto c = Ready();
  const uint32_t id = c->syncpoint_id();
  uint64_t va = Pushbuffer(SyncptIncrWords(id));
  ch::Fence f{0, 2};
  ASSERT_EQ(Submit(*c, {Entry(va, 4), Entry(va, 4)}, 1u << 8, &f, /*ioctl2=*/true),
            NvError::kSuccess);
  EXPECT_EQ(f.value, 2u);
  EXPECT_TRUE(Eventually([&] { return syncpoints_.Read(id) == 2; }));
}

TEST_F(SimChannel, FaultStopsTheChannelUntilForceReset) {
  auto a = Ready();
  auto b = Ready();
  uint32_t handle;
  auto notifier = Object(0x1000, &handle);
  // Garbage where the notifier goes: arming it clears it.
  std::vector<uint8_t> junk(16, 0xAB);
  ASSERT_TRUE(notifier->Write(0x40, junk));
  ch::SetErrorNotifier en{0x40, 0x1000, handle, 0};
  ASSERT_EQ(Ioctl(*a, ch::kSetErrorNotifier, &en), NvError::kSuccess);
  EXPECT_EQ(Read32(*notifier, 0x4C), 0u);
  int efd = -1;
  ASSERT_EQ(a->QueryEvent(kEventErrorNotifier, &efd), NvError::kSuccess);

  // A pushbuffer nobody mapped: an MMU fault on the fetch. The fence it promised must still be
  // reached (the driver releases the fences of work it drops).
  const uint64_t unmapped = 0x7700000000;
  ch::Fence f{};
  ASSERT_EQ(Submit(*a, {Entry(unmapped, 8)}, ch::kFenceGet, &f), NvError::kSuccess);
  ASSERT_TRUE(Eventually([&] { return a->engine().failed(); }));
  EXPECT_TRUE(Eventually([&] { return SyncptReached(syncpoints_.Read(f.id), f.value); }));

  NotifierRecord rec{};
  ASSERT_TRUE(notifier->Read(0x40, {reinterpret_cast<uint8_t*>(&rec), sizeof rec}));
  EXPECT_EQ(rec.info32, 31u);  // NVGPU_CHANNEL_FIFO_ERROR_MMU_ERR_FLT
  EXPECT_EQ(rec.status, 0xFFFFu);
  EXPECT_NE(rec.timestamp_ns, 0u);
  pollfd p{efd, POLLIN, 0};
  EXPECT_EQ(poll(&p, 1, 1000), 1) << "error event not signalled";

  ch::ErrorNotification n{};
  ASSERT_EQ(Ioctl(*a, ch::kGetErrorNotification, &n), NvError::kSuccess);
  EXPECT_EQ(n.info32, 31u);
  EXPECT_EQ(n.status, 0xFFFFu);
  EXPECT_NE(n.timestamp, 0u);
  ch::ErrorInfo info{};
  ASSERT_EQ(Ioctl(*a, ch::kGetErrorInfo, &info), NvError::kSuccess);
  EXPECT_EQ(info.error_info[0], 1u);  // Switchbrew: mmu_error
  // As deko3d decodes it: address high word, low word, 2 for a write (docs/guest-abi.md).
  EXPECT_EQ(info.error_info[2], static_cast<uint32_t>(unmapped >> 32));
  EXPECT_EQ(info.error_info[3], static_cast<uint32_t>(unmapped));
  EXPECT_EQ(info.error_info[4], 1u) << "a pushbuffer fetch is a read (2 would be a write)";

  // Refused until reset; the other channel is not affected meanwhile.
  uint64_t va_a = Pushbuffer(SyncptIncrWords(a->syncpoint_id()));
  uint64_t va_b = Pushbuffer(SyncptIncrWords(b->syncpoint_id()));
  ch::Fence g{0, 1};
  EXPECT_EQ(Submit(*a, {Entry(va_a, 4)}, 1u << 8, &g), NvError::kTimeout);
  ch::Fence h{0, 1};
  ASSERT_EQ(Submit(*b, {Entry(va_b, 4)}, 1u << 8, &h), NvError::kSuccess);
  EXPECT_TRUE(Eventually([&] { return SyncptReached(syncpoints_.Read(h.id), h.value); }));
  EXPECT_FALSE(b->engine().failed());

  ASSERT_EQ(Ioctl0(*a, ch::kForceReset), NvError::kSuccess);
  ch::ErrorInfo cleared{};
  cleared.error_info[0] = 99;
  ASSERT_EQ(Ioctl(*a, ch::kGetErrorInfo, &cleared), NvError::kSuccess);
  EXPECT_EQ(cleared.error_info[0], 0u);
  ASSERT_EQ(Submit(*a, {Entry(va_a, 4)}, 1u << 8, &g), NvError::kSuccess);
  EXPECT_TRUE(Eventually([&] { return SyncptReached(syncpoints_.Read(g.id), g.value); }));
  EXPECT_TRUE(Eventually([&] { return a->engine().pending_jobs() == 0; }));
  EXPECT_FALSE(a->engine().failed());
}

TEST_F(SimChannel, AllocObjCtxNeedsAnAddressSpaceAndTakesOneKnownClass) {
  auto c = Open();
  ASSERT_TRUE(c);
  ch::AllocObjCtx o{0xB197, 0, 0};
  EXPECT_EQ(Ioctl(*c, ch::kAllocObjCtx, &o), NvError::kInvalidState);
  ASSERT_EQ(c->BindAddressSpace(as_), NvError::kSuccess);
  EXPECT_EQ(c->BindAddressSpace(as_), NvError::kSuccess) << "the same space again";
  AsLayout l;
  l.small_start = 0x20000;
  l.small_end = 0x4000000;
  EXPECT_EQ(c->BindAddressSpace(AddressSpace::Create(l, nullptr)), NvError::kInvalidState);
  ch::AllocObjCtx bad{0xB06F, 0, 0};  // the channel class is not an object context
  EXPECT_EQ(Ioctl(*c, ch::kAllocObjCtx, &bad), NvError::kBadParameter);
  ch::AllocObjCtx bad2{0x1234, 0, 0};
  EXPECT_EQ(Ioctl(*c, ch::kAllocObjCtx, &bad2), NvError::kBadParameter);
  ch::AllocObjCtx dma{0xB0B5, 0, 0};
  ASSERT_EQ(Ioctl(*c, ch::kAllocObjCtx, &dma), NvError::kSuccess);
  EXPECT_NE(dma.obj_id, 0u);
  EXPECT_EQ(Ioctl(*c, ch::kAllocObjCtx, &o), NvError::kAlreadyAllocated);
}

TEST_F(SimChannel, WaitParksUntilTheSemaphoreHoldsThePayload) {
  auto c = Ready();
  uint32_t handle;
  auto obj = Object(0x1000, &handle);
  ch::Wait w{1, 5000, handle, 0x40, 7, 0};
  TestParker* parker = nullptr;
  ASSERT_EQ(Ioctl(*c, ch::kWait, &w, &parker), NvError::kSuccess);
  ASSERT_NE(parker, nullptr) << "the call was not parked";
  auto cont = parker->parked;
  absl::SleepFor(absl::Milliseconds(20));
  EXPECT_FALSE(cont->done.HasBeenNotified());
  uint32_t seven = 7;
  ASSERT_TRUE(obj->Write(0x40, {reinterpret_cast<uint8_t*>(&seven), 4}));
  ASSERT_TRUE(cont->done.WaitForNotificationWithTimeout(absl::Seconds(5)));
  EXPECT_EQ(cont->result, NvError::kSuccess);
  // Already met: answered at once.
  EXPECT_EQ(Ioctl(*c, ch::kWait, &w), NvError::kSuccess);
}

TEST_F(SimChannel, WaitOnANotifierAndItsTimeout) {
  auto c = Ready();
  uint32_t handle;
  auto obj = Object(0x1000, &handle);
  NotifierRecord pending{0, 0, 0, 0x8000};
  ASSERT_TRUE(obj->Write(0x100, {reinterpret_cast<uint8_t*>(&pending), sizeof pending}));
  ch::Wait zero{0, 0, handle, 0x100, 0, 0};
  EXPECT_EQ(Ioctl(*c, ch::kWait, &zero), NvError::kTimeout) << "timeout 0 only checks";
  ch::Wait brief{0, 30, handle, 0x100, 0, 0};
  TestParker* parker = nullptr;
  ASSERT_EQ(Ioctl(*c, ch::kWait, &brief, &parker), NvError::kSuccess);
  ASSERT_NE(parker, nullptr);
  ASSERT_TRUE(parker->parked->done.WaitForNotificationWithTimeout(absl::Seconds(5)));
  EXPECT_EQ(parker->parked->result, NvError::kTimeout);

  ch::Wait w{0, 0xFFFFFFFF, handle, 0x100, 0, 0};
  ASSERT_EQ(Ioctl(*c, ch::kWait, &w, &parker), NvError::kSuccess);
  auto cont = parker->parked;
  uint16_t done = 0;
  ASSERT_TRUE(obj->Write(0x10E, {reinterpret_cast<uint8_t*>(&done), 2}));
  ASSERT_TRUE(cont->done.WaitForNotificationWithTimeout(absl::Seconds(5)));
  EXPECT_EQ(cont->result, NvError::kSuccess);
  uint64_t ts = 0;
  ASSERT_TRUE(obj->Read(0x100, {reinterpret_cast<uint8_t*>(&ts), 8}));
  EXPECT_NE(ts, 0u) << "the driver stamps the time into a completed notifier";
}

TEST_F(SimChannel, WaitRejectsBadArguments) {
  auto c = Ready();
  uint32_t handle;
  auto obj = Object(0x1000, &handle);
  ch::Wait type{2, 10, handle, 0, 0, 0};
  EXPECT_EQ(Ioctl(*c, ch::kWait, &type), NvError::kBadParameter);
  ch::Wait unknown{1, 10, handle + 0x1000, 0, 0, 0};
  EXPECT_EQ(Ioctl(*c, ch::kWait, &unknown), NvError::kBadParameter);
  ch::Wait unaligned{1, 10, handle, 2, 0, 0};
  EXPECT_EQ(Ioctl(*c, ch::kWait, &unaligned), NvError::kBadParameter);
  ch::Wait past{1, 10, handle, 0x1000, 0, 0};
  EXPECT_EQ(Ioctl(*c, ch::kWait, &past), NvError::kBadParameter);
  ch::Wait notifier_past{0, 10, handle, 0xFF8, 0, 0};
  EXPECT_EQ(Ioctl(*c, ch::kWait, &notifier_past), NvError::kBadParameter);
}

TEST_F(SimChannel, ParkedWaitIsAnsweredWhenTheChannelFails) {
  auto c = Ready();
  uint32_t handle;
  auto obj = Object(0x1000, &handle);
  ch::Wait w{1, 0xFFFFFFFF, handle, 0, 1, 0};
  TestParker* parker = nullptr;
  ASSERT_EQ(Ioctl(*c, ch::kWait, &w, &parker), NvError::kSuccess);
  ASSERT_NE(parker, nullptr);
  auto cont = parker->parked;
  ch::Fence f{};
  ASSERT_EQ(Submit(*c, {Entry(0x7700000000, 2)}, 0, &f), NvError::kSuccess);
  ASSERT_TRUE(cont->done.WaitForNotificationWithTimeout(absl::Seconds(5)));
  EXPECT_EQ(cont->result, NvError::kTimeout);
  EXPECT_EQ(cont->finishes, 1);
  EXPECT_EQ(Ioctl(*c, ch::kWait, &w), NvError::kTimeout) << "a failed channel does not wait";
}

TEST_F(SimChannel, ClosingWithQueuedWorkReleasesEverything) {
  uint32_t sp;
  {
    auto c = Ready();
    sp = c->syncpoint_id();
    EXPECT_EQ(budget_.used(BudgetKind::kChannels), 1u);
    // Work that cannot finish: a fence wait nobody will satisfy, a semaphore acquire that
    // keeps retrying, and more behind them.
    uint32_t other;
    ASSERT_EQ(syncpoints_.Allocate(&other), NvError::kSuccess);
    auto sem = Object(0x1000);
    AddressSpace::MapArgs m;
    m.object = sem;
    uint64_t sem_va = 0;
    int32_t kind;
    ASSERT_EQ(as_->Map(m, &sem_va, &kind), NvError::kSuccess);
    uint64_t acquire = Pushbuffer(SemAcquireWords(sem_va, 5));
    uint64_t incr = Pushbuffer(SyncptIncrWords(sp));
    ch::Fence f{};
    ASSERT_EQ(Submit(*c, {Entry(acquire, 5), Entry(incr, 4)}, ch::kFenceGet, &f),
              NvError::kSuccess);
    ch::Fence w{other, syncpoints_.Read(other) + 1};
    ASSERT_EQ(Submit(*c, std::vector<ch::GpfifoEntry>(100, Entry(incr, 4)),
                     ch::kFenceWait | ch::kFenceGet, &w),
              NvError::kSuccess);
    absl::SleepFor(absl::Milliseconds(20));
    EXPECT_EQ(c->engine().entries_done(), 0u) << "the acquire should block";
  }
  EXPECT_TRUE(Eventually([&] { return budget_.used(BudgetKind::kChannels) == 0; }));
  EXPECT_TRUE(Eventually([&] { return !syncpoints_.Allocated(sp); }));
  EXPECT_TRUE(Eventually([&] { return syncpoints_.Read(sp) == syncpoints_.ReadMax(sp); }))
      << "fences of dropped work stay unreached";
}

TEST_F(SimChannel, ChannelsAreChargedToTheBudget) {
  std::vector<std::unique_ptr<GpuChannel>> open;
  for (int i = 0; i < 4; ++i) {
    open.push_back(Open());
    ASSERT_TRUE(open.back());
  }
  NvError err;
  EXPECT_FALSE(Open(&err));
  EXPECT_EQ(err, NvError::kInsufficientMemory);
  EXPECT_EQ(budget_.used(BudgetKind::kChannels), 4u);
  std::vector<uint32_t> ids;
  for (auto& c : open) ids.push_back(c->syncpoint_id());
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(std::unique(ids.begin(), ids.end()), ids.end()) << "each channel has its own";
  open.clear();
  EXPECT_TRUE(Eventually([&] { return budget_.used(BudgetKind::kChannels) == 0; }));
}

TEST_F(SimChannel, BadArgumentsGetTheDriversErrors) {
  auto c = Open();
  ASSERT_TRUE(c);
  ch::Fence f{};
  EXPECT_EQ(Submit(*c, {}, 0, &f), NvError::kInvalidState) << "no ring yet";
  ch::AllocGpfifo zero{0, 0};
  EXPECT_EQ(Ioctl(*c, ch::kAllocGpfifo, &zero), NvError::kBadParameter);
  ch::AllocGpfifo huge{(1u << 16) + 1, 0};
  EXPECT_EQ(Ioctl(*c, ch::kAllocGpfifo, &huge), NvError::kBadParameter);
  ch::AllocGpfifoEx three{};
  three.num_entries = 3;
  EXPECT_EQ(Ioctl(*c, ch::kAllocGpfifoEx2, &three), NvError::kBadParameter);
  ch::AllocGpfifo plain{3, 0};
  EXPECT_EQ(Ioctl(*c, ch::kAllocGpfifo, &plain), NvError::kSuccess);
  EXPECT_EQ(c->engine().ring_size(), 4u) << "rounded up to a power of two";
  EXPECT_EQ(Ioctl(*c, ch::kAllocGpfifo, &plain), NvError::kAlreadyAllocated);

  ch::U32Arg prio{7};
  EXPECT_EQ(Ioctl(*c, ch::kSetPriority, &prio), NvError::kBadParameter);
  prio.value = 0x96;
  EXPECT_EQ(Ioctl(*c, ch::kSetPriority, &prio), NvError::kSuccess);
  ch::EventIdControl ev{1, 9};
  EXPECT_EQ(Ioctl(*c, ch::kEventIdControl, &ev), NvError::kBadParameter);
  ch::EventIdControl cmd{3, 3};
  EXPECT_EQ(Ioctl(*c, ch::kEventIdControl, &cmd), NvError::kBadParameter);
  int fd;
  EXPECT_EQ(c->QueryEvent(4, &fd), NvError::kBadParameter);
  EXPECT_EQ(c->QueryEvent(0, &fd), NvError::kBadParameter);
  ch::ZcullBind z{0x100000, 4, 0};
  EXPECT_EQ(Ioctl(*c, ch::kZcullBind, &z), NvError::kBadParameter);

  uint32_t handle;
  auto obj = Object(0x1000, &handle);
  ch::SetErrorNotifier past{0xFF8, 0x1000, handle, 0};
  EXPECT_EQ(Ioctl(*c, ch::kSetErrorNotifier, &past), NvError::kBadParameter);
  ch::SetErrorNotifier wrap{~0ull - 4, 0x1000, handle, 0};
  EXPECT_EQ(Ioctl(*c, ch::kSetErrorNotifier, &wrap), NvError::kBadParameter);

  // SET_NVMAP_FD: an fd that is no device session, or another device's, is refused.
  ch::U32Arg nofd{42};
  EXPECT_EQ(Ioctl(*c, ch::kSetNvmapFd, &nofd), NvError::kBadParameter);
  caller_.fds[43] = Open();
  ch::U32Arg chfd{43};
  EXPECT_EQ(Ioctl(*c, ch::kSetNvmapFd, &chfd), NvError::kBadParameter);

  ch::UserData ud{0x1122334455667788};
  EXPECT_EQ(Ioctl(*c, ch::kSetUserData, &ud), NvError::kSuccess);
  ch::UserData got{};
  EXPECT_EQ(Ioctl(*c, ch::kGetUserData, &got), NvError::kSuccess);
  EXPECT_EQ(got.data, 0x1122334455667788u);

  // The entries the header counts must be the entries that came.
  std::vector<uint8_t> buf(sizeof(ch::SubmitGpfifoHeader));
  ch::SubmitGpfifoHeader h{};
  h.num_entries = 3;
  std::memcpy(buf.data(), &h, sizeof h);
  std::span<uint8_t> arrays[] = {std::span<uint8_t>()};
  TestParker parker(buf);
  Call call{Desc(ch::kSubmitGpfifo), buf, parker};
  call.arrays = arrays;
  EXPECT_EQ(c->Ioctl(call).err, NvError::kCountMismatch);
}

TEST_F(SimChannel, SetNvmapFdAcceptsAnNvmapSession) {
  auto c = Open();
  caller_.fds[5] = std::make_shared<NvmapDevice>(nvmap_);
  ch::U32Arg fd{5};
  EXPECT_EQ(Ioctl(*c, ch::kSetNvmapFd, &fd), NvError::kSuccess);
  // Without a guest (no caller) there is nothing to check.
  std::span<uint8_t> a{reinterpret_cast<uint8_t*>(&fd), sizeof fd};
  TestParker parker(a);
  Call call{Desc(ch::kSetNvmapFd), a, parker};
  EXPECT_EQ(c->Ioctl(call).err, NvError::kSuccess);
}

}  // namespace
}  // namespace nvsentry::hostshim::sim
