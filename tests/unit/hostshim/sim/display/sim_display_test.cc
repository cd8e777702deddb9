// The simulated display: windows held per session, the panel's one mode, colour and backlight
// state, the vblank clock (idle when nobody waits, 60 Hz when somebody does), flips with
// pre-fences, post-fences and the frame observer, the other display devices' answers, and hostile
// flips answering errors.
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <set>
#include <thread>
#include <vector>

#include "abi/catalogue.h"
#include "abi/devices/nvdisp.h"
#include "abi/devices/nvdisp_ctrl.h"
#include "absl/synchronization/barrier.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "hostshim/sim/display/display.h"
#include "hostshim/sim/display/display_ctrl_devices.h"
#include "hostshim/sim/display/nvdisp_device.h"
#include "hostshim/sim/memory/nvmap.h"
#include "hostshim/sim/sync/syncpoints.h"
#include "tests/unit/fake_caller.h"
#include "tests/unit/tasks.h"

namespace nvsentry::hostshim::sim {
namespace {
namespace nd = abi::nvdisp;
using abi::NvError;
using nvsentry::testing::Tasks;
using nvsentry::testing::TasksAdded;
using nvsentry::testing::TasksAddedBecome;
using nvsentry::testing::TasksAddedByRace;

const abi::IoctlDesc& Desc(std::span<const abi::IoctlDesc> table, uint32_t code) {
  for (const auto& d : table)
    if (d.code == code) return d;
  ADD_FAILURE() << "no ioctl " << std::hex << code;
  return table[0];
}

class NoParker : public Parker {
 public:
  std::shared_ptr<Continuation> Park() override { return nullptr; }
};

class CountingWaiter : public SyncpointWaiter {
 public:
  void Reached(uint32_t) override { reached = true; }
  void TimedOut() override {}
  bool Abandoned() override { return false; }
  std::atomic<bool> reached{false};
};

template <typename Pred>
bool Eventually(Pred p, absl::Duration limit = absl::Seconds(5)) {
  absl::Time end = absl::Now() + limit;
  while (absl::Now() < end) {
    if (p()) return true;
    absl::SleepFor(absl::Milliseconds(1));
  }
  return p();
}

class SimDisplay : public ::testing::Test {
 protected:
  template <typename T>
  NvError Disp(DeviceBackend& d, uint32_t code, T* arg) {
    NoParker parker;
    Call call{Desc(nd::Ioctls(), code), {reinterpret_cast<uint8_t*>(arg), sizeof(T)}, parker};
    call.caller = &caller_;
    return d.Ioctl(call).err;
  }
  uint32_t Object(uint32_t size) {
    uint32_t handle = 0, align = 0x1000;
    EXPECT_EQ(nvmap_.Create(getpid(), size, &handle), NvError::kSuccess);
    EXPECT_EQ(nvmap_.Alloc(getpid(), handle, 0, 0, &align, 0, 0), NvError::kSuccess);
    return handle;
  }
  // A flip of window 0 showing a 64x32 RGBA8 pitch surface of `handle`.
  static nd::Flip OneWindow(uint32_t handle, uint32_t fence_id = 0, uint32_t fence_val = 0) {
    nd::Flip f{};
    for (auto& w : f.win) w.index = -1;
    nd::FlipWindow& w = f.win[0];
    w.index = 0;
    w.buff_id = handle;
    w.pixformat = nd::kFmtR8G8B8A8;
    w.w = 64 << 12;
    w.h = 32 << 12;
    w.stride = 256;
    w.pre_syncpt_id = fence_id;
    w.pre_syncpt_val = fence_val;
    return f;
  }
  bool Reached(uint32_t id, uint32_t value) { return SyncptReached(syncpoints_.Read(id), value); }

  FakeCaller caller_;
  BudgetAccount budget_{abi::Budgets{}};
  Syncpoints syncpoints_;
  Nvmap nvmap_{&budget_, 0, 0};
  Display display_{syncpoints_};
};

TEST_F(SimDisplay, WindowsAreHeldPerSessionAndReleasedAtClose) {
  auto a = std::make_unique<NvdispDevice>(display_.head(0), nvmap_);
  NvdispDevice b(display_.head(0), nvmap_);
  uint32_t w = 1;
  EXPECT_EQ(Disp(*a, nd::kGetWindow, &w), NvError::kSuccess);
  EXPECT_EQ(Disp(b, nd::kGetWindow, &w), NvError::kBusy);
  EXPECT_EQ(Disp(b, nd::kPutWindow, &w), NvError::kAccessDenied);
  w = 3;
  EXPECT_EQ(Disp(b, nd::kGetWindow, &w), NvError::kBadParameter);
  uint32_t mask = 0;
  EXPECT_EQ(Disp(b, nd::kGetWinmask, &mask), NvError::kSuccess);
  EXPECT_EQ(mask, 7u);
  a.reset();  // closing gives the window back
  w = 1;
  EXPECT_EQ(Disp(b, nd::kGetWindow, &w), NvError::kSuccess);
  EXPECT_EQ(Disp(b, nd::kPutWindow, &w), NvError::kSuccess);
  EXPECT_EQ(Disp(b, nd::kPutWindow, &w), NvError::kAccessDenied);
}

TEST_F(SimDisplay, ThePanelHasOneModeAndTheExternalOutputNone) {
  NvdispDevice d0(display_.head(0), nvmap_), d1(display_.head(1), nvmap_);
  auto db = std::make_unique<nd::ModeDb>();
  ASSERT_EQ(Disp(d0, nd::kGetModeDb, db.get()), NvError::kSuccess);
  ASSERT_EQ(db->count, 1u);
  nd::Mode m = db->modes[0];
  EXPECT_EQ(m.h_active, 1280u);
  EXPECT_EQ(m.v_active, 720u);
  const uint64_t total = uint64_t{m.h_active + m.h_sync_width + m.h_front_porch + m.h_back_porch} *
                         (m.v_active + m.v_sync_width + m.v_front_porch + m.v_back_porch);
  EXPECT_EQ(uint64_t{m.pclk_khz} * 1000 / total, 60u);
  auto db2 = std::make_unique<nd::ModeDb2>();
  ASSERT_EQ(Disp(d0, nd::kGetModeDb2, db2.get()), NvError::kSuccess);
  EXPECT_EQ(db2->count, 1u);
  EXPECT_EQ(db2->modes[0].mode.h_active, 1280u);

  EXPECT_EQ(Disp(d0, nd::kValidateMode, &m), NvError::kSuccess);
  EXPECT_EQ(Disp(d0, nd::kSetMode, &m), NvError::kSuccess);
  nd::Mode got{};
  EXPECT_EQ(Disp(d0, nd::kGetMode, &got), NvError::kSuccess);
  EXPECT_EQ(got.v_active, 720u);
  nd::Mode other = m;
  other.h_active = 1920;
  EXPECT_EQ(Disp(d0, nd::kValidateMode, &other), NvError::kBadParameter);
  EXPECT_EQ(Disp(d0, nd::kSetMode, &other), NvError::kBadParameter);
  nd::Mode2 m2{m, 7};
  EXPECT_EQ(Disp(d0, nd::kSetMode2, &m2), NvError::kSuccess);
  nd::Mode2 got2{};
  EXPECT_EQ(Disp(d0, nd::kGetMode2, &got2), NvError::kSuccess);
  EXPECT_EQ(got2.extra, 7u);

  ASSERT_EQ(Disp(d1, nd::kGetModeDb, db.get()), NvError::kSuccess);
  EXPECT_EQ(db->count, 0u);
  EXPECT_EQ(Disp(d1, nd::kSetMode, &m), NvError::kBadParameter);
  uint32_t status = 9;
  EXPECT_EQ(Disp(d1, nd::kGetHeadStatus, &status), NvError::kSuccess);
  EXPECT_EQ(status, 0u);
  EXPECT_EQ(Disp(d0, nd::kGetHeadStatus, &status), NvError::kSuccess);
  EXPECT_EQ(status, 1u);
}

TEST_F(SimDisplay, ColourCrcBacklightAndVblankSyncpointAreKept) {
  NvdispDevice d0(display_.head(0), nvmap_), d1(display_.head(1), nvmap_);
  uint32_t id = 0;
  EXPECT_EQ(Disp(d0, nd::kGetVblankSyncpt, &id), NvError::kSuccess);
  EXPECT_EQ(id, 26u);
  EXPECT_EQ(Disp(d1, nd::kGetVblankSyncpt, &id), NvError::kSuccess);
  EXPECT_EQ(id, 27u);

  struct {
    uint8_t b[780];
  } lut;
  std::memset(lut.b, 0x5A, sizeof lut.b);
  EXPECT_EQ(Disp(d0, nd::kSetLut, &lut), NvError::kSuccess);
  EXPECT_EQ(display_.head(0).Lut(), std::vector<uint8_t>(780, 0x5A));
  struct {
    uint8_t b[2458];
  } cmu;
  std::memset(cmu.b, 3, sizeof cmu.b);
  EXPECT_EQ(Disp(d0, nd::kSetCmu, &cmu), NvError::kSuccess);
  EXPECT_EQ(display_.head(0).Cmu().size(), 2458u);
  EXPECT_EQ(cmu.b[100], 3);

  uint32_t crc = 1;
  EXPECT_EQ(Disp(d0, nd::kGetCrc, &crc), NvError::kSuccess);
  EXPECT_EQ(crc, 0u);  // capture off
  uint8_t on = 1;
  EXPECT_EQ(Disp(d0, nd::kConfigCrc, &on), NvError::kSuccess);
  EXPECT_EQ(Disp(d0, nd::kGetCrc, &crc), NvError::kSuccess);
  EXPECT_NE(crc, 0u);

  nd::BacklightRange r{};
  EXPECT_EQ(Disp(d0, nd::kGetBacklightRange, &r), NvError::kSuccess);
  EXPECT_EQ(r.max, 255u);
  nd::BacklightRangeMax mx{200};
  nd::BacklightRangeMin mn{20};
  EXPECT_EQ(Disp(d0, nd::kSetBacklightRangeMax, &mx), NvError::kSuccess);
  EXPECT_EQ(Disp(d0, nd::kSetBacklightRangeMin, &mn), NvError::kSuccess);
  EXPECT_EQ(Disp(d0, nd::kGetBacklightRange, &r), NvError::kSuccess);
  EXPECT_EQ(r.min, 20u);
  EXPECT_EQ(r.max, 200u);
  mn.min = 201;
  EXPECT_EQ(Disp(d0, nd::kSetBacklightRangeMin, &mn), NvError::kBadParameter);
}

TEST_F(SimDisplay, TheClockIsIdleUntilSomebodyWaitsOnTheVblank) {
  absl::SleepFor(absl::Milliseconds(60));
  EXPECT_EQ(display_.head(0).vblanks(), 0u);
  EXPECT_FALSE(display_.clock_running());
  auto w = std::make_shared<CountingWaiter>();
  uint32_t value;
  const uint32_t target = syncpoints_.Read(26) + 3;
  EXPECT_EQ(syncpoints_.Wait(
                26, target, -1, [&] { return w; }, &value),
            Syncpoints::WaitStart::kParked);
  const absl::Time start = absl::Now();
  ASSERT_TRUE(Eventually([&] { return w->reached.load(); }));
  // Three vblanks at 60 Hz: at least two periods (the first may come early).
  EXPECT_GE(absl::Now() - start, 2 * VblankClock::kPeriod);
  // Nobody waits any more: the clock stops.
  EXPECT_TRUE(Eventually([&] { return !display_.clock_running(); }));
  const uint64_t n = display_.head(0).vblanks();
  absl::SleepFor(absl::Milliseconds(60));
  EXPECT_EQ(display_.head(0).vblanks(), n);
  EXPECT_EQ(display_.head(1).vblanks(), 0u);  // the disconnected head has none
}

// A display nobody waits on costs no thread: the clock's starts with the first waiter parked on
// a vblank syncpoint (with the syncpoint table's timer, which starts with any first waiter).
TEST(SimDisplayClock, ItsThreadStartsWithTheFirstVblankWaiter) {
  const std::set<pid_t> before = Tasks();
  {
    Syncpoints syncpoints;
    Display display(syncpoints);
    EXPECT_TRUE(TasksAdded(before).empty()) << "made: no thread";
    auto w = std::make_shared<CountingWaiter>();
    uint32_t value;
    ASSERT_EQ(syncpoints.Wait(
                  26, syncpoints.Read(26) + 2, -1, [&] { return w; }, &value),
              Syncpoints::WaitStart::kParked);
    EXPECT_EQ(TasksAdded(before).size(), 2u) << "the clock's and the syncpoint timer";
    EXPECT_TRUE(Eventually([&] { return w->reached.load(); }));
  }
  EXPECT_EQ(TasksAddedBecome(before, 0), 0u) << "destroyed: joined";
}

// Wakes from many threads at once start one thread, which ticks.
TEST(SimDisplayClock, WakesAtOnceStartOneThread) {
  constexpr int kWakers = 8;
  const std::set<pid_t> before = Tasks();
  {
    VblankClock unused([] {}, [] { return false; });
  }  // nothing to join
  std::atomic<int> ticks{0};
  {
    VblankClock clock([&] { ++ticks; }, [&] { return ticks.load() < 3; }, absl::Milliseconds(1));
    EXPECT_TRUE(TasksAdded(before).empty()) << "made: no thread";
    const std::set<pid_t> added = TasksAddedByRace(before, kWakers, [&](int) { clock.Wake(); });
    EXPECT_EQ(added.size(), 1u);
    EXPECT_TRUE(Eventually([&] { return ticks.load() >= 3; }));
  }
  EXPECT_EQ(TasksAddedBecome(before, 0), 0u) << "destroyed: joined";
}

TEST_F(SimDisplay, AFlipWaitsForItsPreFenceAndReachesTheScreenAtAVblank) {
  NvdispDevice d(display_.head(0), nvmap_);
  uint32_t w = 0;
  ASSERT_EQ(Disp(d, nd::kGetWindow, &w), NvError::kSuccess);
  const uint32_t handle = Object(256 * 32);
  uint32_t fence_id;
  ASSERT_EQ(syncpoints_.Allocate(&fence_id), NvError::kSuccess);  // the guest owns it
  const uint32_t fence_val = syncpoints_.IncrementMax(fence_id, 1);

  absl::Mutex mu;
  std::vector<PresentedFrame> frames;
  display_.SetFrameObserver([&](const PresentedFrame& f) {
    absl::MutexLock l(&mu);
    frames.push_back(f);
  });

  nd::Flip f = OneWindow(handle, fence_id, fence_val);
  ASSERT_EQ(Disp(d, nd::kFlip, &f), NvError::kSuccess);
  EXPECT_EQ(f.post_syncpt_id, 8u);
  const uint32_t post = f.post_syncpt_val;
  absl::SleepFor(absl::Milliseconds(60));
  EXPECT_FALSE(Reached(8, post));  // the pre-fence holds it
  EXPECT_EQ(display_.head(0).queued_flips(), 1u);
  EXPECT_FALSE(display_.clock_running());  // a flip waiting on its fence needs no vblank

  syncpoints_.Increment(fence_id);
  ASSERT_TRUE(Eventually([&] { return Reached(8, post); }));
  absl::MutexLock l(&mu);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].post_fence, post);
  ASSERT_EQ(frames[0].windows.size(), 1u);
  const PresentedSurface& s = *frames[0].windows[0].second;
  EXPECT_EQ(s.nvmap_handle, handle);
  EXPECT_EQ(s.width, 64u);
  EXPECT_EQ(s.height, 32u);
  EXPECT_EQ(s.pitch, 256u);
  EXPECT_EQ(s.format, nd::kFmtR8G8B8A8);
  EXPECT_FALSE(s.block_linear);
  EXPECT_EQ(display_.head(0).OnScreen().size(), 1u);
  syncpoints_.Free(fence_id);
}

TEST_F(SimDisplay, FlipsArePacedByTheVblank) {
  NvdispDevice d(display_.head(0), nvmap_);
  uint32_t w = 0;
  ASSERT_EQ(Disp(d, nd::kGetWindow, &w), NvError::kSuccess);
  const uint32_t handle = Object(256 * 32);
  const absl::Time start = absl::Now();
  uint32_t post = 0;
  for (int i = 0; i < 10; ++i) {
    nd::Flip f = OneWindow(handle);
    ASSERT_EQ(Disp(d, nd::kFlip, &f), NvError::kSuccess);
    post = f.post_syncpt_val;
  }
  ASSERT_TRUE(Eventually([&] { return Reached(8, post); }));
  // One flip per vblank: ten flips take at least nine periods.
  EXPECT_GE(absl::Now() - start, 9 * VblankClock::kPeriod);
  EXPECT_GE(display_.head(0).vblanks(), 10u);
}

// A session that filled the head's queue with flips held by a fence nobody will reach, then
// closed, no longer holds the head: its flips are dropped (their post-fences still reached, in
// order), and another session's flip reaches the screen.
TEST_F(SimDisplay, AClosedSessionsFlipsNoLongerHoldTheHead) {
  auto a = std::make_unique<NvdispDevice>(display_.head(0), nvmap_);
  NvdispDevice b(display_.head(0), nvmap_);
  uint32_t w = 0;
  ASSERT_EQ(Disp(*a, nd::kGetWindow, &w), NvError::kSuccess);
  w = 1;
  ASSERT_EQ(Disp(b, nd::kGetWindow, &w), NvError::kSuccess);
  const uint32_t handle = Object(256 * 32);
  uint32_t never;
  ASSERT_EQ(syncpoints_.Allocate(&never), NvError::kSuccess);
  const uint32_t far = syncpoints_.IncrementMax(never, 1000);
  uint32_t last_a = 0;
  for (size_t i = 0; i < DisplayHead::kMaxQueuedFlips; ++i) {
    nd::Flip f = OneWindow(handle, never, far);
    ASSERT_EQ(Disp(*a, nd::kFlip, &f), NvError::kSuccess);
    last_a = f.post_syncpt_val;
  }
  nd::Flip fb = OneWindow(handle);
  fb.win[0].index = 1;
  EXPECT_EQ(Disp(b, nd::kFlip, &fb), NvError::kInsufficientMemory) << "the queue is full";
  a.reset();
  ASSERT_EQ(Disp(b, nd::kFlip, &fb), NvError::kSuccess);
  ASSERT_TRUE(Eventually([&] { return Reached(8, fb.post_syncpt_val); }));
  EXPECT_TRUE(Reached(8, last_a));
  const std::vector<PresentedSurface> shown = display_.head(0).OnScreen();
  ASSERT_EQ(shown.size(), 1u) << "only b's flip reached the screen";
  EXPECT_EQ(shown[0].window, 1u);
  syncpoints_.Free(never);
}

// A closed session's cancelled flips leave no pre-fence waiter parked: the table drops them at its
// next sweep. (Before: each stayed until a fence that never came, kMaxQueuedFlips more for every
// open, flip and close a guest repeats.)
TEST_F(SimDisplay, ACancelledFlipsPreFenceWaitersAreDropped) {
  auto a = std::make_unique<NvdispDevice>(display_.head(0), nvmap_);
  uint32_t w = 0;
  ASSERT_EQ(Disp(*a, nd::kGetWindow, &w), NvError::kSuccess);
  const uint32_t handle = Object(256 * 32);
  uint32_t never;
  ASSERT_EQ(syncpoints_.Allocate(&never), NvError::kSuccess);
  const uint32_t far = syncpoints_.IncrementMax(never, 1000);
  const size_t before = syncpoints_.ParkedCount();
  for (size_t i = 0; i < DisplayHead::kMaxQueuedFlips; ++i) {
    nd::Flip f = OneWindow(handle, never, far);
    ASSERT_EQ(Disp(*a, nd::kFlip, &f), NvError::kSuccess);
  }
  EXPECT_EQ(syncpoints_.ParkedCount(), before + DisplayHead::kMaxQueuedFlips);
  a.reset();
  EXPECT_TRUE(Eventually([&] { return syncpoints_.ParkedCount() <= before; }))
      << syncpoints_.ParkedCount() << " parked, " << before << " before the flips";
  syncpoints_.Free(never);
}

// Pre-fences on the display's own syncpoints that they will never reach are refused.
TEST_F(SimDisplay, PreFencesTheDisplayCannotReachAreRefused) {
  NvdispDevice d(display_.head(0), nvmap_);
  uint32_t w = 0;
  ASSERT_EQ(Disp(d, nd::kGetWindow, &w), NvError::kSuccess);
  const uint32_t handle = Object(256 * 32);
  const uint32_t flip_max = syncpoints_.ReadMax(8);
  nd::Flip f = OneWindow(handle, 8, flip_max + 1000);
  EXPECT_EQ(Disp(d, nd::kFlip, &f), NvError::kBadParameter) << "past every post-fence given";
  f = OneWindow(handle, 26, syncpoints_.Read(26) + DisplayHead::kMaxVblanksAhead + 1);
  EXPECT_EQ(Disp(d, nd::kFlip, &f), NvError::kBadParameter) << "vblanks too far away";
  f = OneWindow(handle, 8, flip_max);
  EXPECT_EQ(Disp(d, nd::kFlip, &f), NvError::kSuccess) << "the last post-fence given is fine";
  f = OneWindow(handle, 26, syncpoints_.Read(26) + 2);
  EXPECT_EQ(Disp(d, nd::kFlip, &f), NvError::kSuccess) << "two vblanks from now is fine";
  ASSERT_TRUE(Eventually([&] { return Reached(8, f.post_syncpt_val); }));
}

TEST_F(SimDisplay, HostileFlipsAnswerErrors) {
  NvdispDevice d(display_.head(0), nvmap_), other(display_.head(0), nvmap_);
  NvdispDevice d1(display_.head(1), nvmap_);
  uint32_t w = 0;
  ASSERT_EQ(Disp(d, nd::kGetWindow, &w), NvError::kSuccess);
  ASSERT_EQ(Disp(d1, nd::kGetWindow, &w), NvError::kSuccess);
  const uint32_t handle = Object(256 * 32);

  nd::Flip f = OneWindow(handle);
  EXPECT_EQ(Disp(other, nd::kFlip, &f), NvError::kAccessDenied);  // window not held
  f = OneWindow(0xDEAD);
  EXPECT_EQ(Disp(d, nd::kFlip, &f), NvError::kBadValue);
  f = OneWindow(handle);
  f.win[0].h = 64 << 12;  // past the object
  EXPECT_EQ(Disp(d, nd::kFlip, &f), NvError::kInvalidSize);
  f = OneWindow(handle);
  f.win[0].pixformat = 99;
  EXPECT_EQ(Disp(d, nd::kFlip, &f), NvError::kBadParameter);
  f = OneWindow(handle);
  f.win[0].stride = 16;
  EXPECT_EQ(Disp(d, nd::kFlip, &f), NvError::kBadParameter);
  f = OneWindow(handle);
  f.win[1] = f.win[0];  // the same window twice
  EXPECT_EQ(Disp(d, nd::kFlip, &f), NvError::kBadParameter);
  f = OneWindow(handle, 40, 1);  // a syncpoint the guest does not own
  EXPECT_EQ(Disp(d, nd::kFlip, &f), NvError::kAccessDenied);
  f = OneWindow(handle, 5000, 1);
  EXPECT_EQ(Disp(d, nd::kFlip, &f), NvError::kBadParameter);
  f = OneWindow(handle);
  EXPECT_EQ(Disp(d1, nd::kFlip, &f), NvError::kInvalidState);  // nothing connected

  // Flips behind a fence that never comes fill the queue, then are refused.
  uint32_t fence_id;
  ASSERT_EQ(syncpoints_.Allocate(&fence_id), NvError::kSuccess);
  for (size_t i = 0; i < DisplayHead::kMaxQueuedFlips; ++i) {
    f = OneWindow(handle, fence_id, 1000);
    ASSERT_EQ(Disp(d, nd::kFlip, &f), NvError::kSuccess);
  }
  f = OneWindow(handle);
  EXPECT_EQ(Disp(d, nd::kFlip, &f), NvError::kInsufficientMemory);
  EXPECT_FALSE(display_.clock_running());
  syncpoints_.Free(fence_id);
}

TEST_F(SimDisplay, TheOtherDevicesAnswerAsAHandheld) {
  auto ctrl = OpenDisplayCtrlDevice(abi::Device(abi::DeviceId::kNvdispCtrl), display_);
  ASSERT_NE(ctrl, nullptr);
  auto call = [&](DeviceBackend& dev, std::span<const abi::IoctlDesc> table, uint32_t code,
                  void* arg, size_t size) {
    NoParker parker;
    Call c{Desc(table, code), {static_cast<uint8_t*>(arg), size}, parker};
    return dev.Ioctl(c).err;
  };
  namespace c = abi::nvdisp_ctrl;
  uint32_t n = 0;
  EXPECT_EQ(call(*ctrl, c::Ioctls(), c::kNumOutputs, &n, 4), NvError::kSuccess);
  EXPECT_EQ(n, 2u);
  uint32_t props[5] = {1, 9, 9, 9, 9};
  EXPECT_EQ(call(*ctrl, c::Ioctls(), c::kGetDisplayProperties, props, 20), NvError::kSuccess);
  EXPECT_EQ(props[1], 3u);  // HDMI
  EXPECT_EQ(props[2], 0u);  // disconnected
  props[0] = 0;
  EXPECT_EQ(call(*ctrl, c::Ioctls(), c::kGetDisplayProperties, props, 20), NvError::kSuccess);
  EXPECT_EQ(props[1], 0u);  // DSI
  EXPECT_EQ(props[2], 1u);
  props[0] = 2;
  EXPECT_EQ(call(*ctrl, c::Ioctls(), c::kGetDisplayProperties, props, 20), NvError::kBadParameter);
  uint8_t edid[272] = {};
  EXPECT_EQ(call(*ctrl, c::Ioctls(), c::kQueryEdid, edid, sizeof edid), NvError::kDispEdidFailure);
  for (abi::DeviceId id : {abi::DeviceId::kNvcecCtrl, abi::DeviceId::kNvhdcpUpCtrl,
                           abi::DeviceId::kNvdcutilDisp0, abi::DeviceId::kNvdcutilDisp1})
    EXPECT_NE(OpenDisplayCtrlDevice(abi::Device(id), display_), nullptr);
  EXPECT_EQ(OpenDisplayCtrlDevice(abi::Device(abi::DeviceId::kNvmap), display_), nullptr);
}

}  // namespace
}  // namespace nvsentry::hostshim::sim
