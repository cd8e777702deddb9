// The fake Jetson (hostshim/fake_l4t/fake_jetson.h) without FUSE: L4T calls from an in-memory
// caller (fake_jetson_harness.h).
#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>

#include "abi/l4t/nvgpu_ctrl.h"
#include "abi/l4t/nvhost_ctrl.h"
#include "abi/l4t/nvmap.h"
#include "tests/unit/hostshim/fake_l4t/fake_jetson_harness.h"

namespace nvsentry::hostshim::fake_l4t {
namespace {

namespace hc = abi::l4t::nvhost_ctrl;
namespace hm = abi::l4t::nvmap;
namespace hg = abi::l4t::nvgpu_ctrl;

TEST_F(FakeJetsonTest, UnknownCodesAndShortArguments) {
  const uint64_t ctrl = Open(L4tNode::kNvhostCtrl);
  uint32_t x[4] = {};
  EXPECT_EQ(Call(ctrl, 0xC0084899u, x), ENOTTY);
  // SYNCPT_READ's code with another size: not a code of the node.
  EXPECT_EQ(Call(ctrl, 0xC0104801u, x), ENOTTY);
  // The right code, but fewer bytes than it encodes: not from the kernel's restricted ioctl.
  auto r = std::make_shared<Recorded>();
  fake_.Ioctl(ctrl, L4tRequest{hc::kSyncptRead, {reinterpret_cast<uint8_t*>(x), 4}, 0, 8, caller_},
              r);
  EXPECT_EQ(r->Err(), EINVAL);
  EXPECT_EQ(fake_.Open(L4tNode::kHost1xChannel), -ENODEV);
}

TEST_F(FakeJetsonTest, NvmapHandlesBelongToTheirOpenAndGoWithIt) {
  const uint64_t a = Open(L4tNode::kNvmap), b = Open(L4tNode::kNvmap);
  hm::CreateHandle c{};
  c.size = 8192;
  ASSERT_EQ(Call(a, hm::kCreate, &c), 0);
  hm::AllocHandle al{c.handle, 1, 0, 4096};
  ASSERT_EQ(Call(a, hm::kAlloc, &al), 0);
  // Written at one stride, read back at another.
  uint8_t src[8] = {1, 2, 3, 4, 5, 6, 7, 8}, dst[16] = {};
  hm::RwHandle w{reinterpret_cast<uint64_t>(src), c.handle, 100, 4, 8, 4, 2};
  ASSERT_EQ(Call(a, hm::kWrite, &w), 0);
  hm::RwHandle rd{reinterpret_cast<uint64_t>(dst), c.handle, 100, 12, 12, 12, 1};
  ASSERT_EQ(Call(a, hm::kRead, &rd), 0);
  const uint8_t want[12] = {1, 2, 3, 4, 0, 0, 0, 0, 5, 6, 7, 8};
  EXPECT_EQ(std::memcmp(dst, want, 12), 0);
  // Another open does not hold it.
  EXPECT_EQ(Call(b, hm::kRead, &rd), EINVAL);
  auto fr = std::make_shared<Recorded>();
  fake_.Ioctl(b, L4tRequest{hm::kFree, {}, c.handle, 0, caller_}, fr);
  EXPECT_EQ(fr->Err(), EBADF);  // as close(2) of an fd the caller does not have (L4T-MAP-7)
  EXPECT_NE(fake_.Status().find("memory 1 regions 8192 bytes"), std::string::npos)
      << fake_.Status();
  fake_.Release(a);
  EXPECT_NE(fake_.Status().find("memory 0 regions 0 bytes; parked 0; gpu: 0 nvmap objects"),
            std::string::npos)
      << fake_.Status();
  fake_.Release(b);
  EXPECT_EQ(fake_.session_count(), 0u);
}

TEST_F(FakeJetsonTest, AParkedWaitIsAnsweredByTheIncrement) {
  const uint64_t ctrl = Open(L4tNode::kNvhostCtrl);
  hc::SyncptRead rd{3, 0};
  ASSERT_EQ(Call(ctrl, hc::kSyncptRead, &rd), 0);
  hc::SyncptWaitEx now{3, rd.value + 1, 0, 0};
  EXPECT_EQ(Call(ctrl, hc::kSyncptWaitEx, &now), EAGAIN);  // a zero timeout only checks
  hc::SyncptWaitEx w{3, rd.value + 1, -1, 0};
  auto r = Send(ctrl, hc::kSyncptWaitEx, &w);
  EXPECT_FALSE(r->done());  // parked: the serving thread is free
  hc::SyncptIncr inc{3};
  ASSERT_EQ(Call(ctrl, hc::kSyncptIncr, &inc), 0);
  ASSERT_EQ(r->Err(), 0);
  hc::SyncptWaitEx out{};
  std::memcpy(&out, r->out().data(), sizeof out);
  EXPECT_EQ(out.value, rd.value + 1);
  fake_.Release(ctrl);
}

TEST_F(FakeJetsonTest, PointersTheCallerDoesNotHaveAreEfault) {
  const uint64_t gpu = Open(L4tNode::kNvhostCtrlGpu);
  hg::GetCharacteristics gc{256, 8};
  EXPECT_EQ(Call(gpu, hg::kGetCharacteristics, &gc), EFAULT);
  uint8_t buf[256];
  gc = {0, reinterpret_cast<uint64_t>(buf)};  // size 0: only the size comes back
  ASSERT_EQ(Call(gpu, hg::kGetCharacteristics, &gc), 0);
  EXPECT_EQ(gc.gpu_characteristics_buf_size, 256u);
  // An fd that is no open of the fake.
  const uint64_t as = Open(L4tNode::kNvhostAsGpu);
  uint32_t bind = 7;
  EXPECT_EQ(Call(as, 0xC0044101u, &bind), EINVAL);
  const uint64_t ch = Open(L4tNode::kNvhostGpu);
  caller_.fds[7] = ch;
  EXPECT_EQ(Call(as, 0xC0044101u, &bind), 0);
  fake_.Release(ch);
  fake_.Release(as);
  fake_.Release(gpu);
}

}  // namespace
}  // namespace nvsentry::hostshim::fake_l4t
