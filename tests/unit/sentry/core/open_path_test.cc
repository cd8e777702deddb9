#include "sentry/core/open_path.h"

#include "gtest/gtest.h"

namespace nvsentry::sentry {
namespace {

TEST(NormalizePath, AbsoluteAndRelative) {
  EXPECT_EQ(NormalizePath("/ignored", "/dev/nvhost-ctrl").path, "/dev/nvhost-ctrl");
  EXPECT_EQ(NormalizePath("/dev", "nvhost-ctrl").path, "/dev/nvhost-ctrl");
  EXPECT_EQ(NormalizePath("/home/u", "../../dev/./nvhost-ctrl").path, "/dev/nvhost-ctrl");
  EXPECT_EQ(NormalizePath("/", "//dev///nvmap").path, "/dev/nvmap");
  EXPECT_EQ(NormalizePath("/", "/../../dev/nvmap").path, "/dev/nvmap") << ".. stops at /";
  EXPECT_EQ(NormalizePath("/tmp", ".").path, "/tmp");
  EXPECT_EQ(NormalizePath("/", "/").path, "/");
}

TEST(NormalizePath, TrailingSlashIsReported) {
  EXPECT_TRUE(NormalizePath("/", "/dev/nvhost-ctrl/").trailing_slash);
  EXPECT_EQ(NormalizePath("/", "/dev/nvhost-ctrl/").path, "/dev/nvhost-ctrl");
  EXPECT_FALSE(NormalizePath("/", "/dev/nvhost-ctrl").trailing_slash);
}

TEST(MayNameNvidiaNode, CheapFilter) {
  EXPECT_TRUE(MayNameNvidiaNode("nvhost-ctrl"));
  EXPECT_FALSE(MayNameNvidiaNode("/usr/lib/libc.so.6"));
  EXPECT_FALSE(MayNameNvidiaNode("/etc/passwd"));
}

}  // namespace
}  // namespace nvsentry::sentry
