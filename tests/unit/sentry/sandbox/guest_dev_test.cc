// The guest's /dev as the sentry drafts and finishes it (sentry/sandbox/guest_dev.h): what the
// device files' filesystem shows of the host's /dev. A node of a major the finish is given is left
// out, the others keep the host's type, mode, owner and device numbers, links their targets, and
// directories become mount points for init's binds, whatever thread drafted it.
#include "sentry/sandbox/guest_dev.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <climits>
#include <thread>

#include "gtest/gtest.h"

namespace nvsentry::sentry {
namespace {

const std::vector<std::string> kFiles = {"nvhost-ctrl", "nvmap"};

const FlatEntry* Find(const GuestDev& dev, const std::string& name) {
  for (const FlatEntry& e : dev.entries)
    if (e.name == name) return &e;
  return nullptr;
}

class GuestDevTest : public ::testing::Test {
 protected:
  void SetUp() override {
    struct stat st;
    ASSERT_EQ(stat("/dev/null", &st), 0);
    ASSERT_EQ(major(st.st_rdev), 1u);  // mem's major: null, zero, full, random...
  }
};

TEST_F(GuestDevTest, NodesOfTheGivenMajorsAreLeftOut) {
  absl::StatusOr<GuestDev> dev = MakeGuestDev(kFiles, {1});
  ASSERT_TRUE(dev.ok()) << dev.status();
  EXPECT_EQ(Find(*dev, "null"), nullptr);
  EXPECT_EQ(Find(*dev, "zero"), nullptr);
  const FlatEntry* tty = Find(*dev, "tty");  // major 5
  ASSERT_NE(tty, nullptr);
  EXPECT_TRUE(S_ISCHR(tty->st.st_mode));
}

TEST_F(GuestDevTest, NodesAreTheHostsAsTheyAre) {
  absl::StatusOr<GuestDev> dev = MakeGuestDev(kFiles, {});
  ASSERT_TRUE(dev.ok()) << dev.status();
  for (const char* name : {"null", "tty", "zero"}) {
    struct stat host;
    ASSERT_EQ(lstat((std::string("/dev/") + name).c_str(), &host), 0) << name;
    const FlatEntry* e = Find(*dev, name);
    ASSERT_NE(e, nullptr) << name;
    EXPECT_EQ(e->st.st_mode, host.st_mode) << name;
    EXPECT_EQ(e->st.st_rdev, host.st_rdev) << name;
    EXPECT_EQ(e->st.st_uid, host.st_uid) << name;
    EXPECT_EQ(e->st.st_gid, host.st_gid) << name;
    EXPECT_EQ(e->st.st_mtim.tv_sec, host.st_mtim.tv_sec) << name;
  }
}

TEST_F(GuestDevTest, LinksKeepTheirTargets) {
  char target[PATH_MAX];
  const ssize_t n = readlink("/dev/fd", target, sizeof target);
  if (n <= 0) GTEST_SKIP() << "the host's /dev/fd is no link";
  absl::StatusOr<GuestDev> dev = MakeGuestDev(kFiles, {});
  ASSERT_TRUE(dev.ok()) << dev.status();
  const FlatEntry* fd = Find(*dev, "fd");
  ASSERT_NE(fd, nullptr);
  EXPECT_TRUE(S_ISLNK(fd->st.st_mode));
  EXPECT_EQ(fd->link, std::string(target, static_cast<size_t>(n)));
}

// The host's directories are bound on theirs; /dev/pts is the guest's own (a devpts instance
// init mounts): a mount point, not a bind.
TEST_F(GuestDevTest, DirectoriesAreMountPointsForInitsBinds) {
  absl::StatusOr<GuestDev> dev = MakeGuestDev(kFiles, {});
  ASSERT_TRUE(dev.ok()) << dev.status();
  EXPECT_EQ(std::find(dev->binds.begin(), dev->binds.end(), "pts"), dev->binds.end());
  size_t mount_points = 0;
  for (const FlatEntry& e : dev->entries) mount_points += e.mount_point ? 1 : 0;
  EXPECT_EQ(mount_points, dev->binds.size() + 1) << "the binds' and /dev/pts";
  for (const std::string& name : dev->binds) {
    const FlatEntry* e = Find(*dev, name);
    ASSERT_NE(e, nullptr) << name;
    EXPECT_TRUE(e->mount_point) << name;
  }
  struct stat shm;
  if (stat("/dev/shm", &shm) == 0 && S_ISDIR(shm.st_mode)) {
    EXPECT_NE(std::find(dev->binds.begin(), dev->binds.end(), "shm"), dev->binds.end());
  }
  const FlatEntry* pts = Find(*dev, "pts");
  ASSERT_NE(pts, nullptr);
  EXPECT_TRUE(S_ISDIR(pts->st.st_mode));
  EXPECT_TRUE(pts->mount_point);
  // The device files are the filesystem's own, not entries of the host's.
  EXPECT_EQ(Find(*dev, "nvmap"), nullptr);
}

// As the launcher does it: the draft on one thread, the finish on another.
TEST_F(GuestDevTest, DraftedOnAnotherThread) {
  absl::StatusOr<GuestDevDraft> draft = absl::UnknownError("not drafted");
  std::thread([&] { draft = DraftGuestDev(kFiles); }).join();
  ASSERT_TRUE(draft.ok()) << draft.status();
  GuestDev dev = FinishGuestDev(*std::move(draft), {1});
  EXPECT_EQ(Find(dev, "null"), nullptr);
  EXPECT_NE(Find(dev, "tty"), nullptr);
}

}  // namespace
}  // namespace nvsentry::sentry
