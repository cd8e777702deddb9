// Each simulated device's handler table against the catalogue: every catalogued code of the
// device that reaches a backend (not one the ABI answers with a fixed NotSupported) has a handler
// or is listed as left unimplemented, and every bound code is catalogued (before: the codes
// were listed twice in each device and only a run-time sweep noticed a missing one).
#include <algorithm>
#include <string>

#include "abi/catalogue.h"
#include "gtest/gtest.h"
#include "hostshim/ioctl_table.h"
#include "hostshim/sim/memory/as_device.h"
#include "hostshim/sim/memory/nvmap_device.h"

namespace nvsentry::hostshim::sim {
namespace {

bool Contains(std::span<const uint32_t> codes, uint32_t code) {
  return std::find(codes.begin(), codes.end(), code) != codes.end();
}

void ExpectTableMatchesCatalogue(abi::DeviceId id, const IoctlTableInfo& table) {
  const abi::DeviceDesc& dev = abi::Device(id);
  for (const abi::IoctlDesc& d : dev.ioctls) {
    SCOPED_TRACE(std::string(d.name));
    const bool reaches_backend = (d.flags & abi::kFixedAnswer) == 0;
    if (reaches_backend) {
      EXPECT_TRUE(Contains(table.handled, d.code) || Contains(table.unimplemented, d.code))
          << "a catalogued code with no handler and not listed as left unimplemented";
    } else {
      EXPECT_FALSE(Contains(table.handled, d.code)) << "a handler the engine never calls";
    }
    EXPECT_FALSE(Contains(table.handled, d.code) && Contains(table.unimplemented, d.code));
  }
  for (uint32_t code : table.handled) {
    EXPECT_TRUE(std::any_of(dev.ioctls.begin(), dev.ioctls.end(),
                            [&](const abi::IoctlDesc& d) { return d.code == code; }))
        << "0x" << std::hex << code << " is bound but not catalogued for " << dev.path;
  }
}

TEST(IoctlTables, NvmapMatchesTheCatalogue) {
  ExpectTableMatchesCatalogue(abi::DeviceId::kNvmap, NvmapDevice::Table());
}

TEST(IoctlTables, AddressSpaceMatchesTheCatalogue) {
  ExpectTableMatchesCatalogue(abi::DeviceId::kNvhostAsGpu, AsDevice::Table());
}

}  // namespace
}  // namespace nvsentry::hostshim::sim
