// Opening device paths, and host NVIDIA nodes kept out of the guest's reach.
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <map>
#include <set>

#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "tests/integration/run_util.h"

namespace nvsentry::testing {
namespace {

std::string E(int e) { return std::to_string(e); }

TEST(DevicePaths, OpenFormsAndErrors) {
  RunResult r = RunSandboxed({}, {CtrlGuestPath(), "paths"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto kv = ParseKeyValues(r.out);
  EXPECT_EQ(kv["bogus"], E(ENOENT)) << "an NVIDIA-looking path the catalogue lacks";
  EXPECT_EQ(kv["slash"], E(ENOTDIR));
  EXPECT_EQ(kv["excl"], E(EEXIST));
  EXPECT_EQ(kv["directory"], E(ENOTDIR));
  EXPECT_EQ(kv["openat"], "1");
  EXPECT_EQ(kv["dotdot"], "1");
  EXPECT_EQ(kv["openat2"], "1");
  EXPECT_EQ(kv["relative"], "1");
  EXPECT_EQ(kv["creat"], "1");
  EXPECT_EQ(kv["device_read"], "-1");
}

// A refused open's path is the guest's, and the log shows it escaped: a newline and a terminal
// escape in it forge no log line and reach no terminal. (Before: `open /dev/nvhost-zz` then the
// guest's own "nvsentry: ..." line and ESC[2J, raw.)
TEST(DevicePaths, ARefusedOpensPathCannotForgeALogLine) {
  RunResult r =
      RunSandboxed({"--devices=trap", "--log-level=info"},
                   {"/usr/bin/python3", "-c",
                    "import os\n"
                    "try:\n"
                    "    os.open('/dev/nvhost-zz\\nnvsentry: forged line\\x1b[2J', os.O_RDWR)\n"
                    "except OSError as e:\n"
                    "    print('errno=%d' % e.errno)\n"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "errno=" + std::to_string(ENOENT) + "\n");
  EXPECT_EQ(r.err.find("\nnvsentry: forged line"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\x1b'), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("/dev/nvhost-zz\\nnvsentry: forged line\\033[2J"), std::string::npos)
      << "the refusal is still logged, escaped:\n"
      << r.err;
}

// A stand-in for a host NVIDIA node: a character device named like one (it is /dev/zero's
// device, so reading it yields bytes). The guest must never get it: not by its path, not through
// /proc/1/root, not by swapping the path between the sentry's look and the kernel's, and it may
// not unmount the cover or make a node of its own.
class HostNode : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root to make a device node";
    path_ = "/dev/nvhost-standin-" + std::to_string(getpid());
    rdev_ = makedev(1, 5);
    ASSERT_EQ(mknod(path_.c_str(), S_IFCHR | 0666, rdev_), 0) << strerror(errno);
  }
  void TearDown() override {
    if (!path_.empty()) unlink(path_.c_str());
  }
  std::string path_;
  dev_t rdev_ = 0;
};

// The guest opens the node by its path and through /proc/1/root, swaps the path under a racing
// open, and tries to unmount or make a node; the key=value lines it prints.
std::map<std::string, std::string> TryToReach(const std::string& devices, const std::string& path,
                                              dev_t rdev,
                                              const std::vector<std::string>& env = {}) {
  RunResult r =
      RunSandboxed({"--devices=" + devices},
                   {CtrlGuestPath(), "host_node", path, std::to_string(rdev)}, env, 60000);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  auto kv = ParseKeyValues(r.out);
  EXPECT_EQ(kv["breaches"], "0");
  EXPECT_EQ(kv["direct_errno"], E(ENOENT));
  EXPECT_EQ(kv["umount_errno"], E(EPERM));
  EXPECT_EQ(kv["mknod_errno"], E(EPERM));
  return kv;
}

// The guest's own /dev holds the device files; the host node is simply absent from it.
TEST_F(HostNode, StandInIsUnreachable) { TryToReach("files", path_, rdev_); }

constexpr const char* kListDev =
    "for f in $(ls -A /dev); do stat -c '%n %F %a %t:%T %u:%g' /dev/$f; done";

// Each line of a listing made with kListDev, without its owner (the guest sees the host's owners
// through its own user namespace's map).
std::set<std::string> WithoutOwners(const std::string& listing) {
  std::set<std::string> lines;
  for (absl::string_view line : absl::StrSplit(listing, '\n', absl::SkipEmpty())) {
    const size_t owner = line.rfind(' ');
    lines.emplace(line.substr(0, owner));
  }
  return lines;
}

// The guest's /dev is the device files' filesystem; under the host's names it shows the host's
// nodes, links and directories as the host has them (type, mode, device numbers), but for the
// hidden stand-in. Then whether a pseudo-terminal opens, whether /dev may be written, and the
// owner and filesystem of /dev itself.
TEST_F(HostNode, TheGuestsDevShowsTheHostsAsItIs) {
  RunResult host = RunProgram({{"sh", "-c", kListDev}});
  ASSERT_EQ(host.exit_code, 0) << host.err;
  RunResult r = RunSandboxed(
      {"--devices=files"},
      {"sh", "-c",
       std::string(kListDev) + "; python3 -c 'import os, pty; m, s = pty.openpty(); print(\"pty\", "
                               "os.ttyname(s)[:9])'; touch /dev/x 2>/dev/null || echo read-only; "
                               "stat -c 'owner %u' /dev; stat -f -c 'fs %T' /dev"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::set<std::string> guest = WithoutOwners(r.out);
  for (const std::string& line : WithoutOwners(host.out)) {
    if (line.find("nvhost-standin") != std::string::npos)
      EXPECT_EQ(guest.count(line), 0u) << line;
    else
      EXPECT_EQ(guest.count(line), 1u) << line << " not in\n" << r.out;
  }
  for (const std::string& line :
       {std::string("/dev/null character special file 666 1:3 65534:65534\n"),
        std::string("/dev/nvhost-ctrl regular empty file 666 0:0 65534:65534\n"),
        std::string("/dev/pts directory"), std::string("pty /dev/pts/\n"),
        std::string("read-only\n"), std::string("owner 0\n"), std::string("fs fuseblk\n")})
    EXPECT_NE(r.out.find(line), std::string::npos) << line << " not in\n" << r.out;
}

// With trapped opens the host node is covered by /dev/null where it is, and the sentry looks at
// each open's path.
TEST_F(HostNode, StandInIsUnreachableWithTrappedOpens) {
  auto kv = TryToReach("trap", path_, rdev_);
  // The race really ran: the kernel opened the swapped-in path (the cover) many times.
  EXPECT_GT(std::stoi(kv["opened_other"]), 0);
}

TEST_F(HostNode, ABindCannotUncoverIt) {
  // The bind's source is looked up in the guest's own /dev, which lacks it.
  RunResult r = RunSandboxed({"--devices=files", "--private-tmp", "--bind", path_, "/tmp/node"},
                             {"sh", "-c", "stat -c %t:%T /tmp/node; head -c 1 /tmp/node | wc -c"});
  EXPECT_EQ(r.exit_code, 125) << r.out << r.err;
  EXPECT_NE(r.err.find("--bind " + path_ + " /tmp/node: " + path_ + ": No such file or directory"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.out, "");
}

TEST_F(HostNode, ABindCannotUncoverItWithTrappedOpens) {
  // The bind's source is looked up after the node is covered: the guest gets the cover.
  RunResult r = RunSandboxed({"--devices=trap", "--private-tmp", "--bind", path_, "/tmp/node"},
                             {"sh", "-c", "stat -c %t:%T /tmp/node; head -c 1 /tmp/node | wc -c"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "1:3\n0\n") << "not /dev/null's device (1:3): the host node itself";
}

TEST_F(HostNode, StandInIsReachableWithoutTheSandbox) {
  // The same guest natively does reach it: the test above can fail.
  RunResult r = RunProgram({{CtrlGuestPath(), "host_node", path_, std::to_string(rdev_)}});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(ParseKeyValues(r.out)["breaches"], "0");
}

}  // namespace
}  // namespace nvsentry::testing
