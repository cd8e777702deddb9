// The fake Jetson's calls that return fds (docs/host-abi.md L4T-NODE-7, L4T-CTRL-11, L4T-TSG-6)
// and GM20B's 64 KiB default big page (L4T-AS-1, L4T-CTRL-2), without processes: a caller that
// takes fds opens the node with the fake itself and names the new session by a number of its own,
// as `nvsentry fake-l4t DIR -- PROGRAM` does with a real fd.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>

#include "abi/l4t/nvgpu_as.h"
#include "abi/l4t/nvgpu_channel.h"
#include "abi/l4t/nvgpu_ctrl.h"
#include "abi/l4t/nvgpu_tsg.h"
#include "tests/unit/hostshim/fake_l4t/fake_jetson_harness.h"

namespace nvsentry::hostshim::fake_l4t {
namespace {

namespace ha = abi::l4t::nvgpu_as;
namespace hc = abi::l4t::nvgpu_channel;
namespace hg = abi::l4t::nvgpu_ctrl;
namespace ht = abi::l4t::nvgpu_tsg;

// Takes fds: OpenNode opens a session of the fake (the fd it returns is /dev/null's, for the fake
// to close), PlaceFd gives it the next number from 100 on.
class FdCaller : public MemCaller {
 public:
  explicit FdCaller(FakeJetson& fake) : fake_(fake) {}
  int OpenNode(L4tNode node, uint64_t* session) override {
    const int64_t h = fake_.Open(node);
    if (h <= 0) return static_cast<int>(h);
    *session = last_ = static_cast<uint64_t>(h);
    return open("/dev/null", O_RDONLY | O_CLOEXEC);
  }
  int PlaceFd(int fd, bool) override {
    (void)fd;
    fds[next_] = last_;
    return next_++;
  }
  // The eventfd is this process's (`event`, kept for the test to poll); the fake gets a dup.
  int MakeEventFd() override {
    event = eventfd(0, EFD_CLOEXEC);
    return event < 0 ? -errno : dup(event);
  }
  int event = -1;

 private:
  FakeJetson& fake_;
  uint64_t last_ = 0;
  int next_ = 100;
};

class FakeL4tFdRules : public FakeL4tRules {
 protected:
  // The big page size of the address space session `as` (its second region's page size).
  uint32_t BigPagesOf(uint64_t as) {
    ha::VaRegion regions[2] = {};
    ha::GetVaRegions g{reinterpret_cast<uint64_t>(regions), sizeof regions, 0};
    EXPECT_EQ(Call(as, ha::kGetVaRegions, &g), 0);
    return regions[1].page_size;
  }
  // Sends `code` from a caller that takes fds.
  template <typename T>
  int CallTakingFds(uint64_t session, uint32_t code, T* arg) {
    auto r = std::make_shared<Recorded>();
    const uint32_t size = (code >> 16) & 0x3FFF;
    const L4tRequest req{code,
                         {reinterpret_cast<const uint8_t*>(arg), size},
                         reinterpret_cast<uint64_t>(arg),
                         size,
                         fd_caller_};
    fake_.Ioctl(session, req, r);
    const int err = r->Err();
    std::vector<uint8_t> out = r->out();
    if (err == 0) std::memcpy(arg, out.data(), out.size());
    return err;
  }
  FdCaller fd_caller_{fake_};
};

TEST_F(FakeL4tFdRules, L4T_AS_1_AnOpenedAddressSpaceHas64KiBBigPages) {
  const uint64_t as = Open(L4tNode::kNvhostAsGpu);
  EXPECT_EQ(BigPagesOf(as), 0x10000u);
  fake_.Release(as);
}

TEST_F(FakeL4tFdRules, L4T_CTRL_2_TheDefaultBigPageIs64KiB) {
  const uint64_t gpu = Open(L4tNode::kNvhostCtrlGpu);
  hg::GpuCharacteristics c{};
  hg::GetCharacteristics gc{sizeof c, reinterpret_cast<uint64_t>(&c)};
  ASSERT_EQ(Call(gpu, hg::kGetCharacteristics, &gc), 0);
  EXPECT_EQ(c.big_page_size, 0x10000u);
  EXPECT_EQ(c.pde_coverage_bit_count, 26u);
  fake_.Release(gpu);
}

TEST_F(FakeL4tFdRules, L4T_CTRL_11_AllocAsHandsOutAnAddressSpaceWithTheBigPagesAsked) {
  const uint64_t gpu = Open(L4tNode::kNvhostCtrlGpu);
  for (auto [asked, got] : {std::pair{0x20000u, 0x20000u}, {0x10000u, 0x10000u}, {0u, 0x10000u}}) {
    hg::AllocAs a{asked, -1, 0, 0};
    ASSERT_EQ(CallTakingFds(gpu, hg::kAllocAs, &a), 0) << asked;
    ASSERT_TRUE(fd_caller_.fds.contains(a.as_fd)) << a.as_fd;
    const uint64_t as = fd_caller_.fds[a.as_fd];
    EXPECT_EQ(BigPagesOf(as), got) << asked;
    fake_.Release(as);
  }
  hg::AllocAs odd{0x30000, -1, 0, 0};
  EXPECT_EQ(CallTakingFds(gpu, hg::kAllocAs, &odd), EINVAL);
  // A caller that cannot take an fd (FUSE's): ENOTTY, as before.
  hg::AllocAs fuse{0x20000, -1, 0, 0};
  EXPECT_EQ(Call(gpu, hg::kAllocAs, &fuse), ENOTTY);
  fake_.Release(gpu);
}

TEST_F(FakeL4tFdRules, L4T_NODE_7_OpenTsgAndOpenChannelHandOutATsgAndAChannel) {
  const uint64_t gpu = Open(L4tNode::kNvhostCtrlGpu);
  hg::OpenTsg t{};
  ASSERT_EQ(CallTakingFds(gpu, hg::kOpenTsg, &t), 0);
  hg::OpenChannel oc{-1};
  ASSERT_EQ(CallTakingFds(gpu, hg::kOpenChannel, &oc), 0);
  const uint64_t tsg = fd_caller_.fds[static_cast<int32_t>(t.tsg_fd)];
  const uint64_t ch = fd_caller_.fds[oc.channel_fd];
  // A new channel is in no TSG (L4T-TSG-1) until the new TSG binds it (L4T-TSG-7).
  uint32_t timedout = 0;
  ASSERT_EQ(Call(ch, hc::kGetTimedout, &timedout), 0);
  EXPECT_EQ(timedout, 1u);
  caller_.fds = fd_caller_.fds;  // the bind names the channel by its fd
  ht::ChannelFd bind{oc.channel_fd};
  ASSERT_EQ(Call(tsg, ht::kBindChannel, &bind), 0);
  ASSERT_EQ(Call(ch, hc::kGetTimedout, &timedout), 0);
  EXPECT_EQ(timedout, 0u);
  fake_.Release(ch);
  fake_.Release(tsg);
  fake_.Release(gpu);
}

TEST_F(FakeL4tFdRules, L4T_CH_10_SyncFenceAnswersAFenceFdReadableOnceReached) {
  const uint64_t as = Open(L4tNode::kNvhostAsGpu);
  const uint64_t ch = BoundChannel(as);
  hc::AllocGpfifoEx gp{};
  gp.num_entries = 128;
  ASSERT_EQ(Call(ch, hc::kAllocGpfifoEx, &gp), 0);
  constexpr uint32_t kFenceGet = 1u << 1, kSyncFence = 1u << 3;
  hc::SubmitGpfifo fuse{0, 0, kFenceGet | kSyncFence, {}};
  EXPECT_EQ(Call(ch, hc::kSubmitGpfifo, &fuse), EINVAL);  // no fd for a FUSE caller
  hc::SubmitGpfifo sub{0, 0, kFenceGet | kSyncFence, {}};
  ASSERT_EQ(CallTakingFds(ch, hc::kSubmitGpfifo, &sub), 0);
  EXPECT_GE(static_cast<int>(sub.fence.id), 100);  // the caller's fd, not a syncpoint id
  ASSERT_GE(fd_caller_.event, 0);
  pollfd p{fd_caller_.event, POLLIN, 0};
  EXPECT_EQ(poll(&p, 1, 10000), 1);
  EXPECT_TRUE(p.revents & POLLIN);
  close(fd_caller_.event);
  fake_.Release(ch);
  fake_.Release(as);
}

// The fake made for FUSE alone keeps the sim's 128 KiB (its clients cannot get it otherwise).
TEST(FakeL4tDefault, AFakeFor128KiBOpensAndReports128KiB) {
  FakeJetson fake(0x20000);
  MemCaller caller;
  const uint64_t gpu = static_cast<uint64_t>(fake.Open(L4tNode::kNvhostCtrlGpu));
  hg::GpuCharacteristics c{};
  hg::GetCharacteristics gc{sizeof c, reinterpret_cast<uint64_t>(&c)};
  auto r = std::make_shared<Recorded>();
  fake.Ioctl(gpu,
             {hg::kGetCharacteristics,
              {reinterpret_cast<const uint8_t*>(&gc), sizeof gc},
              reinterpret_cast<uint64_t>(&gc),
              sizeof gc,
              caller},
             r);
  ASSERT_EQ(r->Err(), 0);
  EXPECT_EQ(c.big_page_size, 0x20000u);
  EXPECT_EQ(c.pde_coverage_bit_count, 27u);
  fake.Release(gpu);
}

}  // namespace
}  // namespace nvsentry::hostshim::fake_l4t
