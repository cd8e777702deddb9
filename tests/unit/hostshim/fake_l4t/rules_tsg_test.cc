// The fake Jetson answers as r32.7.4 does: the TSG rules of docs/host-abi.md (a gm20b channel
// serves nothing until it is bound to a TSG), one test per rule id.
#include <gtest/gtest.h>

#include <cerrno>

#include "abi/l4t/nvgpu_channel.h"
#include "abi/l4t/nvgpu_tsg.h"
#include "tests/unit/hostshim/fake_l4t/fake_jetson_harness.h"

namespace nvsentry::hostshim::fake_l4t {
namespace {

namespace hch = abi::l4t::nvgpu_channel;
namespace ht = abi::l4t::nvgpu_tsg;

class FakeL4tTsgRules : public FakeL4tChannelRules {
 protected:
  // A channel (the caller's fd `fd`) bound to the address space, in no TSG.
  uint64_t SpaceOnly(int32_t fd) {
    const uint64_t ch = Open(L4tNode::kNvhostGpu);
    caller_.fds[fd] = ch;
    channels_.push_back(ch);
    uint32_t bind = static_cast<uint32_t>(fd);
    EXPECT_EQ(Call(as_, 0xC0044101u /* AS BIND_CHANNEL */, &bind), 0);
    return ch;
  }
  // A working channel (fd `fd`) in `tsg`: ring of 32, a 3D object.
  uint64_t Working(uint64_t tsg, int32_t fd) {
    const uint64_t ch = SpaceOnly(fd);
    EXPECT_EQ(BindToTsg(tsg, fd), 0);
    hch::AllocGpfifoEx g{};
    g.num_entries = 32;
    EXPECT_EQ(Call(ch, hch::kAllocGpfifoEx, &g), 0);
    hch::AllocObjCtx o{0xB197, 0, 0};
    EXPECT_EQ(Call(ch, hch::kAllocObjCtx, &o), 0);
    return ch;
  }
  uint32_t TimedOut(uint64_t ch) {
    hch::U32Arg t{7};
    EXPECT_EQ(Call(ch, hch::kGetTimedout, &t), 0);
    return t.value;
  }
  int Wait(uint64_t ch) {
    const uint32_t h = NewObject(nvmap_, 4096);
    hch::Wait w{1, 20, h, 64, 0, 0};  // a semaphore already at its payload
    return Call(ch, hch::kWait, &w);
  }
  int Unbind(uint64_t tsg, int32_t fd) {
    int32_t channel_fd = fd;
    return Call(tsg, ht::kUnbindChannel, &channel_fd);
  }
};

TEST_F(FakeL4tTsgRules, L4T_TSG_1_ANewChannelIsTimedOutUntilBound) {
  const uint64_t ch = Open(L4tNode::kNvhostGpu);
  channels_.push_back(ch);
  caller_.fds[70] = ch;
  EXPECT_EQ(TimedOut(ch), 1u);
  ASSERT_EQ(BindToTsg(Open(L4tNode::kTsg), 70), 0);  // no address space needed
  EXPECT_EQ(TimedOut(ch), 0u);
}

TEST_F(FakeL4tTsgRules, L4T_TSG_2_SetupNeedsATsg) {
  const uint64_t ch = SpaceOnly(70);
  hch::AllocGpfifoEx g{};
  g.num_entries = 32;
  EXPECT_EQ(Call(ch, hch::kAllocGpfifoEx, &g), EINVAL);
  hch::AllocGpfifo plain{10, 0};
  EXPECT_EQ(Call(ch, hch::kAllocGpfifo, &plain), EINVAL);
  ASSERT_EQ(BindToTsg(Open(L4tNode::kTsg), 70), 0);
  EXPECT_EQ(Call(ch, hch::kAllocGpfifoEx, &g), 0);
}

TEST_F(FakeL4tTsgRules, L4T_TSG_3_AnObjectNeedsATsg) {
  const uint64_t ch = SpaceOnly(70);
  hch::AllocObjCtx o{0xB197, 0, 0};
  EXPECT_EQ(Call(ch, hch::kAllocObjCtx, &o), EINVAL);
  ASSERT_EQ(BindToTsg(Open(L4tNode::kTsg), 70), 0);
  EXPECT_EQ(Call(ch, hch::kAllocObjCtx, &o), 0);
}

TEST_F(FakeL4tTsgRules, L4T_TSG_4_SubmissionsNeedATsg) {
  const uint64_t ch = SpaceOnly(70);
  EXPECT_EQ(Submit(ch, 1), ETIMEDOUT);
  EXPECT_EQ(Wait(ch), ETIMEDOUT);
  EXPECT_EQ(TimedOut(ch), 1u);
  const uint64_t working = Working(Open(L4tNode::kTsg), 71);
  EXPECT_EQ(Submit(working, 1), 0);
  EXPECT_EQ(Wait(working), 0);
}

TEST_F(FakeL4tTsgRules, L4T_TSG_5_ZcullBindNeedsATsg) {
  const uint64_t ch = SpaceOnly(70);
  hch::ZcullBind z{0, 1, 0};
  EXPECT_EQ(Call(ch, hch::kZcullBind, &z), EINVAL);
  ASSERT_EQ(BindToTsg(Open(L4tNode::kTsg), 70), 0);
  EXPECT_EQ(Call(ch, hch::kZcullBind, &z), 0);
}

TEST_F(FakeL4tTsgRules, L4T_TSG_6_OpeningTheNodeMakesATsg) {
  const int64_t a = fake_.Open(L4tNode::kTsg), b = fake_.Open(L4tNode::kTsg);
  ASSERT_GT(a, 0);
  ASSERT_GT(b, 0);
  EXPECT_NE(a, b);
  // Each open is a TSG of its own: a channel in one is refused by the other (L4T-TSG-7).
  SpaceOnly(70);
  ASSERT_EQ(BindToTsg(static_cast<uint64_t>(a), 70), 0);
  EXPECT_EQ(BindToTsg(static_cast<uint64_t>(b), 70), EINVAL);
  // The node's limits (L4T-NODE-2): number 13 is past the last, EINVAL; number 6 is unserved.
  uint32_t x[2] = {};
  EXPECT_EQ(Call(static_cast<uint64_t>(a), 0x4008540Du, x), EINVAL);
  EXPECT_EQ(Call(static_cast<uint64_t>(a), 0x40085406u, x), ENOTTY);
}

TEST_F(FakeL4tTsgRules, L4T_TSG_7_BindChannelChecks) {
  const uint64_t tsg = Open(L4tNode::kTsg);
  EXPECT_EQ(BindToTsg(tsg, -1), EINVAL);
  EXPECT_EQ(BindToTsg(tsg, 99), EINVAL);  // no fd of the caller
  caller_.fds[98] = as_;
  EXPECT_EQ(BindToTsg(tsg, 98), EINVAL);  // an fd that is no channel
  SpaceOnly(70);
  ASSERT_EQ(BindToTsg(tsg, 70), 0);
  EXPECT_EQ(BindToTsg(tsg, 70), EINVAL);  // already in this TSG
  // Active (its gpfifo scheduled): refused even once out of its TSG.
  Working(tsg, 71);
  ASSERT_EQ(Unbind(tsg, 71), 0);
  EXPECT_EQ(BindToTsg(Open(L4tNode::kTsg), 71), EINVAL);
}

TEST_F(FakeL4tTsgRules, L4T_TSG_8_EitherBindFirstThenSetUpThenSubmit) {
  const uint64_t tsg_first = Open(L4tNode::kNvhostGpu);
  channels_.push_back(tsg_first);
  caller_.fds[70] = tsg_first;
  ASSERT_EQ(BindToTsg(Open(L4tNode::kTsg), 70), 0);
  uint32_t bind = 70;
  ASSERT_EQ(Call(as_, 0xC0044101u /* AS BIND_CHANNEL */, &bind), 0);
  hch::AllocGpfifoEx g{};
  g.num_entries = 32;
  ASSERT_EQ(Call(tsg_first, hch::kAllocGpfifoEx, &g), 0);
  hch::AllocObjCtx o{0xB197, 0, 0};
  ASSERT_EQ(Call(tsg_first, hch::kAllocObjCtx, &o), 0);
  EXPECT_EQ(Submit(tsg_first, 1), 0);
  EXPECT_EQ(Submit(Working(Open(L4tNode::kTsg), 71), 1), 0);  // the address space first
}

TEST_F(FakeL4tTsgRules, L4T_TSG_9_TheContextIsTheTsgs) {
  const uint64_t tsg = Open(L4tNode::kTsg);
  const uint64_t a = Working(tsg, 70);
  const uint64_t b = Working(tsg, 71);  // its ALLOC_OBJ_CTX commits the TSG's context: 0
  hch::AllocObjCtx o{0xB1C0, 0, 0};
  EXPECT_EQ(Call(a, hch::kAllocObjCtx, &o), 0);
  EXPECT_EQ(Submit(a, 1), 0);
  EXPECT_EQ(Submit(b, 1), 0);
}

TEST_F(FakeL4tTsgRules, L4T_TSG_10_SchedulingLivesOnTheTsg) {
  const uint64_t tsg = Open(L4tNode::kTsg);
  const uint64_t ch = Working(tsg, 70);
  ht::Timeslice t{2000, 0};
  EXPECT_EQ(Call(ch, 0x40084879u /* channel SET_TIMESLICE */, &t), ENOTTY);
  ht::EventIdCtrl e{1, 2, 0, 0};
  EXPECT_EQ(Call(ch, 0xC0104875u /* channel EVENT_ID_CTRL */, &e), ENOTTY);
  EXPECT_EQ(Call(tsg, ht::kSetTimeslice, &t), 0);
  ht::RunlistInterleave r{2, 0};
  EXPECT_EQ(Call(tsg, ht::kSetRunlistInterleave, &r), 0);
}

TEST_F(FakeL4tTsgRules, L4T_TSG_11_ForceResetEndsEveryChannelOfTheTsg) {
  const uint64_t tsg = Open(L4tNode::kTsg);
  const uint64_t a = Working(tsg, 70), b = Working(tsg, 71);
  const uint64_t other = Working(Open(L4tNode::kTsg), 72);
  ASSERT_EQ(Submit(b, 1), 0);
  EXPECT_EQ(Call<uint32_t>(a, hch::kForceReset, nullptr), 0);
  for (uint64_t ch : {a, b}) {
    EXPECT_EQ(Submit(ch, 1), ETIMEDOUT);
    EXPECT_EQ(Wait(ch), ETIMEDOUT);
    EXPECT_EQ(TimedOut(ch), 1u);
  }
  EXPECT_EQ(Submit(other, 1), 0);  // another TSG's channel goes on
  EXPECT_EQ(TimedOut(other), 0u);
  // Without a TSG it does nothing: the channel can still be bound and used.
  const uint64_t alone = SpaceOnly(73);
  EXPECT_EQ(Call<uint32_t>(alone, hch::kForceReset, nullptr), 0);
  ASSERT_EQ(BindToTsg(Open(L4tNode::kTsg), 73), 0);
  EXPECT_EQ(TimedOut(alone), 0u);
}

TEST_F(FakeL4tTsgRules, L4T_TSG_12_UnbindChannelEndsTheChannel) {
  const uint64_t tsg = Open(L4tNode::kTsg);
  const uint64_t ch = Working(tsg, 70);
  Working(Open(L4tNode::kTsg), 71);
  EXPECT_EQ(Unbind(tsg, -1), EINVAL);
  EXPECT_EQ(Unbind(tsg, 71), EINVAL);  // another TSG's channel
  ASSERT_EQ(Unbind(tsg, 70), 0);
  EXPECT_EQ(TimedOut(ch), 1u);
  EXPECT_EQ(Submit(ch, 1), ETIMEDOUT);
  EXPECT_EQ(Unbind(tsg, 70), EINVAL);  // no longer this TSG's
}

TEST_F(FakeL4tTsgRules, L4T_TSG_13_TimesliceAndInterleaveBounds) {
  const uint64_t tsg = Open(L4tNode::kTsg);
  for (auto [us, err] : {std::pair{999u, EINVAL}, {1000u, 0}, {50000u, 0}, {50001u, EINVAL}}) {
    ht::Timeslice t{us, 0};
    EXPECT_EQ(Call(tsg, ht::kSetTimeslice, &t), err) << us;
  }
  for (auto [level, err] : {std::pair{0u, 0}, {1u, 0}, {2u, 0}, {3u, EINVAL}}) {
    ht::RunlistInterleave r{level, 0};
    EXPECT_EQ(Call(tsg, ht::kSetRunlistInterleave, &r), err) << level;
  }
}

}  // namespace
}  // namespace nvsentry::hostshim::fake_l4t
