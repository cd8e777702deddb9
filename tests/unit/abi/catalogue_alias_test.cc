// Codes public clients send with other direction bits than Switchbrew (docs/guest-abi.md, "Where
// nvsentry follows real clients over Switchbrew"): the catalogue lists each as an alias of the
// Switchbrew's entry, so it selects the same layout (read and written as Switchbrew's direction
// says), while every other direction variant stays unknown (no silent widening).
#include "abi/catalogue.h"
#include "abi/ioctl_code.h"
#include "gtest/gtest.h"

namespace nvsentry::abi {
namespace {

const DeviceDesc& Dev(DeviceId id) { return Device(id); }

TEST(CatalogueAlias, LibnxDirectionVariantsSelectSwitchbrewsEntry) {
  const IoctlDesc* zbc = FindIoctl(Dev(DeviceId::kNvhostCtrlGpu), 0x402C4703);
  ASSERT_NE(zbc, nullptr);
  EXPECT_EQ(FindIoctl(Dev(DeviceId::kNvhostCtrlGpu), 0x802C4703), zbc);  // libnx _NV_IOR
  EXPECT_EQ(zbc->dir(), Dir::kIn) << "served as Switchbrew's direction";
  const IoctlDesc* incr = FindIoctl(Dev(DeviceId::kNvhostCtrl), 0x40040015);
  ASSERT_NE(incr, nullptr);
  EXPECT_EQ(FindIoctl(Dev(DeviceId::kNvhostCtrl), 0xC0040015), incr);  // libnx _NV_IOWR
  EXPECT_EQ(incr->dir(), Dir::kIn);
}

TEST(CatalogueAlias, OtherDirectionVariantsStayUnknown) {
  for (uint32_t code : {0x002C4703u, 0xC02C4703u})
    EXPECT_EQ(FindIoctl(Dev(DeviceId::kNvhostCtrlGpu), code), nullptr) << std::hex << code;
  for (uint32_t code : {0x00040015u, 0x80040015u})
    EXPECT_EQ(FindIoctl(Dev(DeviceId::kNvhostCtrl), code), nullptr) << std::hex << code;
  // The alias belongs to its device only: /dev/nvhost-gpu shares magic 0x00 with nvhost-ctrl.
  EXPECT_EQ(FindIoctl(Dev(DeviceId::kNvhostGpu), 0xC0040015), nullptr);
}

// Every alias differs from its entry's code in the direction bits only, and no alias is a code
// another entry of the same device answers on a firmware both have.
TEST(CatalogueAlias, AliasesAreDirectionVariantsThatCollideWithNothing) {
  int aliases = 0;
  for (const DeviceDesc& dev : Devices()) {
    for (const IoctlDesc& d : dev.ioctls) {
      for (const CodeAlias& a : d.aliases) {
        ++aliases;
        SCOPED_TRACE(std::string(dev.path) + " " + std::string(d.name));
        EXPECT_FALSE(d.variable());
        EXPECT_NE(a.code, d.code);
        EXPECT_EQ(a.code & ~kIocDirMask, d.code & ~kIocDirMask);
        EXPECT_FALSE(a.client.empty());
        for (const IoctlDesc& other : dev.ioctls)
          if (&other != &d) EXPECT_FALSE(other.Matches(a.code) && other.fw.Overlaps(d.fw));
      }
    }
  }
  EXPECT_EQ(aliases, 2);
}

}  // namespace
}  // namespace nvsentry::abi
