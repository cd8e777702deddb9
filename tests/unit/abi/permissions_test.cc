// abi::Permissions: each question reads the bit the ABI gives it, and the open check follows the
// catalogue's bit for every device.
#include "abi/permissions.h"

#include <string_view>
#include <vector>

#include "abi/device_events.h"
#include "gtest/gtest.h"

namespace nvsentry::abi {
namespace {

TEST(Permissions, EachQuestionReadsItsBit) {
  EXPECT_TRUE(Permissions(1u << 9).MayImportAnyObject());
  EXPECT_TRUE(Permissions(1u << 12).MayImportExportedObject());
  EXPECT_TRUE(Permissions(1u << 14).MayExportForAruid());
  EXPECT_TRUE(Permissions(1u << 10).MaySetUncheckedAruid());
  EXPECT_TRUE(Permissions(1u << 11).MaySetMemoryMargin());
  EXPECT_TRUE(Permissions(1u << 13).HighGpuVa());
  EXPECT_TRUE(Permissions(1u << 15).FullVaRanges());
  const Permissions none;
  EXPECT_FALSE(none.MayImportAnyObject() || none.MayImportExportedObject() ||
               none.MayExportForAruid() || none.MaySetUncheckedAruid() ||
               none.MaySetMemoryMargin() || none.HighGpuVa() || none.FullVaRanges());
  const Permissions all(~0u & ~(1u << 9));
  EXPECT_FALSE(all.MayImportAnyObject()) << "only bit 9";
}

TEST(Permissions, OpenFollowsTheCataloguesBit) {
  for (const DeviceDesc& dev : Devices()) {
    SCOPED_TRACE(std::string(dev.path));
    EXPECT_TRUE(Permissions(~0u).MayOpen(dev));
    if (dev.permission_bit == kNoPermissionBit) {
      EXPECT_TRUE(Permissions().MayOpen(dev));
    } else {
      EXPECT_FALSE(Permissions().MayOpen(dev));
      EXPECT_TRUE(Permissions(1u << dev.permission_bit).MayOpen(dev));
      EXPECT_FALSE(Permissions(~(1u << dev.permission_bit)).MayOpen(dev));
    }
  }
}

TEST(DeviceEvents, IdsPerDevice) {
  EXPECT_EQ(EventIdVerdict(Device(DeviceId::kNvhostGpu), 3), NvError::kSuccess);
  EXPECT_EQ(EventIdVerdict(Device(DeviceId::kNvhostGpu), 4), NvError::kBadParameter);
  EXPECT_EQ(EventIdVerdict(Device(DeviceId::kNvhostCtrl), 0x1000003F), NvError::kSuccess);
  EXPECT_EQ(EventIdVerdict(Device(DeviceId::kNvhostCtrl), 0x10000040), NvError::kBadParameter);
  EXPECT_EQ(EventIdVerdict(Device(DeviceId::kNvmap), 1), NvError::kNotSupported);
  EXPECT_TRUE(SingleEvent(Device(DeviceId::kNvhostDbgGpu)));
  EXPECT_FALSE(SingleEvent(Device(DeviceId::kNvhostGpu)));
}

// The bits a refused call may lack beyond its device's (Switchbrew's NvDrvPermission table).
TEST(Permissions, IoctlPermissionBits) {
  const DeviceDesc& nvmap = Device(DeviceId::kNvmap);
  const DeviceDesc& nvdrv = Device(DeviceId::kNvdrv);
  auto bit = [](const DeviceDesc& dev, uint32_t code) {
    const IoctlDesc* d = FindIoctl(dev, code);
    return d == nullptr ? -2 : IoctlPermissionBit(dev, *d);
  };
  EXPECT_EQ(bit(nvmap, 0xC0080103), 9);                 // NVMAP_IOC_FROM_ID
  EXPECT_EQ(bit(nvmap, 0x40100112), 14);                // NVMAP_IOC_EXPORT_FOR_ARUID
  EXPECT_EQ(bit(nvmap, 0x40100114), 14);                // NVMAP_IOC_REMOVE_EXPORT_FOR_ARUID
  EXPECT_EQ(bit(nvmap, 0xC0080101), kNoPermissionBit);  // NVMAP_IOC_CREATE
  EXPECT_EQ(bit(nvdrv, 0xC0106E07), 10);                // SetAruidWithoutCheck
  EXPECT_EQ(bit(nvdrv, 0xC0106E0D), 11);                // SetGraphicsFirmwareMemoryMarginEnabled
  EXPECT_EQ(bit(nvdrv, 0xC0106E08), kNoPermissionBit);  // SetAruid
}

TEST(Permissions, AMissingBitSaysWhatGrantsIt) {
  const MissingPermission display{"nvdrv", 0xA83B, Fw(20, 0, 0), 8, ""};
  EXPECT_EQ(display.BitName(), "Display");
  EXPECT_EQ(display.GrantedBy(), (std::vector<std::string_view>{"nvdrv:s", "nvdrv:t"}));
  // nvdrv:t (the union) is named: it holds nvdrv's other bits too, nvdrv:s does not.
  EXPECT_EQ(display.Hint(),
            "service nvdrv (mask 0xA83B) lacks permission bit 8 (Display), which nvdrv:s and "
            "nvdrv:t hold: run with --service=nvdrv:t, or a policy file (--policy) whose [guest] "
            "has permission_mask = 0xA93B");
  const MissingPermission gpu{"nvdrv:s", 0x439E, Fw(20, 0, 0), 0, "p.toml"};
  EXPECT_EQ(gpu.Hint(),
            "service nvdrv:s (mask 0x439E) lacks permission bit 0 (Gpu), which nvdrv, nvdrv:a and "
            "nvdrv:t hold: in p.toml, [guest] service = \"nvdrv:t\" or permission_mask = 0x439F");
  // No service holds TSEC.
  const MissingPermission tsec{"nvdrv", 0xA83B, Fw(20, 0, 0), 6, ""};
  EXPECT_TRUE(tsec.GrantedBy().empty());
  EXPECT_EQ(tsec.Hint(),
            "service nvdrv (mask 0xA83B) lacks permission bit 6 (TSEC), which no service holds on "
            "firmware 20.0.0: run with a policy file (--policy) whose [guest] has "
            "permission_mask = 0xA87B");
}

}  // namespace
}  // namespace nvsentry::abi
