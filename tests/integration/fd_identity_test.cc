// Which session a guest fd refers to, across dup, close and reuse, fork, exec and fd passing;
// and ioctls on fds that are not sessions.
#include <dirent.h>
#include <unistd.h>

#include <cerrno>

#include "gtest/gtest.h"
#include "tests/integration/run_util.h"

namespace nvsentry::testing {
namespace {

TEST(FdIdentity, DupCloseReuseForkExec) {
  RunResult r = RunSandboxed({}, {CtrlGuestPath(), "fds"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto kv = ParseKeyValues(r.out);
  EXPECT_EQ(kv["reused_number_errno"], std::to_string(ENOTTY))
      << "a plain file at a former device fd's number is not a device";
  EXPECT_EQ(kv["fds_ok"], "1");
}

TEST(FdIdentity, FdSentOverUnixSocket) {
  RunResult r = RunSandboxed({}, {CtrlGuestPath(), "scm_rights"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(ParseKeyValues(r.out)["scm_delta"], "1");
}

TEST(FdIdentity, NonDeviceFdsBehaveAsWithoutSandbox) {
  RunResult native = RunProgram({{CtrlGuestPath(), "nondevice"}});
  RunResult boxed = RunSandboxed({}, {CtrlGuestPath(), "nondevice"});
  ASSERT_EQ(native.exit_code, 0) << native.err;
  ASSERT_EQ(boxed.exit_code, 0) << boxed.err;
  EXPECT_EQ(boxed.out, native.out);
  EXPECT_NE(native.out.find("fionread=0 avail=3"), std::string::npos) << native.out;
}

TEST(FdIdentity, SessionsEndWhenTheGuestClosesThem) {
  RunSpec spec;
  spec.argv = {NvsentryPath(), "run", "--", CtrlGuestPath(), "churn"};
  spec.keep_stdin_open = true;
  Child c(spec);
  ASSERT_TRUE(c.WaitForOutput("churned", 60000));
  // 3000 opens later the sentry holds only its fixed fds, not one per session ever made. Sessions
  // end on the sentry's lifetime thread when it sees the guest's closes, after the guest printed,
  // so the count is watched until it settles (a loaded machine delays that thread), not sampled.
  auto count_fds = [&] {
    int n = 0;
    DIR* d = opendir(("/proc/" + std::to_string(c.pid()) + "/fd").c_str());
    if (d == nullptr) return -1;
    while (readdir(d)) ++n;
    closedir(d);
    return n;
  };
  int fds = count_fds();
  for (int waited_ms = 0; fds >= 64 && waited_ms < 20000; waited_ms += 10) {
    usleep(10000);
    fds = count_fds();
  }
  ASSERT_GE(fds, 0);
  EXPECT_LT(fds, 64);
  c.CloseStdin();
  EXPECT_EQ(c.Finish(30000).exit_code, 0);
}

}  // namespace
}  // namespace nvsentry::testing
