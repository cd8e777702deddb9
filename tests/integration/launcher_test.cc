// nvsentry run as a launcher: exit statuses, signals, process lifetime, options, crashes.
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <random>

#include "gtest/gtest.h"
#include "tests/integration/run_util.h"

namespace nvsentry::testing {
namespace {

std::string UniqueSleep() {
  // A sleep duration nobody else uses, to find the process by its command line.
  std::random_device rd;
  return std::to_string(900 + rd() % 90) + "." + std::to_string(100000 + rd() % 899999);
}

bool GoneWithin(const std::string& needle, int ms) {
  for (int waited = 0; waited < ms; waited += 50) {
    if (ProcessesMatching(needle).empty()) return true;
    usleep(50000);
  }
  return false;
}

TEST(Launcher, ExitStatusIsTheGuests) {
  EXPECT_EQ(RunSandboxed({}, {"sh", "-c", "exit 7"}).exit_code, 7);
  EXPECT_EQ(RunSandboxed({}, {"true"}).exit_code, 0);
  EXPECT_EQ(RunSandboxed({}, {"sh", "-c", "kill -TERM $$"}).exit_code, 128 + SIGTERM);
  EXPECT_EQ(RunSandboxed({}, {"sh", "-c", "kill -SEGV $$"}).exit_code, 128 + SIGSEGV);
  RunResult missing = RunSandboxed({}, {"/nonexistent/program"});
  EXPECT_EQ(missing.exit_code, 127);
  EXPECT_NE(missing.err.find("No such file"), std::string::npos);
  std::string plain = ::testing::TempDir() + "/not-executable";
  RunProgram({{"sh", "-c", "echo data > " + plain + " && chmod 0644 " + plain}});
  EXPECT_EQ(RunSandboxed({}, {plain}).exit_code, 126);
}

TEST(Launcher, StdioEnvironmentAndDirectoryAreTheCallers) {
  RunSpec spec;
  spec.argv = {NvsentryPath(), "run", "--",
               "sh",           "-c",  "echo out:$NVS_TEST_VAR; echo err >&2; pwd"};
  spec.extra_env = {"NVS_TEST_VAR=hello"};
  RunResult r = RunProgram(spec);
  ASSERT_EQ(r.exit_code, 0);
  char cwd[4096];
  ASSERT_NE(getcwd(cwd, sizeof cwd), nullptr);
  EXPECT_EQ(r.out, "out:hello\n" + std::string(cwd) + "\n");
  EXPECT_EQ(r.err, "err\n");
}

// The program is started on a stack of init's making (sentry/sandbox/guest_init.cc
// StartGuestProgram); glibc's execvp retries a file without "#!" as a shell script with a new
// argument array on that stack, a pointer per argument: 50,000 took 0.4 MB (the first stack, 256
// KiB, overflowed: 139).
TEST(Launcher, AScriptOfManyArgumentsStartsAsNatively) {
  const std::string script = ::testing::TempDir() + "/count-args";
  RunProgram({{"sh", "-c", "printf 'echo $#\\n' > " + script + " && chmod 0755 " + script}});
  std::vector<std::string> argv = {script};
  for (int i = 0; i < 50000; ++i) argv.push_back(std::to_string(i));
  RunResult r = RunSandboxed({}, argv);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "50000\n");
}

std::string CpusAllowedIn(const std::string& status) {
  const size_t at = status.find("Cpus_allowed_list:");
  if (at == std::string::npos) return "";
  const size_t start = status.find_first_not_of(" \t", status.find(':', at) + 1);
  return status.substr(start, status.find('\n', start) - start);
}

// The launcher moves init off the sentry's CPU for the start; the guest still gets exactly the
// CPUs nvsentry was given: all of ours, or the one taskset left it.
TEST(Launcher, GuestRunsOnTheCpusNvsentryWasGiven) {
  cpu_set_t ours;
  ASSERT_EQ(sched_getaffinity(0, sizeof ours, &ours), 0);
  if (CPU_COUNT(&ours) < 2) GTEST_SKIP() << "needs two CPUs";
  const std::string all = CpusAllowedIn(RunProgram({{"cat", "/proc/self/status"}}).out);
  ASSERT_FALSE(all.empty());
  RunResult r = RunSandboxed({}, {"cat", "/proc/self/status"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(CpusAllowedIn(r.out), all);
  int last = 0;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &ours)) last = c;
  r = RunProgram({{"taskset", "-c", std::to_string(last), NvsentryPath(), "run", "--", "cat",
                   "/proc/self/status"}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(CpusAllowedIn(r.out), std::to_string(last));
}

class SignalForwarding : public ::testing::TestWithParam<int> {};

TEST_P(SignalForwarding, SignalSentToNvsentryReachesTheGuest) {
  int sig = GetParam();
  const std::string name = sigabbrev_np(sig);
  RunSpec spec;
  spec.argv = {NvsentryPath(),
               "run",
               "--",
               "sh",
               "-c",
               "trap 'echo got-" + name + "; exit 42' " + name +
                   "; echo ready; while :; do sleep 0.05; done"};
  Child c(spec);
  ASSERT_TRUE(c.WaitForOutput("ready", 10000));
  kill(c.pid(), sig);
  RunResult r = c.Finish(10000);
  EXPECT_EQ(r.exit_code, 42) << r.out << r.err;
  EXPECT_NE(r.out.find("got-" + name), std::string::npos) << r.out;
}

TEST_P(SignalForwarding, UnhandledSignalEndsTheGuestWithItsStatus) {
  int sig = GetParam();
  RunSpec spec;
  spec.argv = {NvsentryPath(), "run", "--", "sh", "-c", "echo ready; exec sleep 60"};
  Child c(spec);
  ASSERT_TRUE(c.WaitForOutput("ready", 10000));
  usleep(100000);  // let the exec happen
  kill(c.pid(), sig);
  EXPECT_EQ(c.Finish(10000).exit_code, 128 + sig);
}

INSTANTIATE_TEST_SUITE_P(Signals, SignalForwarding,
                         ::testing::Values(SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1),
                         [](const auto& info) { return std::string(sigabbrev_np(info.param)); });

TEST(Launcher, GuestSignallingItsProcessGroupReachesItOnce) {
  // The guest has a process group of its own: kill(0, ...) reaches the guest (once) and nothing
  // outside it, so this test runner needs no group of its own to survive it (tests/hostile has
  // the attacks: a script and its other children are spared).
  RunSpec spec;
  spec.argv = {
      NvsentryPath(),
      "run",
      "--",
      "sh",
      "-c",
      "n=0; trap 'n=$((n+1))' USR1 INT; kill -USR1 0; kill -INT 0; sleep 0.3; echo count=$n"};
  spec.timeout_ms = 20000;
  RunResult r = RunProgram(spec);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "count=2\n");
}

TEST(Launcher, GuestInheritsNoSentryFds) {
  std::string log = ::testing::TempDir() + "/fds." + std::to_string(getpid()) + ".log";
  RunResult native = RunProgram({{"sh", "-c", "ls /proc/self/fd | wc -l"}});
  RunResult boxed = RunSandboxed({"--log-level=debug", "--log-file=" + log},
                                 {"sh", "-c", "ls /proc/self/fd | wc -l"});
  EXPECT_EQ(boxed.exit_code, 0) << boxed.err;
  EXPECT_EQ(boxed.out, native.out);
}

TEST(Launcher, NothingOfTheGuestOutlivesItsFirstProcess) {
  std::string dur = UniqueSleep();
  RunResult r = RunSandboxed({}, {"sh", "-c", "sleep " + dur + " & sleep " + dur + " & exit 3"});
  EXPECT_EQ(r.exit_code, 3);
  // Gone by the time nvsentry returns: init kills and reaps them before it reports the exit.
  EXPECT_TRUE(ProcessesMatching("sleep " + dur).empty());
}

TEST(Launcher, GuestThatForksAndExecs) {
  RunResult r = RunSandboxed({}, {"sh", "-c",
                                  std::string(CtrlGuestPath()) + " basic >/dev/null && " + "(" +
                                      CtrlGuestPath() + " wait | grep -c timeout_errno)"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "1\n");
}

TEST(Launcher, CrashOfTheSentryKillsTheGuest) {
  std::string dur = UniqueSleep();
  RunResult r =
      RunWithTestHooks("crash-on-open", {}, {CtrlGuestPath(), "crash_victim", dur}, 30000);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, 128 + SIGSEGV) << r.err;
  EXPECT_NE(r.out.find("victim_ready"), std::string::npos);
  EXPECT_NE(r.err.find("internal error"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("Backtrace"), std::string::npos) << r.err;
  // By default nvsentry serves device files when it runs as root (their opens reach
  // Sentry::OpenFile) and traps opens otherwise (Sentry::HandleOpen).
  const char* frame = geteuid() == 0 ? "Sentry::OpenFile" : "Sentry::HandleOpen";
  EXPECT_NE(r.err.find(frame), std::string::npos) << "frames are named:\n" << r.err;
  EXPECT_TRUE(GoneWithin("sleep " + dur, 3000));
}

// The device files' first listing (DeviceFs::Prime, while init waits for it) failing is a failed
// start with its reason, not a hang: init, which held the connection too, is killed first, so the
// listing's requests end with it.
TEST(Launcher, AFailedListingOfTheGuestsDevFailsTheStart) {
  if (geteuid() != 0) GTEST_SKIP() << "device files need nvsentry started as root";
  RunResult r =
      RunWithTestHooks("fail-device-listing", {"--devices=files"}, {"/bin/echo", "ran"}, 20000);
  EXPECT_FALSE(r.timed_out) << r.err;
  EXPECT_EQ(r.exit_code, 125) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("serving its first requests failed (Input/output error)"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("cannot start the sandbox"), std::string::npos) << r.err;
}

// Linux allows one seccomp listener in a process's filters: nvsentry started under another
// supervisor's listener cannot install its guest's and says so, and what to do (before:
// "installing the seccomp filter: Device or resource busy").
TEST(Launcher, AnotherSeccompSupervisorAboveIsNamed) {
  int err_pipe[2];
  ASSERT_EQ(pipe(err_pipe), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    dup2(err_pipe[1], 2);
    // A listener on a call nvsentry never makes (its notifications would wait for nobody).
    sock_filter code[] = {BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 0),
                          BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_vhangup, 0, 1),
                          BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
                          BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)};
    sock_fprog prog{4, code};
    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    const long listener =
        syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
    // The listener lives while an fd of it does: nvsentry inherits this one.
    if (listener < 0 || fcntl(static_cast<int>(listener), F_SETFD, 0) != 0) _exit(99);
    execl(NvsentryPath(), NvsentryPath(), "run", "--", "true", nullptr);
    _exit(98);
  }
  close(err_pipe[1]);
  std::string err;
  char buf[4096];
  for (ssize_t n; (n = read(err_pipe[0], buf, sizeof buf)) > 0;) err.append(buf, n);
  close(err_pipe[0]);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 125) << err;
  EXPECT_NE(err.find("another seccomp supervisor (a filter with a listener) already watches this "
                     "process, and Linux allows one per process; run nvsentry outside it"),
            std::string::npos)
      << err;
}

TEST(Launcher, HelpDocumentsEveryOption) {
  RunResult r = RunProgram({{NvsentryPath(), "run", "--help"}});
  EXPECT_EQ(r.exit_code, 0);
  for (const char* opt :
       {"--log-level", "--log-file", "--workers", "--sync-wakeup", "--no-sync-wakeup", "--uid",
        "--gid", "--host-root", "--ro-root", "--private-tmp", "--bind", "--ro-bind", "--no-network",
        "--chdir", "--help"})
    EXPECT_NE(r.out.find(opt), std::string::npos) << opt;
  // nvsentry's own help names each command and where its options are.
  RunResult top = RunProgram({{NvsentryPath(), "--help"}});
  EXPECT_EQ(top.exit_code, 0);
  for (const char* cmd : {"nvsentry run [OPTIONS]", "nvsentry policy show", "nvsentry abi list",
                          "nvsentry fake-l4t", "nvsentry run --help"})
    EXPECT_NE(top.out.find(cmd), std::string::npos) << cmd;
}

TEST(Launcher, BadCommandLinesAreRefusedClearly) {
  RunResult r = RunProgram({{NvsentryPath(), "run", "--frobnicate", "--", "true"}});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("unknown option '--frobnicate'"), std::string::npos) << r.err;
  r = RunProgram({{NvsentryPath(), "run", "--log-level=loud", "true"}});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--log-level"), std::string::npos) << r.err;
  r = RunProgram({{NvsentryPath(), "run"}});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("missing PROGRAM"), std::string::npos) << r.err;
  r = RunProgram({{NvsentryPath(), "run", "--log-file=/nonexistent-dir/x.log", "true"}});
  EXPECT_EQ(r.exit_code, 2);
}

TEST(Launcher, LogFileRecordsDeviceOpens) {
  std::string log = ::testing::TempDir() + "/opens." + std::to_string(getpid()) + ".log";
  unlink(log.c_str());
  RunResult r =
      RunSandboxed({"--log-level=debug", "--log-file=" + log}, {CtrlGuestPath(), "basic"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("nvsentry:"), std::string::npos) << "logs go to the file, not stderr";
  RunResult text = RunProgram({{"cat", log}});
  EXPECT_NE(text.out.find("opened /dev/nvhost-ctrl"), std::string::npos) << text.out;
}

}  // namespace
}  // namespace nvsentry::testing
