// The launcher's containment (issue 10, sections 1 and 2): what a guest reaches outside its
// sandbox with signals and privileges, and the job control that must keep working around it.
// nvsentry runs under JobShell, a stand-in for the shell or script that starts it.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "gtest/gtest.h"
#include "tests/hostile/job_shell.h"
#include "tests/integration/run_util.h"

namespace nvsentry::testing {
namespace {

constexpr int kMs = 20000;  // deadline for anything that should happen at once

std::vector<std::string> Sandboxed(std::vector<std::string> guest) {
  std::vector<std::string> argv = {NvsentryPath(), "run", "--"};
  argv.insert(argv.end(), guest.begin(), guest.end());
  return argv;
}

// A script started under setsid that runs `sleep` in the background, then nvsentry (the issue's
// reproduction): the script, the sibling and nvsentry share a process group.
JobShell::Options Script(std::vector<std::string> guest) {
  return {Sandboxed(std::move(guest)), false, false, {"sleep", "1000"}};
}

std::string Describe(std::optional<int> st) {
  if (!st) return "no status";
  if (WIFEXITED(*st)) return "exited " + std::to_string(WEXITSTATUS(*st));
  if (WIFSIGNALED(*st)) return std::string("killed by ") + sigabbrev_np(WTERMSIG(*st));
  if (WIFSTOPPED(*st)) return std::string("stopped by ") + sigabbrev_np(WSTOPSIG(*st));
  if (WIFCONTINUED(*st)) return "continued";
  return "?";
}

// The guest program's host pid: nvsentry's child is the guest's init, whose child is the guest.
pid_t GuestOf(pid_t nvsentry) {
  pid_t init = FirstChild(nvsentry);
  return init > 0 ? FirstChild(init) : -1;
}

// Alive and not stopped.
bool Running(pid_t pid) {
  const char s = ProcessState(pid);
  return s != 0 && s != 'T' && s != 't' && s != 'Z' && s != 'X';
}

void ExpectOutsideUntouched(JobShell& sh) {
  EXPECT_TRUE(sh.ShellAnswers(kMs)) << "the script died";
  EXPECT_TRUE(Running(sh.shell())) << "the script: " << ProcessState(sh.shell());
  EXPECT_TRUE(Running(sh.sibling())) << "the script's other child: " << ProcessState(sh.sibling());
}

TEST(LauncherSignals, GuestKillingItsProcessGroupKillsOnlyItself) {
  JobShell sh(Script({SIGNAL_GUEST_BIN, "0", std::to_string(SIGKILL)}));
  ASSERT_TRUE(sh.started());
  EXPECT_TRUE(sh.WaitForOutput("sending", kMs)) << sh.output();
  EXPECT_EQ(Describe(sh.NextStatus(kMs)), "exited " + std::to_string(128 + SIGKILL));
  ExpectOutsideUntouched(sh);
}

TEST(LauncherSignals, GuestKillingEverythingItMaySignalReachesNothingOutside) {
  JobShell sh(Script({SIGNAL_GUEST_BIN, "-1", std::to_string(SIGKILL)}));
  ASSERT_TRUE(sh.started());
  EXPECT_EQ(Describe(sh.NextStatus(kMs)), "exited 0");
  ASSERT_TRUE(sh.WaitForOutput("after", kMs)) << sh.output();
  ExpectOutsideUntouched(sh);
}

TEST(LauncherSignals, GuestStoppingItsProcessGroupStopsOnlyItselfAndNvsentryReportsIt) {
  JobShell sh(Script({SIGNAL_GUEST_BIN, "0", std::to_string(SIGSTOP)}));
  ASSERT_TRUE(sh.started());
  // The guest stopped itself; nvsentry, standing in for it, reports itself stopped too.
  EXPECT_EQ(Describe(sh.NextStatus(kMs)), "stopped by STOP");
  ExpectOutsideUntouched(sh);
  pid_t guest = GuestOf(sh.job());
  EXPECT_EQ(ProcessState(guest), 'T');
  EXPECT_TRUE(Running(FirstChild(sh.job()))) << "the guest's init";
  // Continuing nvsentry continues the guest, which finishes.
  ASSERT_TRUE(sh.Foreground(kMs));
  EXPECT_EQ(Describe(sh.NextStatus(kMs)), "continued");
  EXPECT_EQ(Describe(sh.NextStatus(kMs)), "exited 0");
  EXPECT_TRUE(sh.WaitForOutput("after", kMs)) << sh.output();
}

TEST(LauncherSignals, GuestStoppingEverythingItMaySignalStopsNothingOutside) {
  JobShell sh(Script({SIGNAL_GUEST_BIN, "-1", std::to_string(SIGSTOP)}));
  ASSERT_TRUE(sh.started());
  EXPECT_EQ(Describe(sh.NextStatus(kMs)), "exited 0");
  ExpectOutsideUntouched(sh);
}

TEST(LauncherSignals, SigstopToNvsentryStopsTheGuestAndSigcontResumesIt) {
  JobShell sh({Sandboxed({JOB_GUEST_BIN, "wait"}), false, true});
  ASSERT_TRUE(sh.started());
  ASSERT_TRUE(sh.WaitForOutput("ready\n", kMs)) << sh.output();
  const pid_t guest = GuestOf(sh.job());
  ASSERT_GT(guest, 0);
  kill(sh.job(), SIGSTOP);
  EXPECT_EQ(Describe(sh.NextStatus(kMs)), "stopped by STOP");
  EXPECT_TRUE(WaitForState(guest, 'T', true, kMs)) << "the guest runs on while nvsentry is stopped";
  ASSERT_TRUE(sh.Foreground(kMs));  // SIGCONT to nvsentry
  EXPECT_EQ(Describe(sh.NextStatus(kMs)), "continued");
  EXPECT_TRUE(sh.WaitForOutput("got-CONT", kMs)) << sh.output();
  EXPECT_TRUE(WaitForState(guest, 'T', false, kMs));
  kill(sh.job(), SIGTERM);
  EXPECT_EQ(Describe(sh.NextStatus(kMs)), "exited " + std::to_string(128 + SIGTERM));
}

TEST(LauncherSignals, SigtstpToNvsentryStopsTheGuestAndBoth) {
  JobShell sh({Sandboxed({JOB_GUEST_BIN, "wait"}), false, true});
  ASSERT_TRUE(sh.started());
  ASSERT_TRUE(sh.WaitForOutput("ready\n", kMs)) << sh.output();
  const pid_t guest = GuestOf(sh.job());
  kill(sh.job(), SIGTSTP);
  EXPECT_EQ(Describe(sh.NextStatus(kMs)), "stopped by TSTP");
  EXPECT_EQ(ProcessState(guest), 'T');
  ASSERT_TRUE(sh.Foreground(kMs));
  EXPECT_EQ(Describe(sh.NextStatus(kMs)), "continued");
  EXPECT_TRUE(sh.WaitForOutput("got-CONT", kMs)) << sh.output();
  kill(sh.job(), SIGTERM);
  EXPECT_EQ(Describe(sh.NextStatus(kMs)), "exited " + std::to_string(128 + SIGTERM));
}

// nvsentry as the foreground job of a terminal, driven through the pseudo-terminal's master as a
// user at the keyboard would.
TEST(LauncherTerminal, CtrlCAndCtrlZReachTheGuestAndFgResumesBoth) {
  JobShell sh({Sandboxed({JOB_GUEST_BIN, "interactive"}), true, true});
  ASSERT_TRUE(sh.started());
  ASSERT_TRUE(sh.WaitForOutput("ready fg=1", kMs)) << sh.output();
  const pid_t guest = GuestOf(sh.job());
  ASSERT_GT(guest, 0);
  EXPECT_NE(ProcessGroup(guest), ProcessGroup(sh.job())) << "the guest shares nvsentry's group";
  EXPECT_EQ(sh.ForegroundGroup(kMs), ProcessGroup(guest)) << "the guest's group owns the terminal";

  sh.Type("\x03");  // Ctrl-C
  EXPECT_TRUE(sh.WaitForOutput("got-INT", kMs)) << sh.output();

  sh.Type("\x1a");  // Ctrl-Z: the guest stops, and nvsentry reports itself stopped to its shell
  EXPECT_EQ(Describe(sh.NextStatus(kMs)), "stopped by TSTP");
  EXPECT_EQ(ProcessState(guest), 'T');
  EXPECT_EQ(sh.ForegroundGroup(kMs), sh.shell()) << "the shell took its terminal back";

  ASSERT_TRUE(sh.Foreground(kMs));  // `fg`
  EXPECT_EQ(Describe(sh.NextStatus(kMs)), "continued");
  EXPECT_TRUE(sh.WaitForOutput("got-CONT fg=1", kMs)) << sh.output();

  sh.Type("quit\n");
  EXPECT_EQ(Describe(sh.NextStatus(kMs)), "exited 7") << sh.output();
  EXPECT_EQ(sh.ForegroundGroup(kMs), sh.job()) << "nvsentry gave its terminal back to its own group";
}

TEST(LauncherTerminal, GuestCannotInjectInputIntoTheTerminal) {
  JobShell sh({Sandboxed({JOB_GUEST_BIN, "tiocsti"}), true, true});
  ASSERT_TRUE(sh.started());
  EXPECT_EQ(Describe(sh.NextStatus(kMs)), "exited 0");
  ASSERT_TRUE(sh.WaitForOutput("tiocsti=", kMs)) << sh.output();
  EXPECT_TRUE(sh.WaitForOutput("tiocsti=-1 errno=1", kMs)) << sh.output();
  EXPECT_EQ(sh.InputQueued(kMs), 0) << "bytes wait in the input queue of the shell's terminal";
}

}  // namespace
}  // namespace nvsentry::testing
