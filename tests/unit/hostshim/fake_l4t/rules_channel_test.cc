// The fake Jetson answers as r32.7.4 does: the nvhost-gpu channel rules of docs/host-abi.md, one
// test per rule id. A working channel is bound to an address space and a TSG (rules_tsg_test.cc).
#include <gtest/gtest.h>

#include <cerrno>

#include "abi/l4t/nvgpu_as.h"
#include "abi/l4t/nvgpu_channel.h"
#include "abi/l4t/nvhost_ctrl.h"
#include "abi/l4t/nvmap.h"
#include "tests/unit/hostshim/fake_l4t/fake_jetson_harness.h"

namespace nvsentry::hostshim::fake_l4t {
namespace {

namespace hch = abi::l4t::nvgpu_channel;
namespace hc = abi::l4t::nvhost_ctrl;

TEST_F(FakeL4tChannelRules, L4T_CH_4_GetTimedoutIsZeroOnAWorkingChannel) {
  const uint64_t ch = Channel(true, 32);
  hch::U32Arg t{7};
  ASSERT_EQ(Call(ch, hch::kGetTimedout, &t), 0);
  EXPECT_EQ(t.value, 0u);
}

TEST_F(FakeL4tChannelRules, L4T_CH_5_AllocGpfifoExOrder) {
  const uint64_t unbound = Channel(false);
  hch::AllocGpfifoEx g{};
  g.num_entries = 48;  // not a power of two: refused before the missing address space
  EXPECT_EQ(Call(unbound, hch::kAllocGpfifoEx, &g), EINVAL);
  g.num_entries = 0;
  EXPECT_EQ(Call(unbound, hch::kAllocGpfifoEx, &g), EINVAL);
  g.num_entries = 32;
  EXPECT_EQ(Call(unbound, hch::kAllocGpfifoEx, &g), EINVAL);  // no address space
  const uint64_t ch = Channel(true);
  ASSERT_EQ(Call(ch, hch::kAllocGpfifoEx, &g), 0);
  EXPECT_EQ(Call(ch, hch::kAllocGpfifoEx, &g), EEXIST);
}

TEST_F(FakeL4tChannelRules, L4T_CH_6_PlainAllocGpfifoMakesThreeTimesTheEntries) {
  const uint64_t ch = Channel(true);
  hch::AllocGpfifo g{10, 0};  // no power-of-two check; a ring of 30
  ASSERT_EQ(Call(ch, hch::kAllocGpfifo, &g), 0);
  EXPECT_EQ(Submit(ch, 27), 0);       // 30 - 3
  EXPECT_EQ(Submit(ch, 28), ENOMEM);  // one more than the ring takes
}

TEST_F(FakeL4tChannelRules, L4T_CH_8_AllocObjCtxClassesAndRepeats) {
  const uint64_t unbound = Channel(false);
  hch::AllocObjCtx o{0xB197, 0, 0x1234};
  EXPECT_EQ(Call(unbound, hch::kAllocObjCtx, &o), EINVAL);  // no address space
  const uint64_t ch = BoundChannel(as_, 60);                // no gpfifo needed
  channels_.push_back(ch);
  o = {0xA140, 0, 0};  // KEPLER_INLINE_TO_MEMORY_B: not a class GM20B's driver takes
  EXPECT_EQ(Call(ch, hch::kAllocObjCtx, &o), EINVAL);
  o = {0xB197, 0, 0x1234};
  ASSERT_EQ(Call(ch, hch::kAllocObjCtx, &o), 0);
  EXPECT_EQ(o.obj_id, 0x1234u);  // not written
  o = {0xB0B5, 0, 0};
  EXPECT_EQ(Call(ch, hch::kAllocObjCtx, &o), 0);  // again: the context exists, 0
}

TEST_F(FakeL4tChannelRules, L4T_CH_9_SubmitChecksInOrder) {
  EXPECT_EQ(Submit(Channel(false), 1), ETIMEDOUT);  // in no TSG: marked timed out
  EXPECT_EQ(Submit(Channel(true), 1), ENOMEM);      // no gpfifo
  const uint64_t ch = Channel(true, 32);
  EXPECT_EQ(Submit(ch, 29), 0);  // entries - 3
  EXPECT_EQ(Submit(ch, 30), ENOMEM);
  EXPECT_EQ(Submit(ch, 1, 1 /* FENCE_WAIT */ | (1u << 9)), 0);  // fence {0, 0}: reached
}

TEST_F(FakeL4tChannelRules, L4T_CH_10_UndefinedSubmitFlagsAreIgnored) {
  const uint64_t ch = Channel(true, 32);
  entries_.assign(1, entry_);
  hch::SubmitGpfifo s{reinterpret_cast<uint64_t>(entries_.data()), 1, (1u << 1) | (1u << 8), {}};
  ASSERT_EQ(Call(ch, hch::kSubmitGpfifo, &s), 0);  // bit 8 is nothing to r32.7.4
  EXPECT_NE(s.fence.id, 0u);                       // FENCE_GET: {syncpoint, value} back
  hch::SubmitGpfifo plain{reinterpret_cast<uint64_t>(entries_.data()), 1, 0, {5, 6}};
  ASSERT_EQ(Call(ch, hch::kSubmitGpfifo, &plain), 0);
  EXPECT_EQ(plain.fence.id, 5u);  // without FENCE_GET the argument comes back as passed
  EXPECT_EQ(plain.fence.value, 6u);
}

TEST_F(FakeL4tChannelRules, L4T_CH_11_WaitTimeoutZeroIsNoTimeoutAndNotifierTimeoutsAreEintr) {
  const uint64_t ch = Channel(true, 32);
  const uint32_t h = NewObject(nvmap_, 4096);
  // A notifier whose status stays pending (nonzero) times out: EINTR.
  uint16_t pending = 1;
  abi::l4t::nvmap::RwHandle w{reinterpret_cast<uint64_t>(&pending), h, 14, 2, 2, 2, 1};
  ASSERT_EQ(Call(nvmap_, abi::l4t::nvmap::kWrite, &w), 0);
  hch::Wait n{0, 20, h, 0, 0, 0};
  EXPECT_EQ(Call(ch, hch::kWait, &n), EINTR);
  // A semaphore that never reaches the payload times out: ETIMEDOUT.
  hch::Wait sem{1, 20, h, 64, 9, 0};
  EXPECT_EQ(Call(ch, hch::kWait, &sem), ETIMEDOUT);
  // Timeout 0 waits without end: still waiting when answered by nothing.
  hch::Wait forever{1, 0, h, 64, 9, 0};
  auto r = Send(ch, hch::kWait, &forever);
  EXPECT_FALSE(r->done());
  uint32_t nine = 9;
  w = {reinterpret_cast<uint64_t>(&nine), h, 64, 4, 4, 4, 1};
  ASSERT_EQ(Call(nvmap_, abi::l4t::nvmap::kWrite, &w), 0);
  fake_.Release(channels_.back());  // the channel's end answers the parked wait
  channels_.pop_back();
  r->Err();
}

TEST_F(FakeL4tChannelRules, L4T_CH_12_SetErrorNotifierCannotBeTurnedOff) {
  const uint64_t ch = Channel(true, 32);
  hch::SetErrorNotifier e{0, 16, 0, 0};
  EXPECT_EQ(Call(ch, hch::kSetErrorNotifier, &e), EINVAL);  // mem 0
  e.mem = 0xFFF0;                                           // no buffer
  EXPECT_EQ(Call(ch, hch::kSetErrorNotifier, &e), EINVAL);
  e.mem = NewObject(nvmap_, 4096);
  e.offset = 4096 - 8;  // 16 bytes do not fit
  EXPECT_EQ(Call(ch, hch::kSetErrorNotifier, &e), EINVAL);
  e.offset = 0;
  e.size = 0;  // not read
  EXPECT_EQ(Call(ch, hch::kSetErrorNotifier, &e), 0);
}

TEST_F(FakeL4tChannelRules, L4T_CH_13_ZcullBindSeparateBufferNeedsAnAddress) {
  const uint64_t ch = Channel(true, 32);
  hch::ZcullBind z{0, 2, 0};
  EXPECT_EQ(Call(ch, hch::kZcullBind, &z), EINVAL);
  z = {0, 7, 0};  // no other mode is checked
  EXPECT_EQ(Call(ch, hch::kZcullBind, &z), 0);
  z = {0, 1, 0};
  EXPECT_EQ(Call(ch, hch::kZcullBind, &z), 0);
}

// An empty submission is a job: its FENCE_GET fence names the channel's syncpoint, at the max the
// kernel raised by its own two increments (L4T-CH-15); once reached, a CPU increment of that
// host-managed syncpoint is dropped and answers 0 (L4T-SYNC-10).
TEST_F(FakeL4tChannelRules, L4T_CH_15_AndSync10_AnEmptyJobNamesTheSyncpointWhichTheCpuCannotPass) {
  const uint64_t ch = Channel(true, 32);
  entries_.assign(1, entry_);  // not read: zero entries
  hch::SubmitGpfifo s{reinterpret_cast<uint64_t>(entries_.data()), 0, 1u << 1, {}};
  ASSERT_EQ(Call(ch, hch::kSubmitGpfifo, &s), 0);
  ASSERT_NE(s.fence.id, 0u);
  const uint64_t ctrl = Open(L4tNode::kNvhostCtrl);
  hc::SyncptRead max{s.fence.id, 0};
  ASSERT_EQ(Call(ctrl, hc::kSyncptReadMax, &max), 0);
  EXPECT_EQ(max.value, s.fence.value);
  hc::SyncptWaitEx w{s.fence.id, s.fence.value, 5000, 0};
  ASSERT_EQ(Call(ctrl, hc::kSyncptWaitEx, &w), 0);
  hc::SyncptIncr incr{s.fence.id};
  EXPECT_EQ(Call(ctrl, hc::kSyncptIncr, &incr), 0);
  hc::SyncptRead r{s.fence.id, 0};
  ASSERT_EQ(Call(ctrl, hc::kSyncptRead, &r), 0);
  EXPECT_EQ(r.value, s.fence.value) << "the increment past the max was dropped";
  fake_.Release(ctrl);
}

}  // namespace
}  // namespace nvsentry::hostshim::fake_l4t
