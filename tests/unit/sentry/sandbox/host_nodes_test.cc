// NvidiaCharMajorsIn: which drivers' majors the guest's /dev leaves out, from /proc/devices.
#include "sentry/sandbox/host_nodes.h"

#include <fstream>
#include <iterator>
#include <set>
#include <string>

#include "gtest/gtest.h"

namespace nvsentry::sentry {
namespace {

// The layout of /proc/devices (fs/proc/devices.c): a header per kind, then "%3d %s" per driver.
constexpr char kJetsonLike[] =
    "Character devices:\n"
    "  1 mem\n"
    "  4 tty\n"
    "195 nvidia\n"
    "234 nvhost-ctrl\n"
    "235 nvmap\n"
    "240 nvgpu-gm20b\n"
    "499 host1x-fence\n"
    "510 tegra-crypto\n"
    "511 nvme-generic\n"
    "\n"
    "Block devices:\n"
    "  7 loop\n"
    "259 nvhost-not-a-char\n";

TEST(NvidiaCharMajors, TheNvidiaAndTegraCharacterDriversOnly) {
  EXPECT_EQ(NvidiaCharMajorsIn(kJetsonLike), (std::set<unsigned>{195, 234, 235, 240, 499, 510}));
}

TEST(NvidiaCharMajors, NothingFromAnOrdinaryHostOrBrokenLines) {
  EXPECT_TRUE(NvidiaCharMajorsIn("Character devices:\n  1 mem\n 10 misc\n").empty());
  EXPECT_TRUE(NvidiaCharMajorsIn("").empty());
  // No header yet, a major that is not a number, a line with no name.
  EXPECT_TRUE(NvidiaCharMajorsIn("195 nvidia\nCharacter devices:\nx nvmap\n 12\n").empty());
}

TEST(NvidiaCharMajors, ReadsThisHostsWholeFile) {
  // The file read another way (a stream): the function's own reads must give the same set.
  std::ifstream in("/proc/devices");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_NE(text.find("Character devices:"), std::string::npos) << text;
  EXPECT_EQ(NvidiaCharMajors(), NvidiaCharMajorsIn(text));
}

}  // namespace
}  // namespace nvsentry::sentry
