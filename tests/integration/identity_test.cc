// The guest's identity made visible: a path the guest's identity is refused (the program, a bind's
// source or target, the working directory) is reported with who the guest is over the host and
// what to do; a program that does not exist is "not found" (127) whatever PATH holds.
// Started as root the guest is nobody (65534): a root-owned 0700 directory is closed to it. The
// ordinary user's cases run nvsentry as that user (tests/integration/ordinary_user.h).
#include <sys/stat.h>
#include <unistd.h>

#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/integration/ordinary_user.h"
#include "tests/integration/run_util.h"

namespace nvsentry::testing {
namespace {

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// A scratch tree: `closed` (0700, root's: nobody may not search it) with `closed/data` in it, and
// `open` (0755, root's: nobody may read it, not write it).
struct Tree {
  std::string root, closed, open;
  Tree() {
    char tmpl[] = "/tmp/nvs-identity-XXXXXX";
    root = mkdtemp(tmpl) != nullptr ? tmpl : "";
    closed = root + "/closed";
    open = root + "/open";
    chmod(root.c_str(), 0755);
    mkdir(closed.c_str(), 0700);
    mkdir((closed + "/data").c_str(), 0755);
    mkdir(open.c_str(), 0755);
  }
  ~Tree() { RunProgram({{"rm", "-rf", root}}); }
};

// nvsentry run -- argv with PATH set to `path` (for nvsentry and so for the guest).
RunResult RunWithPath(const std::string& path, const std::vector<std::string>& argv) {
  RunSpec spec;
  spec.argv = {"env", "PATH=" + path, NvsentryPath(), "run", "--"};
  spec.argv.insert(spec.argv.end(), argv.begin(), argv.end());
  return RunProgram(spec);
}

class GuestIdentity : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "the guest is nobody only when nvsentry runs as root";
    ASSERT_FALSE(t_.root.empty());
  }
  // The refusal names the guest's identity over the host and the three ways out.
  static void ExpectAdvice(const RunResult& r) {
    EXPECT_TRUE(Has(r.err, "the guest is uid 65534, gid 65534 over the host")) << r.err;
    EXPECT_TRUE(Has(r.err, "--uid=N --gid=N")) << r.err;
    EXPECT_TRUE(Has(r.err, "a folder the guest may use")) << r.err;
    EXPECT_TRUE(Has(r.err, "--host-root")) << r.err;
  }
  Tree t_;
};

// Root's PATH holds directories nobody may not search (/root/...): glibc's execvp then said
// EACCES for a name found nowhere, and nvsentry reported "Permission denied", 126.
TEST_F(GuestIdentity, AMissingProgramIsNotFoundWhateverPathHolds) {
  const std::string path = t_.closed + ":/usr/bin:/bin";
  RunResult r = RunWithPath(path, {"nvsentry-no-such-program"});
  EXPECT_EQ(r.exit_code, 127) << r.err;
  EXPECT_TRUE(Has(r.err, "nvsentry-no-such-program: not found in PATH")) << r.err;
  EXPECT_TRUE(Has(r.err, t_.closed)) << "the directory skipped is named: " << r.err;
  EXPECT_FALSE(Has(r.err, "Permission denied")) << r.err;
  ExpectAdvice(r);
  // What lies in a later directory still runs.
  EXPECT_EQ(RunWithPath(path, {"true"}).exit_code, 0);
}

// A file that is found and cannot be run is still EACCES: with the reason of the file's own
// when it has one (no execute bit), else the identity's.
TEST_F(GuestIdentity, AProgramFoundButRefusedSaysWhy) {
  const std::string plain = t_.open + "/plain";
  RunProgram({{"sh", "-c", "echo 'echo hi' > " + plain + " && chmod 0644 " + plain}});
  RunResult r = RunWithPath(t_.open + ":/usr/bin:/bin", {"plain"});
  EXPECT_EQ(r.exit_code, 126) << r.err;
  EXPECT_TRUE(Has(r.err, plain + ": Permission denied: it is not executable")) << r.err;
  // In a directory closed to nobody: the identity's reason.
  const std::string hidden = t_.closed + "/prog";
  RunProgram(
      {{"sh", "-c", "printf '#!/bin/sh\\necho ran\\n' > " + hidden + " && chmod 0755 " + hidden}});
  r = RunSandboxed({}, {hidden});
  EXPECT_EQ(r.exit_code, 126) << r.err;
  EXPECT_TRUE(Has(r.err, hidden + ": Permission denied: ")) << r.err;
  ExpectAdvice(r);
  // What the advice says works: the host's root may run it.
  r = RunSandboxed({"--host-root"}, {hidden});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "ran\n");
}

// README's `--ro-bind ~/data /tmp/data`, as root: ~ is /root, closed to nobody.
TEST_F(GuestIdentity, ABindSourceOrTargetTheGuestMayNotReachFailsTheStartSayingWhy) {
  RunResult r =
      RunSandboxed({"--private-tmp", "--ro-bind", t_.closed + "/data", "/tmp/data"}, {"true"});
  EXPECT_EQ(r.exit_code, 125) << r.err;
  EXPECT_TRUE(Has(r.err, t_.closed + "/data: Permission denied: ")) << r.err;
  ExpectAdvice(r);
  r = RunSandboxed({"--ro-bind", t_.open, t_.closed + "/data"}, {"true"});
  EXPECT_EQ(r.exit_code, 125) << r.err;
  EXPECT_TRUE(Has(r.err, t_.closed + "/data: Permission denied: ")) << r.err;
  ExpectAdvice(r);
  // Given a folder it may use, the same bind works.
  r = RunSandboxed({"--private-tmp", "--ro-bind", t_.open, "/tmp/data"}, {"ls", "-d", "/tmp/data"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

// README's `--bind "$PWD/out" "$PWD/out"`, as root: a root-owned folder nobody may not write.
// The bind is made (the guest may read it), with a warning; none for a folder the guest may write.
TEST_F(GuestIdentity, AWritableBindTheGuestMayNotWriteIsWarnedAbout) {
  RunResult r = RunSandboxed({"--bind", t_.open, t_.open}, {"ls", t_.open});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Has(
      r.err, "warning: --bind " + t_.open + " " + t_.open + ": the guest may not write " + t_.open))
      << r.err;
  ExpectAdvice(r);
  ASSERT_EQ(chown(t_.open.c_str(), 65534, 65534), 0);
  r = RunSandboxed({"--bind", t_.open, t_.open}, {"touch", t_.open + "/made"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(access((t_.open + "/made").c_str(), F_OK), 0);
  // A read-only bind is not about writing.
  ASSERT_EQ(chown(t_.open.c_str(), 0, 0), 0);
  r = RunSandboxed({"--ro-bind", t_.open, t_.open}, {"true"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
}

TEST_F(GuestIdentity, AWorkingDirectoryTheGuestMayNotEnterSaysWhy) {
  RunResult r = RunSandboxed({"--chdir", t_.closed}, {"pwd"});
  EXPECT_EQ(r.exit_code, 125) << r.err;
  EXPECT_TRUE(Has(r.err, "--chdir " + t_.closed + ": Permission denied: ")) << r.err;
  ExpectAdvice(r);
  // Started from it without --chdir: the guest starts in /, and a relative program is looked up
  // from there, as the message says.
  RunSpec spec;
  spec.argv = {"sh", "-c", "cd " + t_.closed + " && exec " + NvsentryPath() + " run -- ./prog"};
  r = RunProgram(spec);
  EXPECT_EQ(r.exit_code, 127) << r.err;
  EXPECT_TRUE(Has(r.err, t_.closed + " is not reachable in the sandbox (Permission denied: "))
      << r.err;
  ExpectAdvice(r);
  EXPECT_TRUE(Has(r.err,
                  "./prog: No such file or directory (looked up from /: the guest could "
                  "not start in " +
                      t_.closed + ")"))
      << r.err;
}

// An ordinary user's guest is that user: the refusal says so, and offers nothing only root may do.
TEST(GuestIdentityUnprivileged, ARefusalSaysTheGuestIsTheUser) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to make the ordinary user";
  std::optional<User> u = OrdinaryUser();
  ASSERT_TRUE(u);
  Tree t;
  ASSERT_FALSE(t.root.empty());
  RunSpec spec;
  spec.argv = As(*u, {NvsentryPath(), "run", "--private-tmp", "--ro-bind", t.closed + "/data",
                      "/tmp/data", "--", "true"});
  RunResult r = RunProgram(spec);
  EXPECT_EQ(r.exit_code, 125) << r.err;
  const std::string who = "the guest is uid " + std::to_string(u->uid) + ", gid " +
                          std::to_string(u->gid) + " over the host (you, as you run nvsentry)";
  EXPECT_TRUE(Has(r.err, who)) << r.err;
  EXPECT_FALSE(Has(r.err, "--host-root")) << r.err;
  spec.argv = As(*u, {"env", "PATH=" + t.closed + ":/usr/bin:/bin", NvsentryPath(), "run", "--",
                      "nvsentry-no-such-program"});
  r = RunProgram(spec);
  EXPECT_EQ(r.exit_code, 127) << r.err;
  EXPECT_TRUE(Has(r.err, "not found in PATH")) << r.err;
  EXPECT_TRUE(Has(r.err, who)) << r.err;
}

}  // namespace
}  // namespace nvsentry::testing
