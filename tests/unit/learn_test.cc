// --learn: the policy made from what a guest did.
#include "proxy/learn.h"

#include "abi/devices/nvdrv.h"
#include "abi/devices/nvhost_ctrl.h"
#include "gtest/gtest.h"

namespace nvsentry::proxy {
namespace {

const abi::IoctlDesc& Ioctl(abi::DeviceId dev, uint32_t code) {
  const abi::IoctlDesc* d = abi::FindIoctl(abi::Device(dev), code);
  EXPECT_NE(d, nullptr);
  return *d;
}

TEST(Learn, Headroom) {
  EXPECT_EQ(WithHeadroom(3, 1, 100), 6u);
  EXPECT_EQ(WithHeadroom(0, 1, 100), 1u);
  EXPECT_EQ(WithHeadroom(80, 1, 100), 100u);
  EXPECT_EQ(WithHeadroom(UINT64_MAX, 0, UINT64_MAX), UINT64_MAX);
}

TEST(Learn, SmallestPolicyForWhatWasDone) {
  Learner l;
  const abi::IoctlDesc& read = Ioctl(abi::DeviceId::kNvhostCtrl, abi::nvhost_ctrl::kSyncptRead);
  const abi::IoctlDesc& submit = Ioctl(abi::DeviceId::kNvhostGpu, 0xC0004808u | (48u << 16));
  const abi::IoctlDesc& init = Ioctl(abi::DeviceId::kNvdrv, abi::nvdrv::kInitialize);
  l.Opened(abi::Device(abi::DeviceId::kNvhostCtrl));
  l.Opened(abi::Device(abi::DeviceId::kNvhostGpu));
  l.Opened(abi::Device(abi::DeviceId::kNvdrv));
  l.Called(read);
  l.Called(submit);
  l.Called(init);
  abi::ArraySlice three{abi::Buffer::kMain, 24, 3, 24}, forty{abi::Buffer::kMain, 24, 40000, 320000};
  l.Arrays(submit, std::span(&three, 1));
  l.Initialized(0x3000);
  l.Initialized(0x1000);

  policy::Policy ran = policy::DefaultPolicy();
  ran.service = "nvdrv:s";
  ran.permission_mask = 0x439E;
  ran.debug_mode = true;
  ran.action = policy::Action::kAudit;
  policy::Policy p = l.Learned(ran, 3);
  EXPECT_EQ(p.service, "nvdrv:s");
  EXPECT_EQ(p.permission_mask, 0x439Eu);
  EXPECT_TRUE(p.debug_mode);
  EXPECT_EQ(p.action, policy::Action::kErrno);
  EXPECT_EQ(p.budgets.transfer_memory, 0x6000u);
  EXPECT_EQ(p.budgets.open_fds, 6u);
  EXPECT_EQ(p.budgets.channels, 64u) << "not simulated yet: as run";

  EXPECT_EQ(p.Device(abi::DeviceId::kNvmap).backend, policy::Backend::kDeny);
  EXPECT_EQ(p.Device(abi::DeviceId::kNvhostMsenc).backend, policy::Backend::kDeny);
  EXPECT_EQ(p.Device(abi::DeviceId::kNvhostCtrl).backend, policy::Backend::kSimulated);
  EXPECT_EQ(p.Device(abi::DeviceId::kNvhostCtrl).ioctls, policy::Verdict::kDeny);
  const abi::DeviceDesc& ctrl = abi::Device(abi::DeviceId::kNvhostCtrl);
  EXPECT_EQ(p.Ioctl(ctrl, read).verdict, policy::Verdict::kAllow);
  EXPECT_EQ(p.Ioctl(ctrl, Ioctl(abi::DeviceId::kNvhostCtrl, abi::nvhost_ctrl::kSyncptIncr)).verdict,
            policy::Verdict::kDeny);
  const policy::IoctlRule r = p.Ioctl(abi::Device(abi::DeviceId::kNvhostGpu), submit);
  EXPECT_EQ(r.verdict, policy::Verdict::kAllow);
  ASSERT_EQ(r.array_limits.size(), 1u);
  EXPECT_EQ(r.array_limits[0], 6u);

  // A large count: headroom stops at the catalogue's limit (65536 GPFIFO entries).
  l.Arrays(submit, std::span(&forty, 1));
  EXPECT_EQ(l.Learned(ran, 3).Ioctl(abi::Device(abi::DeviceId::kNvhostGpu), submit).array_limits[0],
            65536u);
  // Budgets never above what the guest ran with.
  ran.budgets.transfer_memory = 0x5000;
  ran.budgets.open_fds = 4;
  policy::Policy capped = l.Learned(ran, 3);
  EXPECT_EQ(capped.budgets.transfer_memory, 0x5000u);
  EXPECT_EQ(capped.budgets.open_fds, 4u);
}

TEST(Learn, NothingDoneDeniesEveryDevice) {
  Learner l;
  policy::Policy p = l.Learned(policy::DefaultPolicy(), 0);
  for (const abi::DeviceDesc& d : abi::Devices())
    EXPECT_EQ(p.Device(d.id).backend, policy::Backend::kDeny) << d.path;
  EXPECT_TRUE(p.ioctls.empty());
  EXPECT_EQ(p.budgets.transfer_memory, 0u);
  EXPECT_EQ(p.budgets.open_fds, 1u);
}

}  // namespace
}  // namespace nvsentry::proxy
