// --learn: the policy made from what a guest did.
#include "proxy/learn.h"

#include <cstring>

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
  abi::ArraySlice three{abi::Buffer::kMain, 24, 3, 24},
      forty{abi::Buffer::kMain, 24, 40000, 320000};
  l.Arrays(submit, std::span(&three, 1));
  l.Initialized(0x3000);
  l.Initialized(0x1000);

  policy::Policy ran = policy::DefaultPolicy();
  ran.service = "nvdrv:s";
  ran.permission_mask = 0x439E;
  ran.debug_mode = true;
  ran.action = policy::Action::kAudit;
  BudgetAccount used(ran.budgets);
  for (int i = 0; i < 3; ++i) used.Charge(BudgetKind::kOpenFds);
  policy::Policy p = l.Learned(ran, used);
  EXPECT_EQ(p.service, "nvdrv:s");
  EXPECT_EQ(p.permission_mask, 0x439Eu);
  EXPECT_TRUE(p.debug_mode);
  EXPECT_EQ(p.action, policy::Action::kErrno);
  EXPECT_EQ(p.budgets.transfer_memory, 0x6000u);
  EXPECT_EQ(p.budgets.open_fds, 6u);
  EXPECT_EQ(p.budgets.channels, 0u) << "none made: none allowed";
  EXPECT_EQ(p.budgets.nvmap_objects, 0u);

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
  EXPECT_EQ(
      l.Learned(ran, used).Ioctl(abi::Device(abi::DeviceId::kNvhostGpu), submit).array_limits[0],
      65536u);
  // Budgets never above what the guest ran with.
  ran.budgets.transfer_memory = 0x5000;
  ran.budgets.open_fds = 4;
  policy::Policy capped = l.Learned(ran, used);
  EXPECT_EQ(capped.budgets.transfer_memory, 0x5000u);
  EXPECT_EQ(capped.budgets.open_fds, 4u);
}

TEST(Learn, ChannelClassesAreWhatTheChannelsBound) {
  Learner l;
  BudgetAccount used(policy::Budgets{});
  // No channel opened: nothing said, the (denied) ALLOC_OBJ_CTX rule decides.
  EXPECT_FALSE(l.Learned(policy::DefaultPolicy(), used).channel_classes.has_value());
  l.Opened(abi::Device(abi::DeviceId::kNvhostGpu));
  EXPECT_EQ(l.Learned(policy::DefaultPolicy(), used).channel_classes, std::vector<uint32_t>{});
  l.Bound(0xB197);
  l.Bound(0xB0B5);
  l.Bound(0xA140);
  l.Bound(0xB0B5);
  EXPECT_EQ(l.Learned(policy::DefaultPolicy(), used).channel_classes,
            (std::vector<uint32_t>{0xA140, 0xB0B5, 0xB197}));
}

TEST(Learn, NothingDoneDeniesEveryDevice) {
  Learner l;
  BudgetAccount used(policy::Budgets{});
  policy::Policy p = l.Learned(policy::DefaultPolicy(), used);
  for (const abi::DeviceDesc& d : abi::Devices())
    EXPECT_EQ(p.Device(d.id).backend, policy::Backend::kDeny) << d.path;
  EXPECT_TRUE(p.ioctls.empty());
  EXPECT_EQ(p.budgets.transfer_memory, 0u);
  EXPECT_EQ(p.budgets.open_fds, 1u);
}

TEST(Learn, BudgetPeaksWithHeadroom) {
  Learner l;
  policy::Policy ran = policy::DefaultPolicy();
  BudgetAccount used(ran.budgets);
  for (int i = 0; i < 5; ++i) used.Charge(BudgetKind::kNvmapObjects);
  used.Release(BudgetKind::kNvmapObjects, 5);  // the peak, not what is held at the end, counts
  used.Charge(BudgetKind::kChannels);
  used.Charge(BudgetKind::kAddressSpaces);
  used.Charge(BudgetKind::kPinnedBytes, 0x30000);
  used.Charge(BudgetKind::kTransferMemory, 0x5000);
  l.Initialized(0x1000);
  policy::Policy p = l.Learned(ran, used);
  EXPECT_EQ(p.budgets.nvmap_objects, 10u);
  EXPECT_EQ(p.budgets.channels, 2u);
  EXPECT_EQ(p.budgets.address_spaces, 2u);
  EXPECT_EQ(p.budgets.pinned_bytes, 0x60000u);
  EXPECT_EQ(p.budgets.transfer_memory, 0xA000u) << "sentry-backed objects outweigh Initialize";
}

// The field of `desc` named `name`.
const abi::Field& FieldNamed(const abi::IoctlDesc& desc, std::string_view name) {
  for (const abi::Field& f : desc.fields)
    if (f.name == name) return f;
  ADD_FAILURE() << name;
  return desc.fields[0];
}

TEST(Learn, FieldRulesFromWhatTheGuestPassed) {
  Learner l;
  const abi::IoctlDesc& create = Ioctl(abi::DeviceId::kNvmap, 0xC0080101u);
  const abi::IoctlDesc& alloc = Ioctl(abi::DeviceId::kNvmap, 0xC0200104u);
  const abi::IoctlDesc& obj = Ioctl(abi::DeviceId::kNvhostGpu, 0xC0104809u);
  const abi::IoctlDesc& read = Ioctl(abi::DeviceId::kNvhostCtrl, abi::nvhost_ctrl::kSyncptRead);
  l.Opened(abi::Device(abi::DeviceId::kNvmap));
  l.Opened(abi::Device(abi::DeviceId::kNvhostGpu));
  l.Opened(abi::Device(abi::DeviceId::kNvhostCtrl));
  for (const abi::IoctlDesc* d : {&create, &alloc, &obj, &read}) l.Called(*d);
  auto u32s = [](std::initializer_list<uint32_t> words) {
    std::vector<uint8_t> b(words.size() * 4);
    size_t i = 0;
    for (uint32_t w : words) std::memcpy(b.data() + 4 * i++, &w, 4);
    return b;
  };
  l.Fields(create, u32s({0x3000, 0}));
  l.Fields(create, u32s({0x10000, 0}));
  l.Fields(alloc, u32s({4, 0x1, 0, 0x1000, 0, 0, 0, 0}));
  l.Fields(alloc, u32s({8, 0x4, 0, 0x1000, 0, 0, 0, 0}));
  l.Fields(obj, u32s({0xB197, 0, 0, 0}));
  l.Fields(obj, u32s({0xB0B5, 0, 0, 0}));
  l.Fields(obj, u32s({0xB197, 0, 0, 0}));
  l.Fields(read, u32s({3, 0}));  // nothing learnable
  BudgetAccount used(policy::Budgets{});
  policy::Policy p = l.Learned(policy::DefaultPolicy(), used);
  const abi::DeviceDesc& nvmap = abi::Device(abi::DeviceId::kNvmap);
  const policy::IoctlRule rc = p.Ioctl(nvmap, create);
  ASSERT_EQ(rc.fields.size(), 1u);
  EXPECT_EQ(rc.fields[0].field, &FieldNamed(create, "size"));
  EXPECT_EQ(rc.fields[0].max, 0x20000u);
  const policy::IoctlRule ra = p.Ioctl(nvmap, alloc);
  ASSERT_EQ(ra.fields.size(), 1u);
  EXPECT_EQ(ra.fields[0].bits, 0x5u);
  const policy::IoctlRule ro = p.Ioctl(abi::Device(abi::DeviceId::kNvhostGpu), obj);
  ASSERT_EQ(ro.fields.size(), 1u);
  EXPECT_EQ(ro.fields[0].one_of, (std::vector<uint64_t>{0xB0B5, 0xB197}));
  EXPECT_TRUE(p.Ioctl(abi::Device(abi::DeviceId::kNvhostCtrl), read).fields.empty());
}

TEST(Learn, EveryLearnableFieldIsInTheCatalogue) {
  for (const LearnableField& lf : LearnableFields()) {
    bool found = false;
    for (const abi::NamedIoctl& n : abi::AllIoctls()) {
      if (n.ioctl->name != lf.ioctl) continue;
      for (const abi::Field& f : n.ioctl->fields) found |= f.name == lf.field;
    }
    EXPECT_TRUE(found) << lf.ioctl << "." << lf.field;
  }
}

}  // namespace
}  // namespace nvsentry::proxy
