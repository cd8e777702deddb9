// The device nodes as files of the sentry's filesystem (--devices=files, sentry/devfs/device_fs.h):
// opens that never leave the kernel, and paths that reach a device the ordinary way.
#include <gtest/gtest.h>

#include <cerrno>

#include "tests/integration/run_util.h"

namespace nvsentry::testing {
namespace {

std::string E(int err) { return std::to_string(err); }

// A signal that arrives during an open makes the open fail with EINTR only if the open waits for
// the sentry; natively (and with device files) opens of ordinary files never do.
TEST(DeviceFiles, OpensAreNeverInterruptedBySignals) {
  for (const char* path : {"/etc/passwd", "/dev/nvhost-ctrl"}) {
    RunResult r =
        RunSandboxed({"--devices=files"}, {OPEN_GUEST_BIN, "eintr", path, "100000"}, {}, 120000);
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    auto kv = ParseKeyValues(r.out);
    EXPECT_EQ(kv["eintr"], "0") << path;
    EXPECT_EQ(kv["errors"], "0") << path;
    EXPECT_GT(std::stol(kv["signals"]), 1000) << "the timer must really interrupt: " << r.out;
  }
}

// What the test above guards against: with trapped opens the same loop sees EINTR.
TEST(DeviceFiles, TrappedOpensCanBeInterrupted) {
  RunResult r = RunSandboxed({"--devices=trap"}, {OPEN_GUEST_BIN, "eintr", "/etc/passwd", "100000"},
                             {}, 120000);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto kv = ParseKeyValues(r.out);
  EXPECT_GT(std::stol(kv["eintr"]), 0) << r.out;
  EXPECT_EQ(kv["errors"], "0") << r.out;
}

TEST(DeviceFiles, PathsReachTheDeviceTheOrdinaryWay) {
  RunResult r = RunSandboxed({"--devices=files"}, {OPEN_GUEST_BIN, "paths"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto kv = ParseKeyValues(r.out);
  EXPECT_EQ(kv["symlink_ioctl"], "0");
  EXPECT_EQ(kv["no_symlinks_errno"], E(ELOOP));
  EXPECT_EQ(kv["io_uring_ioctl"], "0") << "io_uring's openat bypasses seccomp, not the device";
  EXPECT_EQ(kv["reopen_ioctl"], "0") << "a reopen through /proc/self/fd is an open of its own";
  EXPECT_EQ(kv["reopen_after_close_ioctl"], "0");
  EXPECT_EQ(kv["position"], "0") << "the session's handle must not show as the file position";
  EXPECT_EQ(kv["seek_data_errno"], E(ENXIO)) << "the session's handle is the sentry's to ask";
  EXPECT_EQ(kv["o_path_ioctl"], E(EBADF));
  EXPECT_EQ(kv["read_errno"], E(EINVAL));
  EXPECT_EQ(kv["write_errno"], E(EINVAL));
  EXPECT_EQ(kv["mmap_errno"], E(ENODEV));
  EXPECT_EQ(kv["foreign_ioctl_errno"], E(ENOTTY));
  EXPECT_EQ(kv["stat_errno"], "0");
  EXPECT_EQ(kv["absent_errno"], E(ENOENT));
  EXPECT_EQ(kv["excl_errno"], E(EEXIST));
  EXPECT_EQ(kv["directory_errno"], E(ENOTDIR));
  EXPECT_EQ(kv["dev_write_errno"], E(EROFS)) << "the guest's /dev is read-only";
}

// What the test above guards against: trapped opens look at the path as the guest passed it, so a
// symlink to a device, and io_uring's openat (which seccomp never sees), miss the device.
TEST(DeviceFiles, TrappedOpensMissSymlinksAndIoUring) {
  RunResult r = RunSandboxed({"--devices=trap"}, {OPEN_GUEST_BIN, "reach"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto kv = ParseKeyValues(r.out);
  EXPECT_EQ(kv["symlink_ioctl"], "-" + E(ENOENT));
  EXPECT_EQ(kv["io_uring_ioctl"], "-" + E(ENOENT));
}

}  // namespace
}  // namespace nvsentry::testing
