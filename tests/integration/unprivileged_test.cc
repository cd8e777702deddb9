// nvsentry started by an ordinary user: no root, only an unprivileged user namespace. The demo
// and the GPU integration tests must pass that way too. Run as root, the tests make an ordinary
// user (useradd, once) and run nvsentry as that user with setpriv; run by an ordinary user, the
// whole suite is already unprivileged and these skip.
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "tests/integration/ordinary_user.h"
#include "tests/integration/run_util.h"

namespace nvsentry::testing {
namespace {

constexpr const char* kUser = "nvsentry-test";

class Unprivileged : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0)
      GTEST_SKIP() << "needs root to make the ordinary user; run as an ordinary user, every "
                      "integration test already runs nvsentry unprivileged";
    std::optional<User> u = OrdinaryUser();
    ASSERT_TRUE(u) << "useradd " << kUser << " failed";
    user_ = *u;
    RunResult reach = RunProgram({As(user_, {"test", "-x", NvsentryPath()})});
    ASSERT_EQ(reach.exit_code, 0) << "uid " << user_.uid << " cannot run " << NvsentryPath()
                                  << ": the build directory must be readable by other users";
  }
  User user_{};
};

// An ordinary user's guest is that user, so it may write the --learn file while it runs; the
// policy nvsentry writes at the end is all the file holds. (Before: the guest, which only read a
// syncpoint, padded the file past the learned text and appended an allow of SYNCPT_INCR, which
// survived the sentry's write from offset 0 and passed `policy check`.)
TEST_F(Unprivileged, TheLearnedPolicyIsAllTheLearnFileHolds) {
  char dir_template[] = "/tmp/nvsentry-learn-XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  const std::string dir = dir_template, file = dir + "/learned.toml";
  ASSERT_EQ(chown(dir.c_str(), user_.uid, user_.gid), 0);
  RunResult r = RunProgram(
      {As(user_, {NvsentryPath(), "run", "--learn=" + file, "--", "sh", "-c",
                  "head -c 200000 /dev/zero | tr '\\0' '\\n' > " + file + "; printf '" +
                      "[ioctls.NVHOST_IOCTL_CTRL_SYNCPT_INCR]\\nallow = true\\n' >> " + file})});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  std::ifstream in(file);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_TRUE(text.starts_with("# Learned by nvsentry run --learn")) << text.substr(0, 200);
  // (The header quotes the command line, the guest's printf included: only a line of its own
  // would be a rule.)
  EXPECT_EQ(text.find("\n[ioctls.NVHOST_IOCTL_CTRL_SYNCPT_INCR]"), std::string::npos)
      << "the guest's line survived";
  EXPECT_LT(text.size(), 100000u);
  RunResult check = RunProgram({{NvsentryPath(), "policy", "check", file}});
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
  RunProgram({{"rm", "-rf", dir}});
}

// Device files need nvsentry started as root (sentry/devfs/device_fs.h): by default an ordinary
// user's nvsentry traps opens instead (the demo above), and asking for them is a clear error.
TEST_F(Unprivileged, DeviceFilesAskedForAreAClearError) {
  RunResult r =
      RunProgram({As(user_, {NvsentryPath(), "run", "--devices=files", "--", "/bin/true"})});
  EXPECT_EQ(r.exit_code, 125) << r.out << r.err;
  EXPECT_NE(r.err.find("--devices=files:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("started as root"), std::string::npos) << r.err;
}

TEST_F(Unprivileged, DemoRunsUnderNvsentryStartedByAnOrdinaryUser) {
  RunResult r = RunProgram({As(user_, {NvsentryPath(), "run", "--", GPU_DEMO_BIN})});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("demo=ok"), std::string::npos) << r.out;
  // Root inside, the user outside (a file it makes is the user's on the host); no capability
  // gained over the host. The program's own user namespace maps its root to its init's root
  // ("0 0 1": sentry/sandbox/guest_init.cc, StartGuestProgram), which is the user.
  char dir_template[] = "/tmp/nvs-unpriv-XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  const std::string dir = dir_template;
  chmod(dir.c_str(), 0777);
  r = RunProgram({As(user_, {NvsentryPath(), "run", "--", "sh", "-c",
                             "id -u; cat /proc/self/uid_map; grep NoNewPrivs /proc/self/status; "
                             "touch " +
                                 dir + "/made"})});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::istringstream words(r.out);
  std::string id, inside, outside, count, nnp_key, nnp;
  words >> id >> inside >> outside >> count >> nnp_key >> nnp;
  EXPECT_EQ(id, "0") << r.out;
  EXPECT_EQ(inside + " " + outside + " " + count, "0 0 1") << r.out;
  EXPECT_EQ(nnp, "1") << r.out;
  struct stat made;
  EXPECT_EQ(stat((dir + "/made").c_str(), &made), 0);
  EXPECT_EQ(made.st_uid, user_.uid) << "the guest's root is the user on the host";
  unlink((dir + "/made").c_str());
  rmdir(dir.c_str());
  // An ordinary user may map the guest only to itself.
  r = RunProgram({As(user_, {NvsentryPath(), "run", "--uid=12345", "--", "true"})});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("can map the guest only to that"), std::string::npos) << r.err;
  r = RunProgram({As(user_, {NvsentryPath(), "run", "--host-root", "--", "true"})});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--host-root"), std::string::npos) << r.err;
}

TEST_F(Unprivileged, GpuAndLauncherIntegrationTestsPassAsAnOrdinaryUser) {
  // This very binary, filtered to the GPU and launcher tests, as the user; its temporary files
  // in a directory of the user's own.
  char exe[PATH_MAX] = {};
  ASSERT_GT(readlink("/proc/self/exe", exe, sizeof exe - 1), 0);
  char tmpl[] = "/tmp/nvs-unpriv-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  ASSERT_EQ(chown(tmpl, user_.uid, user_.gid), 0);
  RunSpec spec;
  spec.argv = As(user_, {exe, "--gtest_filter=Gpu*:Launcher.*:Signals/*"});
  spec.extra_env = {std::string("TEST_TMPDIR=") + tmpl};
  spec.timeout_ms = 100000;
  RunResult r = RunProgram(spec);
  EXPECT_EQ(r.exit_code, 0) << r.out.substr(r.out.size() > 6000 ? r.out.size() - 6000 : 0) << r.err;
  EXPECT_NE(r.out.find("[  PASSED  ]"), std::string::npos);
  EXPECT_EQ(r.out.find("[  FAILED  ]"), std::string::npos);
  RunProgram({{"rm", "-rf", tmpl}});
}

}  // namespace
}  // namespace nvsentry::testing
