// The fake Jetson's calls that return fds (docs/host-abi.md L4T-NODE-7, L4T-CTRL-11, L4T-TSG-6)
// and GM20B's 64 KiB default big page (L4T-AS-1, L4T-CTRL-2), without processes: a caller that
// takes fds opens the node with the fake itself and names the new session by a number of its own,
// as `nvsentry fake-l4t DIR -- PROGRAM` does with a real fd.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <set>

#include "abi/l4t/nvgpu_as.h"
#include "abi/l4t/nvgpu_channel.h"
#include "abi/l4t/nvgpu_ctrl.h"
#include "abi/l4t/nvgpu_tsg.h"
#include "abi/l4t/nvmap.h"
#include "tests/unit/hostshim/fake_l4t/fake_jetson_harness.h"

namespace nvsentry::hostshim::fake_l4t {
namespace {

namespace ha = abi::l4t::nvgpu_as;
namespace hc = abi::l4t::nvgpu_channel;
namespace hg = abi::l4t::nvgpu_ctrl;
namespace ht = abi::l4t::nvgpu_tsg;
namespace hm = abi::l4t::nvmap;

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
  int OpenEventFile(uint64_t* session) override {
    const int64_t h = fake_.OpenEventFile();
    if (h <= 0) return static_cast<int>(h);
    *session = last_ = static_cast<uint64_t>(h);
    return open("/dev/null", O_RDONLY | O_CLOEXEC);
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

// EVENT_ID_CTRL (L4T-TSG-14): an fd per enabled event, refused past the last event id, for a
// command other than ENABLE and for an event enabled while its fd is open; BLOCKING_SYNC polls
// readable once the work of a bound channel raises a non-stall interrupt (here: the host's
// NON_STALL_INTERRUPT), and the poll that finds it clears it.
TEST_F(FakeL4tFdRules, L4T_TSG_14_EventIdCtrlHandsOutAnEventFdPostedByTheGpusWork) {
  const uint64_t nvmap = Open(L4tNode::kNvmap);
  const uint64_t as = Open(L4tNode::kNvhostAsGpu);
  const uint64_t tsg = Open(L4tNode::kTsg);
  ht::EventIdCtrl past{1, 6, -1, 0};
  EXPECT_EQ(CallTakingFds(tsg, ht::kEventIdCtrl, &past), EINVAL);
  ht::EventIdCtrl other_cmd{2, 2, -1, 0};
  EXPECT_EQ(CallTakingFds(tsg, ht::kEventIdCtrl, &other_cmd), EINVAL);
  ht::EventIdCtrl fuse{1, 2, -1, 0};
  EXPECT_EQ(Call(tsg, ht::kEventIdCtrl, &fuse), ENOTTY);  // no fd for a FUSE caller
  ht::EventIdCtrl ev{1, 2, -1, 0};
  ASSERT_EQ(CallTakingFds(tsg, ht::kEventIdCtrl, &ev), 0);
  ASSERT_TRUE(fd_caller_.fds.contains(ev.event_fd)) << ev.event_fd;  // the caller's new fd
  const uint64_t event = fd_caller_.fds[ev.event_fd];
  ht::EventIdCtrl twice{1, 2, -1, 0};
  EXPECT_EQ(CallTakingFds(tsg, ht::kEventIdCtrl, &twice), EINVAL);
  // A channel of the TSG runs the host's NON_STALL_INTERRUPT.
  const uint64_t ch = Open(L4tNode::kNvhostGpu);
  caller_.fds[40] = ch;
  uint32_t bind = 40;
  ASSERT_EQ(Call(as, 0xC0044101u /* AS BIND_CHANNEL */, &bind), 0);
  ASSERT_EQ(BindToTsg(tsg, 40), 0);
  hc::AllocGpfifoEx gp{};
  gp.num_entries = 128;
  ASSERT_EQ(Call(ch, hc::kAllocGpfifoEx, &gp), 0);
  const uint32_t words[] = {(1u << 29) | (1u << 16) | (0x20 >> 2), 0};
  const uint32_t push = NewObject(nvmap, 4096);
  hm::RwHandle w{reinterpret_cast<uint64_t>(words), push, 0, 8, 8, 8, 1};
  ASSERT_EQ(Call(nvmap, hm::kWrite, &w), 0);
  ha::MapBufferEx m{};
  m.flags = ha::kMapDirectKindCtrl;
  m.compr_kind = ha::kKindInvalid;
  m.dmabuf_fd = push;
  ASSERT_EQ(Call(as, ha::kMapBufferEx, &m), 0);
  std::atomic<bool> woken{false};
  EXPECT_EQ(fake_.Poll(event, [&woken] { woken = true; }), 0u);  // nothing posted yet
  hc::GpfifoEntry e{static_cast<uint32_t>(m.offset),
                    static_cast<uint32_t>(m.offset >> 32) | (2u << 10)};
  hc::SubmitGpfifo sub{reinterpret_cast<uint64_t>(&e), 1, 0, {}};
  ASSERT_EQ(Call(ch, hc::kSubmitGpfifo, &sub), 0);
  for (int i = 0; i < 10000 && !woken; ++i) usleep(1000);
  EXPECT_TRUE(woken);
  EXPECT_EQ(fake_.Poll(event, {}), unsigned{POLLIN | POLLPRI});
  EXPECT_EQ(fake_.Poll(event, {}), 0u);  // the poll that found it cleared it
  // The event's fd closed: the event may be enabled again.
  fake_.Release(event);
  ht::EventIdCtrl again{1, 2, -1, 0};
  EXPECT_EQ(CallTakingFds(tsg, ht::kEventIdCtrl, &again), 0);
  fake_.Release(fd_caller_.fds[again.event_fd]);
  fake_.Release(ch);
  fake_.Release(tsg);
  fake_.Release(as);
  fake_.Release(nvmap);
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

// nvmap handles as fds (L4T-MAP-1, -3, -7, L4T-NODE-8): a fake made with handles_are_fds, and a
// caller whose fd table is `fds` (each number naming a session of the fake; `others` are open fds
// that are no dma-buf); a session goes when the last number naming it is closed, as a file does.
class HandleFdCaller : public MemCaller {
 public:
  explicit HandleFdCaller(FakeJetson& fake) : fake_(fake) {}
  int OpenHandleFile(uint64_t* session) override {
    const int64_t h = fake_.OpenHandleFile();
    if (h <= 0) return static_cast<int>(h);
    *session = last_ = static_cast<uint64_t>(h);
    return open("/dev/null", O_RDONLY | O_CLOEXEC);
  }
  int DupFd(int32_t fd, bool) override {
    if (!fds.contains(fd)) return -EBADF;
    last_ = fds[fd];
    return open("/dev/null", O_RDONLY | O_CLOEXEC);
  }
  int PlaceFd(int, bool) override {
    fds[next_] = last_;
    return next_++;
  }
  int CloseFd(int32_t fd) override {
    if (others.erase(fd) != 0) return 0;
    auto it = fds.find(fd);
    if (it == fds.end()) return -EBADF;
    const uint64_t session = it->second;
    fds.erase(it);
    for (const auto& [n, s] : fds)
      if (s == session) return 0;
    fake_.Release(session);  // the file's last fd: FUSE's RELEASE
    return 0;
  }
  bool IsOpenFd(int32_t fd) override { return fds.contains(fd) || others.contains(fd); }
  std::set<int32_t> others = {0, 1, 2};

 private:
  FakeJetson& fake_;
  uint64_t last_ = 0;
  int next_ = 100;
};

class FakeL4tHandleFds : public ::testing::Test {
 protected:
  template <typename T>
  int Call(uint64_t session, uint32_t code, T* arg, L4tCaller* caller = nullptr) {
    const uint32_t size = (code >> 16) & 0x3FFF;
    const bool in = code & (1u << 30), out = code & (1u << 31);
    auto r = std::make_shared<Recorded>();
    const L4tRequest req{code,
                         {reinterpret_cast<const uint8_t*>(arg), in ? size : 0u},
                         reinterpret_cast<uint64_t>(arg),
                         out ? size : 0u,
                         caller != nullptr ? *caller : caller_};
    fake_.Ioctl(session, req, r);
    const int err = r->Err();
    std::vector<uint8_t> got = r->out();
    if (err == 0 && !got.empty()) std::memcpy(arg, got.data(), got.size());
    return err;
  }
  int Free(uint64_t nvmap, uint64_t fd) {
    auto r = std::make_shared<Recorded>();
    fake_.Ioctl(nvmap, {hm::kFree, {}, fd, 0, caller_}, r);
    return r->Err();
  }
  // A CREATEd and ALLOCated object of 4 KiB: its fd.
  int32_t NewObject(uint64_t nvmap) {
    hm::CreateHandle c{};
    c.size = 4096;
    EXPECT_EQ(Call(nvmap, hm::kCreate, &c), 0);
    hm::AllocHandle a{c.handle, 1u << 30, 1, 4096};
    EXPECT_EQ(Call(nvmap, hm::kAlloc, &a), 0);
    return static_cast<int32_t>(c.handle);
  }
  int Write(uint64_t nvmap, uint32_t handle, uint32_t* word) {
    hm::RwHandle rw{reinterpret_cast<uint64_t>(word), handle, 0, 4, 4, 4, 1};
    return Call(nvmap, hm::kWrite, &rw);
  }
  int Read(uint64_t nvmap, uint32_t handle, uint32_t* word) {
    hm::RwHandle rw{reinterpret_cast<uint64_t>(word), handle, 0, 4, 4, 4, 1};
    return Call(nvmap, hm::kRead, &rw);
  }
  uint64_t Open(L4tNode n) { return static_cast<uint64_t>(fake_.Open(n)); }

  FakeJetson fake_{0x10000, /*handles_are_fds=*/true};
  HandleFdCaller caller_{fake_};
};

TEST_F(FakeL4tHandleFds, L4T_MAP_1_AHandleIsAnFdThatOutlivesItsNvmapOpen) {
  const uint64_t nvmap = Open(L4tNode::kNvmap);
  const int32_t fd = NewObject(nvmap);
  ASSERT_TRUE(caller_.fds.contains(fd)) << fd;  // the caller's fd, not an id
  uint32_t word = 0x1234;
  ASSERT_EQ(Write(nvmap, fd, &word), 0);
  fake_.Release(nvmap);  // the nvmap open goes; the fd keeps the object
  const uint64_t other = Open(L4tNode::kNvmap);
  word = 0;
  ASSERT_EQ(Read(other, fd, &word), 0);  // good on any nvmap open
  EXPECT_EQ(word, 0x1234u);
  // The fd is a dma-buf, not an nvmap open: nvmap's calls on it answer ENOTTY.
  hm::CreateHandle c{};
  c.size = 4096;
  EXPECT_EQ(Call(caller_.fds[fd], hm::kCreate, &c), ENOTTY);
  ASSERT_EQ(Free(other, fd), 0);
  fake_.Release(other);
  EXPECT_TRUE(fake_.HoldsNothing()) << fake_.Status();
}

TEST_F(FakeL4tHandleFds, L4T_MAP_2_CreateOverFuseAloneIsEnotty) {
  const uint64_t nvmap = Open(L4tNode::kNvmap);
  MemCaller fuse;  // cannot take an fd
  hm::CreateHandle c{};
  c.size = 4096;
  EXPECT_EQ(Call(nvmap, hm::kCreate, &c, &fuse), ENOTTY);
  fake_.Release(nvmap);
  EXPECT_TRUE(fake_.HoldsNothing()) << fake_.Status();  // the object made went again
}

TEST_F(FakeL4tHandleFds, L4T_MAP_3_GetFdAndFromFdAreNewFdsOfTheSameBuffer) {
  const uint64_t nvmap = Open(L4tNode::kNvmap);
  const int32_t fd = NewObject(nvmap);
  hm::CreateHandle get{};
  get.handle = static_cast<uint32_t>(fd);
  ASSERT_EQ(Call(nvmap, hm::kGetFd, &get), 0);
  hm::CreateHandle from{};
  from.fd = fd;
  ASSERT_EQ(Call(nvmap, hm::kFromFd, &from), 0);
  ASSERT_NE(get.fd, fd);
  ASSERT_NE(static_cast<int32_t>(from.handle), fd);
  EXPECT_EQ(caller_.fds[get.fd], caller_.fds[fd]);  // the same open file
  EXPECT_EQ(caller_.fds[static_cast<int32_t>(from.handle)], caller_.fds[fd]);
  uint32_t word = 7;
  ASSERT_EQ(Free(nvmap, fd), 0);
  ASSERT_EQ(Write(nvmap, static_cast<uint32_t>(get.fd), &word), 0);  // the others still name it
  word = 0;
  ASSERT_EQ(Read(nvmap, from.handle, &word), 0);
  EXPECT_EQ(word, 7u);
  // dma_buf_get's errnos: no open fd EBADF, an fd that is no dma-buf EINVAL.
  hm::CreateHandle bad{};
  bad.fd = 77;
  EXPECT_EQ(Call(nvmap, hm::kFromFd, &bad), EBADF);
  bad.handle = 1;
  EXPECT_EQ(Call(nvmap, hm::kGetFd, &bad), EINVAL);
  ASSERT_EQ(Free(nvmap, static_cast<uint32_t>(get.fd)), 0);
  ASSERT_EQ(Free(nvmap, from.handle), 0);
  fake_.Release(nvmap);
  EXPECT_TRUE(fake_.HoldsNothing()) << fake_.Status();
}

TEST_F(FakeL4tHandleFds, L4T_MAP_7_FreeClosesTheFdWhateverItIs) {
  const uint64_t nvmap = Open(L4tNode::kNvmap);
  const int32_t fd = NewObject(nvmap);
  EXPECT_EQ(Free(nvmap, 0), 0);
  ASSERT_EQ(Free(nvmap, static_cast<uint64_t>(fd)), 0);
  EXPECT_FALSE(caller_.fds.contains(fd));
  EXPECT_EQ(Free(nvmap, static_cast<uint64_t>(fd)), EBADF);  // closed already
  uint32_t word = 0;
  EXPECT_EQ(Read(nvmap, static_cast<uint32_t>(fd), &word), EINVAL);
  EXPECT_EQ(Free(nvmap, 2), 0);  // sys_close: any fd
  EXPECT_FALSE(caller_.others.contains(2));
  fake_.Release(nvmap);
  EXPECT_TRUE(fake_.HoldsNothing()) << fake_.Status();
}

TEST_F(FakeL4tHandleFds, L4T_NODE_8_DmabufFdsAreLookedUpInTheCallersFdTable) {
  const uint64_t nvmap = Open(L4tNode::kNvmap);
  const uint64_t as = Open(L4tNode::kNvhostAsGpu);
  const int32_t fd = NewObject(nvmap);
  ha::MapBufferEx m{};
  m.flags = ha::kMapDirectKindCtrl;
  m.compr_kind = ha::kKindInvalid;
  m.dmabuf_fd = 77;  // no open fd
  EXPECT_EQ(Call(as, ha::kMapBufferEx, &m), EBADF);
  m.dmabuf_fd = 1;  // open, no dma-buf
  EXPECT_EQ(Call(as, ha::kMapBufferEx, &m), EINVAL);
  m.dmabuf_fd = static_cast<uint32_t>(fd);
  ASSERT_EQ(Call(as, ha::kMapBufferEx, &m), 0);
  EXPECT_NE(m.offset, 0u);
  EXPECT_EQ(m.dmabuf_fd, static_cast<uint32_t>(fd));  // as passed
  // Another fd of the same buffer maps to the same address (L4T-AS-13).
  hm::CreateHandle get{};
  get.handle = static_cast<uint32_t>(fd);
  ASSERT_EQ(Call(nvmap, hm::kGetFd, &get), 0);
  ha::MapBufferEx again = m;
  again.offset = 0;
  again.dmabuf_fd = static_cast<uint32_t>(get.fd);
  ASSERT_EQ(Call(as, ha::kMapBufferEx, &again), 0);
  EXPECT_EQ(again.offset, m.offset);
  ASSERT_EQ(Free(nvmap, static_cast<uint32_t>(get.fd)), 0);
  ASSERT_EQ(Free(nvmap, static_cast<uint32_t>(fd)), 0);
  fake_.Release(as);
  fake_.Release(nvmap);
  EXPECT_TRUE(fake_.HoldsNothing()) << fake_.Status();
}

}  // namespace
}  // namespace nvsentry::hostshim::fake_l4t
