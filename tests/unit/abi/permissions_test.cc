// abi::Permissions: each question reads the bit the ABI gives it, and the open check follows the
// catalogue's bit for every device.
#include "abi/permissions.h"

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

}  // namespace
}  // namespace nvsentry::abi
