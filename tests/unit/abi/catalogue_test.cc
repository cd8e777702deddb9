// The catalogue against Switchbrew, typed in here from Switchbrew's table (not from abi/).
#include "abi/catalogue.h"

#include <set>

#include "abi/devices/nvhost_ctrl.h"
#include "abi/services.h"
#include "gtest/gtest.h"

namespace nvsentry::abi {
namespace {

struct WikiRow {
  uint32_t code;
  const char* direction;
  uint32_t size;
  const char* name;
};

// /dev/nvhost-ctrl, as Switchbrew lists it.
constexpr WikiRow kSwitchbrewCtrl[] = {
    {0xC0080014, "inout", 8, "NVHOST_IOCTL_CTRL_SYNCPT_READ"},
    {0x40040015, "in", 4, "NVHOST_IOCTL_CTRL_SYNCPT_INCR"},
    {0xC00C0016, "inout", 12, "NVHOST_IOCTL_CTRL_SYNCPT_WAIT"},
    {0x40080017, "in", 8, "NVHOST_IOCTL_CTRL_MODULE_MUTEX"},
    {0xC0180018, "inout", 24, "NVHOST_IOCTL_CTRL_MODULE_REGRDWR"},
    {0xC0100019, "inout", 16, "NVHOST_IOCTL_CTRL_SYNCPT_WAITEX"},
    {0xC008001A, "inout", 8, "NVHOST_IOCTL_CTRL_SYNCPT_READ_MAX"},
    {0xC183001B, "inout", 387, "NVHOST_IOCTL_CTRL_GET_CONFIG"},
    {0xC004001C, "inout", 4, "NVHOST_IOCTL_CTRL_SYNCPT_CLEAR_EVENT_WAIT"},
    {0xC010001D, "inout", 16, "NVHOST_IOCTL_CTRL_SYNCPT_WAIT_EVENT"},
    {0xC010001E, "inout", 16, "NVHOST_IOCTL_CTRL_SYNCPT_WAIT_EVENT_EX"},
    {0xC004001F, "inout", 4, "NVHOST_IOCTL_CTRL_SYNCPT_ALLOC_EVENT"},
    {0xC0040020, "inout", 4, "NVHOST_IOCTL_CTRL_SYNCPT_FREE_EVENT"},
    {0x40080021, "in", 8, "NVHOST_IOCTL_CTRL_SYNCPT_FREE_EVENT_BATCH"},
    {0xC0040022, "inout", 4, "NVHOST_IOCTL_CTRL_SYNCPT_GET_SHIFT"},
};

TEST(Catalogue, NvhostCtrlMatchesSwitchbrew) {
  const DeviceDesc* dev = FindDeviceByPath("/dev/nvhost-ctrl");
  ASSERT_NE(dev, nullptr);
  EXPECT_EQ(dev->ioctls.size(), std::size(kSwitchbrewCtrl));
  for (const WikiRow& row : kSwitchbrewCtrl) {
    const IoctlDesc* d = FindIoctl(*dev, row.code);
    ASSERT_NE(d, nullptr) << row.name;
    EXPECT_EQ(d->name, row.name);
    EXPECT_EQ(d->size(), row.size) << row.name;
    EXPECT_STREQ(DirName(d->dir()), row.direction) << row.name;
    EXPECT_EQ(IocMagic(row.code), 0u);
  }
}

// An ioctl named as another of its device plus a variant's suffix (_EX, _EX2, 2, _RETRY) does
// the same under another number, so the policy's rule for the other must govern it too: it says
// which it follows (IoctlDesc::follows), and that one exists on the device. A variant added
// without the mark would let a guest do under its number what a rule forbids.
TEST(Catalogue, VariantsSayWhichIoctlTheyFollow) {
  for (const DeviceDesc& dev : Devices()) {
    std::set<std::string_view> names;
    for (const IoctlDesc& d : dev.ioctls) names.insert(d.name);
    for (const IoctlDesc& d : dev.ioctls) {
      if (!d.follows.empty()) {
        EXPECT_TRUE(names.contains(d.follows)) << d.name << " follows " << d.follows << " on "
                                               << dev.path << ", which has no such ioctl";
        continue;
      }
      for (std::string_view suffix : {"_EX", "_EX2", "2", "_RETRY", "2_RETRY"}) {
        if (!d.name.ends_with(suffix)) continue;
        const std::string_view base = d.name.substr(0, d.name.size() - suffix.size());
        EXPECT_FALSE(names.contains(base)) << d.name << " on " << dev.path << " follows nothing, "
                                           << "but " << base << " is there";
      }
    }
  }
}

TEST(Catalogue, WaitsAreMarkedAsBlocking) {
  const DeviceDesc& dev = Device(DeviceId::kNvhostCtrl);
  for (const IoctlDesc& d : dev.ioctls) {
    bool is_wait = std::string_view(d.name).find("_WAIT") != std::string_view::npos &&
                   std::string_view(d.name).find("CLEAR_EVENT_WAIT") == std::string_view::npos;
    EXPECT_EQ(d.may_block(), is_wait) << d.name;
  }
}

TEST(Catalogue, EveryDeviceOfSeed000IsPresentOnce) {
  const char* wiki_devices[] = {
      "/dev/nvhost-ctrl",    "/dev/nvmap",           "/dev/nvdisp-ctrl",     "/dev/nvdisp-disp0",
      "/dev/nvdisp-disp1",   "/dev/nvcec-ctrl",      "/dev/nvhdcp_up-ctrl",  "/dev/nvdcutil-disp0",
      "/dev/nvdcutil-disp1", "/dev/nvsched-ctrl",    "/dev/nverpt-ctrl",     "/dev/nvhost-as-gpu",
      "/dev/nvhost-dbg-gpu", "/dev/nvhost-prof-gpu", "/dev/nvhost-ctrl-gpu", "/dev/nvhost-gpu",
      "/dev/nvhost-msenc",   "/dev/nvhost-nvdec",    "/dev/nvhost-nvjpg",    "/dev/nvhost-vic",
      "/dev/nvhost-display", "/dev/nvhost-tsec"};
  // ... plus the service endpoint, which is nvsentry's own node.
  EXPECT_EQ(Devices().size(), std::size(wiki_devices) + 1);
  ASSERT_NE(FindDeviceByPath("/dev/nvdrv"), nullptr);
  EXPECT_EQ(FindDeviceByPath("/dev/nvdrv")->id, DeviceId::kNvdrv);
  for (const char* p : wiki_devices) {
    const DeviceDesc* d = FindDeviceByPath(p);
    ASSERT_NE(d, nullptr) << p;
    EXPECT_EQ(&Device(d->id), d) << p;
  }
}

TEST(Catalogue, ServiceMasksFollowSwitchbrew) {
  EXPECT_EQ(ServiceMask("nvdrv", Fw(1, 0, 0)), 0x2Bu);
  EXPECT_EQ(ServiceMask("nvdrv", Fw(2, 3, 0)), 0x2Bu);
  EXPECT_EQ(ServiceMask("nvdrv", Fw(3, 0, 0)), 0xA82Bu);
  EXPECT_EQ(ServiceMask("nvdrv", Fw(10, 2, 0)), 0xA82Bu);
  EXPECT_EQ(ServiceMask("nvdrv", Fw(11, 0, 0)), 0xA83Bu);
  EXPECT_EQ(ServiceMask("nvdrv:a", Fw(2, 0, 0)), 0xA9u);
  EXPECT_EQ(ServiceMask("nvdrv:a", Fw(3, 0, 0)), 0x10A9u);
  EXPECT_EQ(ServiceMask("nvdrv:s", Fw(1, 0, 0)), 0x39Eu);
  EXPECT_EQ(ServiceMask("nvdrv:s", Fw(9, 0, 0)), 0x439Eu);
  EXPECT_EQ(ServiceMask("nvdrv:t", Fw(11, 0, 0)), 0xA83Bu | 0x10A9u | 0x439Eu);
  EXPECT_FALSE(ServiceMask("nvdrv:x", Fw(11, 0, 0)).has_value());
}

TEST(Catalogue, FirmwareVersionsParseAndPrint) {
  EXPECT_EQ(ParseFirmware("11.0.0"), Fw(11, 0, 0));
  EXPECT_EQ(ParseFirmware("3.0"), Fw(3, 0, 0));
  EXPECT_EQ(ParseFirmware("7.0.1"), Fw(7, 0, 1));
  EXPECT_FALSE(ParseFirmware("7..1").has_value());
  EXPECT_FALSE(ParseFirmware("256.0.0").has_value());
  EXPECT_FALSE(ParseFirmware("1.2.3.4").has_value());
  EXPECT_EQ(FirmwareString(Fw(6, 1, 0)), "6.1.0");
  EXPECT_EQ(FwRangeString(FwRange{0, Fw(3, 0, 0)}), "[0.0.0-3.0.0)");
  EXPECT_EQ(FwRangeString(FwRange{Fw(11, 0, 0)}), "[11.0.0+]");
  EXPECT_TRUE((FwRange{0, Fw(3, 0, 0)}).Contains(Fw(2, 3, 0)));
  EXPECT_FALSE((FwRange{0, Fw(3, 0, 0)}).Contains(Fw(3, 0, 0)));
}

TEST(Catalogue, PermissionBitsFollowSwitchbrew) {
  // NvDrvPermission: 0 Gpu, 1 GpuDebug, 2 GpuSchedule, 3 VIC, 4 VideoEncoder, 5 VideoDecoder,
  // 6 TSEC, 7 JPEG, 8 Display.
  EXPECT_EQ(FindDeviceByPath("/dev/nvhost-gpu")->permission_bit, 0);
  EXPECT_EQ(FindDeviceByPath("/dev/nvhost-as-gpu")->permission_bit, 0);
  EXPECT_EQ(FindDeviceByPath("/dev/nvhost-prof-gpu")->permission_bit, 1);
  EXPECT_EQ(FindDeviceByPath("/dev/nvsched-ctrl")->permission_bit, 2);
  EXPECT_EQ(FindDeviceByPath("/dev/nvhost-vic")->permission_bit, 3);
  EXPECT_EQ(FindDeviceByPath("/dev/nvhost-msenc")->permission_bit, 4);
  EXPECT_EQ(FindDeviceByPath("/dev/nvhost-nvdec")->permission_bit, 5);
  EXPECT_EQ(FindDeviceByPath("/dev/nvhost-tsec")->permission_bit, 6);
  EXPECT_EQ(FindDeviceByPath("/dev/nvhost-nvjpg")->permission_bit, 7);
  EXPECT_EQ(FindDeviceByPath("/dev/nvdcutil-disp1")->permission_bit, 8);
  EXPECT_EQ(FindDeviceByPath("/dev/nvhost-ctrl")->permission_bit, kNoPermissionBit);
}

TEST(Catalogue, TrappedMagicsCoverEveryCode) {
  auto magics = AllMagics();
  std::set<uint8_t> set(magics.begin(), magics.end());
  for (const DeviceDesc& d : Devices())
    for (const IoctlDesc& i : d.ioctls) EXPECT_TRUE(set.count(IocMagic(i.code))) << i.name;
  EXPECT_FALSE(set.count(0x54)) << "terminal ioctls ('T') must stay untrapped";
}

TEST(Catalogue, NvidiaNodeNamespace) {
  EXPECT_TRUE(LooksLikeNvidiaNode("/dev/nvhost-ctrl"));
  EXPECT_TRUE(LooksLikeNvidiaNode("/dev/nvhost-anything"));
  EXPECT_TRUE(LooksLikeNvidiaNode("/dev/nvidia0"));
  EXPECT_TRUE(LooksLikeNvidiaNode("/dev/nvgpu/igpu0/ctrl"));
  EXPECT_TRUE(LooksLikeNvidiaNode("/dev/nvmap"));
  EXPECT_FALSE(LooksLikeNvidiaNode("/dev/nvme0n1"));
  EXPECT_FALSE(LooksLikeNvidiaNode("/dev/nvram"));
  EXPECT_FALSE(LooksLikeNvidiaNode("/tmp/nvhost-ctrl"));
  EXPECT_FALSE(LooksLikeNvidiaNode("/dev/null"));
}

TEST(IoctlCode, DecodesTheLinuxLayout) {
  constexpr uint32_t c = 0xC183001B;
  EXPECT_EQ(IocNr(c), 0x1Bu);
  EXPECT_EQ(IocMagic(c), 0u);
  EXPECT_EQ(IocSize(c), 0x183u);
  EXPECT_EQ(IocDir(c), Dir::kInOut);
  EXPECT_EQ(IocCode(Dir::kIn, 0, 0x15, 4), 0x40040015u);
  EXPECT_EQ(IocCode(Dir::kOut, 0x47, 1, 4), 0x80044701u);
}

}  // namespace
}  // namespace nvsentry::abi
