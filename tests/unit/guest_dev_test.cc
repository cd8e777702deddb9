// The guest's /dev as the sentry makes it (sentry/guest_dev.h), drafted without the NVIDIA majors
// and finished with them: a node of a major the finish is given is left out, whether the /dev is
// an overlay or a copy, and whatever thread drafted it.
#include "sentry/guest_dev.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <thread>

#include "gtest/gtest.h"

namespace nvsentry::sentry {
namespace {

const std::vector<std::string> kFiles = {"nvhost-ctrl", "nvmap"};

// Whether `name` is in the made /dev, and its type.
bool Has(const GuestDev& dev, const char* name, mode_t type) {
  struct stat st;
  return fstatat(dev.root.get(), name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
         (st.st_mode & S_IFMT) == type;
}

class GuestDevTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "makes mounts: needs root";
    struct stat st;
    ASSERT_EQ(stat("/dev/null", &st), 0);
    ASSERT_EQ(major(st.st_rdev), 1u);  // mem's major: null, zero, full, random...
  }
  bool copy() const { return GetParam(); }
};

TEST_P(GuestDevTest, NodesOfTheGivenMajorsAreLeftOut) {
  absl::StatusOr<GuestDev> dev = MakeGuestDev(kFiles, {1}, 0, 0, copy());
  ASSERT_TRUE(dev.ok()) << dev.status();
  EXPECT_EQ(dev->overlay, !copy());
  EXPECT_FALSE(Has(*dev, "null", S_IFCHR));
  EXPECT_FALSE(Has(*dev, "zero", S_IFCHR));
  EXPECT_TRUE(Has(*dev, "tty", S_IFCHR));  // major 5
  // The device files' mount points are there, whatever the majors.
  EXPECT_TRUE(Has(*dev, "nvhost-ctrl", S_IFREG));
  EXPECT_TRUE(Has(*dev, "nvmap", S_IFREG));
}

TEST_P(GuestDevTest, WithoutMajorsTheHostsNodesAreThere) {
  absl::StatusOr<GuestDev> dev = MakeGuestDev(kFiles, {}, 0, 0, copy());
  ASSERT_TRUE(dev.ok()) << dev.status();
  EXPECT_TRUE(Has(*dev, "null", S_IFCHR));
  EXPECT_TRUE(Has(*dev, "tty", S_IFCHR));
  // Directories are bound by init, not copied: their names are in the binds.
  EXPECT_NE(std::find(dev->binds.begin(), dev->binds.end(), "pts"), dev->binds.end());
}

// As the launcher does it: the draft on one thread, the layer and the finish on another.
TEST_P(GuestDevTest, DraftedOnAnotherThread) {
  absl::StatusOr<GuestDevDraft> draft = absl::UnknownError("not drafted");
  std::thread([&] { draft = DraftGuestDev(kFiles); }).join();
  ASSERT_TRUE(draft.ok()) << draft.status();
  hostshim::UniqueFd layer;
  if (!copy()) {
    absl::StatusOr<hostshim::UniqueFd> made = MakeGuestDevLayer(kFiles);
    ASSERT_TRUE(made.ok()) << made.status();
    layer = *std::move(made);
  }
  absl::StatusOr<GuestDev> dev =
      FinishGuestDev(*std::move(draft), std::move(layer), kFiles, {1}, getuid(), getgid());
  ASSERT_TRUE(dev.ok()) << dev.status();
  EXPECT_FALSE(Has(*dev, "null", S_IFCHR));
  EXPECT_TRUE(Has(*dev, "tty", S_IFCHR));
  EXPECT_TRUE(Has(*dev, "nvmap", S_IFREG));
}

INSTANTIATE_TEST_SUITE_P(OverlayOrCopy, GuestDevTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& i) {
                           return i.param ? "Copy" : "Overlay";
                         });

}  // namespace
}  // namespace nvsentry::sentry
