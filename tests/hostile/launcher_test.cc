// The launcher's containment: what a guest reaches outside its
// sandbox with signals and privileges, and the job control that must keep working around it.
// nvsentry runs under JobShell, a stand-in for the shell or script that starts it.
#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "sentry/sandbox/identity.h"
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

// The status after a "continued" one: a job that exits at once after being continued can be
// reaped before its parent's waitpid reports the continue.
std::optional<int> NextStatusAfterContinue(JobShell& sh) {
  std::optional<int> st = sh.NextStatus(kMs);
  return st && WIFCONTINUED(*st) ? sh.NextStatus(kMs) : st;
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
  EXPECT_EQ(Describe(NextStatusAfterContinue(sh)), "exited 0");
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
  EXPECT_EQ(sh.ForegroundGroup(kMs), sh.job())
      << "nvsentry gave its terminal back to its own group";
}

TEST(LauncherTerminal, GuestCannotInjectInputIntoTheTerminal) {
  JobShell sh({Sandboxed({JOB_GUEST_BIN, "tiocsti"}), true, true});
  ASSERT_TRUE(sh.started());
  EXPECT_EQ(Describe(sh.NextStatus(kMs)), "exited 0");
  ASSERT_TRUE(sh.WaitForOutput("tiocsti=", kMs)) << sh.output();
  EXPECT_TRUE(sh.WaitForOutput("tiocsti=-1 errno=1", kMs)) << sh.output();
  EXPECT_EQ(sh.InputQueued(kMs), 0) << "bytes wait in the input queue of the shell's terminal";
}

// --- privileges ---

// What a privileged guest would attack: a directory only the host's root may write, outside the
// sandbox (a root-owned 0700 directory), and a host pid nobody uses.
struct Targets {
  std::string dir;
  pid_t free_pid = -1;
  Targets() {
    char tmpl[] = "/tmp/nvs-root-only-XXXXXX";
    if (mkdtemp(tmpl) != nullptr) dir = tmpl;
    chmod(dir.c_str(), 0700);
    int pid_max = 32768;
    std::ifstream("/proc/sys/kernel/pid_max") >> pid_max;
    // Behind the kernel's next pid, which goes up from the last one handed out and wraps at
    // pid_max (to 300): a pid some way below this process's is handed out again only after all
    // the others, and a random one keeps tests that run at once apart. (pid_max - 1, the choice
    // before, was taken meanwhile when the suite's processes had brought the next pid near it
    // with pid_max 32768: EEXIST where 0 was expected, and a live pid where none was.)
    std::mt19937 random(std::random_device{}());
    const int span = pid_max / 4;
    for (int tries = 0; tries < 1000 && free_pid < 0; ++tries) {
      pid_t p = getpid() - 1000 - static_cast<pid_t>(random() % span);
      if (p <= 300) p += pid_max - 301;  // into 301 .. pid_max - 1
      if (kill(p, 0) != 0 && errno == ESRCH) free_pid = p;
    }
  }
  ~Targets() {
    unlink((dir + "/planted-by-guest").c_str());
    rmdir(dir.c_str());
  }
  bool Planted() const { return access((dir + "/planted-by-guest").c_str(), F_OK) == 0; }
};

// Whether this test process holds capability `cap` (some VMs' root lacks CAP_SYS_RESOURCE).
bool HasCapability(int cap) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.starts_with("CapEff:")) return (std::stoull(line.substr(7), nullptr, 16) >> cap) & 1;
  return false;
}

std::map<std::string, std::string> Probe(const std::vector<std::string>& options,
                                         const Targets& t) {
  RunResult r = RunSandboxed(options, {PRIVILEGE_GUEST_BIN, t.dir, std::to_string(t.free_pid)});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  return ParseKeyValues(r.out);
}

TEST(LauncherPrivileges, GuestStartedByRootHoldsNoCapabilityOverTheHost) {
  if (geteuid() != 0) GTEST_SKIP() << "checks the default for nvsentry started as root";
  Targets t;
  ASSERT_FALSE(t.dir.empty());
  ASSERT_GT(t.free_pid, 0);
  auto kv = Probe({}, t);
  EXPECT_EQ(kv["uid"], "0") << "root inside its namespace";
  EXPECT_EQ(kv["nnp"], "1");
  EXPECT_EQ(kv["write"], "-1/" + std::to_string(EACCES));
  EXPECT_FALSE(t.Planted());
  EXPECT_EQ(kv["set_tid"], "-1/" + std::to_string(EPERM)) << "the guest chose a host pid";
  EXPECT_TRUE(kill(t.free_pid, 0) != 0 && errno == ESRCH);
  // ENOSYS where the kernel has no module support (CONFIG_MODULES=n, as on this test VM).
  for (const char* k : {"init_module", "finit_module"})
    EXPECT_TRUE(kv[k] == "-1/" + std::to_string(EPERM) || kv[k] == "-1/" + std::to_string(ENOSYS))
        << k << "=" << kv[k];
  // ENOENT where the kernel has no /dev/mem (CONFIG_DEVMEM=n).
  EXPECT_TRUE(kv["devmem"] == "-1/" + std::to_string(EACCES) ||
              kv["devmem"] == "-1/" + std::to_string(ENOENT))
      << kv["devmem"];
  if (access("/dev/kmsg", F_OK) == 0) {
    EXPECT_EQ(kv["kmsg"], "-1/" + std::to_string(EACCES));
  }
  EXPECT_EQ(kv["rlimit"], "-1/" + std::to_string(EPERM));
  EXPECT_EQ(kv["nice"], "-1/" + std::to_string(EACCES));
  // The mount calls newer than the filter's libseccomp, and the one it did not list: a writable
  // clone of its read-only /dev (or of a --ro-root or --ro-bind mount) was the guest's to make.
  EXPECT_EQ(kv["ro_clone"], "-1/" + std::to_string(EPERM));
  EXPECT_EQ(kv["ro_write"], "-1/" + std::to_string(EBADF));
  EXPECT_EQ(kv["fspick"], "-1/" + std::to_string(EPERM));
  // Whatever mount call the filter does not know yet: the program runs one user namespace below
  // its init, so the mounts it inherited (covers, read-only flags) are locked.
  EXPECT_EQ(kv["own_userns"], "1");
}

// The sentry loads a library of its own at run time (libunwind, for its crash report), when the
// guest first asks it something. Loaded by the name the loader looks for, the guest could first
// have put its own library of that name where the loader looks: here an LD_LIBRARY_PATH
// directory it may write (an empty element, which is the working directory it shares with the
// sentry, is one). The red team's library wrote into a root-only directory from inside the
// sentry (before: the mark was made). Planted under the name of libunwind's dependency too.
TEST(LauncherPrivileges, TheSentryLoadsNoLibraryTheGuestPlanted) {
  const std::string dir = ::testing::TempDir() + "/planted-" + std::to_string(getpid());
  const std::string mark = dir + "-mark";
  std::filesystem::remove_all(dir);
  unlink(mark.c_str());
  ASSERT_EQ(mkdir(dir.c_str(), 0777), 0);
  ASSERT_EQ(chmod(dir.c_str(), 0777), 0);  // whatever the umask: the guest's to write
  // The guest plants it under both names, then opens a device and makes a call, and stays a
  // while: the sentry loads its library on a thread of its own after that first call.
  const std::string plant = std::string("cp ") + PLANTED_LIBRARY + " " + dir +
                            "/libunwind.so.8 && cp " + PLANTED_LIBRARY + " " + dir +
                            "/liblzma.so.5 && " + CtrlGuestPath() + " basic && sleep 0.3";
  RunSpec spec;
  spec.argv = {NvsentryPath(), "run", "--", "sh", "-c", plant};
  spec.extra_env = {"LD_LIBRARY_PATH=" + dir, "NVS_PLANTED_MARK=" + mark};
  RunResult r = RunProgram(spec);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(std::filesystem::exists(dir + "/libunwind.so.8")) << "the guest planted it";
  EXPECT_FALSE(std::filesystem::exists(mark)) << "the sentry ran the guest's library";
  std::filesystem::remove_all(dir);
  unlink(mark.c_str());
}

// The guest's pseudo-terminals come from a devpts instance of its own, at most 256 (the red team
// held 4,095 from the host's own instance, and host root's openpty failed with ENOSPC until the
// guest ended): in either device mode.
TEST(LauncherView, ThePtysAreTheGuestsOwnAndCounted) {
  for (const char* devices : {"--devices=files", "--devices=trap"}) {
    if (geteuid() != 0 && std::string(devices) == "--devices=files") continue;
    RunResult r = RunSandboxed(
        {devices},
        {"python3", "-c",
         "import os\nn = 0\ntry:\n    while n < 5000:\n        os.openpty()\n        n += 1\n"
         "except OSError as e:\n    print(n, e.errno)\n"});
    EXPECT_EQ(r.exit_code, 0) << devices << ": " << r.err;
    // 256 on a host with ptys to spare (the kernel keeps kernel.pty.reserve of them for its
    // own instance, the host's; the other instances share the rest).
    int n = -1, err = -1;
    EXPECT_EQ(sscanf(r.out.c_str(), "%d %d", &n, &err), 2) << r.out;
    EXPECT_GT(n, 0) << devices;
    EXPECT_LE(n, 256) << devices;
    EXPECT_EQ(err, ENOSPC) << devices;
  }
}

// Its terminal is still named (bound on /dev/console, as bubblewrap's --dev does), though its
// /dev/pts is not the host's.
TEST(LauncherView, TheGuestsTerminalHasAName) {
  RunSpec spec;
  spec.argv = {"script", "-qc", std::string(NvsentryPath()) + " run -- tty", "/dev/null"};
  RunResult r = RunProgram(spec);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("/dev/console"), std::string::npos) << r.out;
}

// A guest that takes pids without end (zombies it never reaps) takes them from the host: this
// VM's pid_max is 32,768, and a guest fuzzer's 32,432 zombies once left a concurrent process on
// the host unable to start a thread. --max-tasks (RLIMIT_NPROC in the guest's user namespace)
// stops it at the limit with EAGAIN, and the guest cannot raise it.
TEST(LauncherTasks, AGuestTakingPidsStopsAtMaxTasks) {
  RunResult r = RunSandboxed({"--max-tasks=64"}, {TASKS_GUEST_BIN, "10000"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto kv = ParseKeyValues(r.out);
  EXPECT_EQ(kv["error"], std::to_string(EAGAIN)) << r.out;
  // 64 tasks of its user: init, the guest itself and 62 children.
  EXPECT_EQ(kv["made"], "62") << r.out;
  EXPECT_EQ(kv["raise"], "-1/" + std::to_string(EPERM)) << r.out;
}

TEST(LauncherTasks, TheDefaultLimitHoldsAndZeroLiftsIt) {
  auto kv = ParseKeyValues(RunSandboxed({}, {TASKS_GUEST_BIN, "6000"}).out);
  EXPECT_EQ(kv["made"], "4094") << "the default --max-tasks is 4096";
  EXPECT_EQ(kv["error"], std::to_string(EAGAIN));
  kv = ParseKeyValues(RunSandboxed({"--max-tasks=0"}, {TASKS_GUEST_BIN, "6000"}).out);
  EXPECT_EQ(kv["made"], "6000");
  EXPECT_EQ(kv["error"], "0");
}

// A host sysctl a test sets for one run: what it was is written back by Restore() and, whatever
// the test does, when the knob goes.
class HostKnob {
 public:
  explicit HostKnob(std::string path) : path_(std::move(path)) {
    std::ifstream in(path_);
    found_ = static_cast<bool>(in >> before_);
  }
  ~HostKnob() { Restore(); }
  bool found() const { return found_; }
  bool Set(const std::string& value) {
    std::ofstream out(path_);
    out << value;
    return static_cast<bool>(out.flush());
  }
  void Restore() {
    if (found_) Set(before_);
  }

 private:
  std::string path_, before_;
  bool found_ = false;
};

// The opt-out really restores the host's root (so the probes above can see a privilege).
// A userfaultfd that handles kernel faults lets the guest hold a sentry thread that reads its
// memory (an ioctl argument, a pushbuffer) for as long as it likes; the stall watch then starts
// another receiving thread, and the guest can do it again. The kernel refuses such a userfaultfd
// to an unprivileged guest only while vm.unprivileged_userfaultfd is 0 (the default since 5.11;
// distributions and older kernels set 1): the filter refuses it whatever the host says.
TEST(LauncherPrivileges, UserfaultfdForKernelFaultsIsRefusedWhateverTheHostAllows) {
  if (geteuid() != 0) GTEST_SKIP() << "sets vm.unprivileged_userfaultfd";
  HostKnob knob("/proc/sys/vm/unprivileged_userfaultfd");
  if (!knob.found()) GTEST_SKIP() << "no vm.unprivileged_userfaultfd";
  ASSERT_TRUE(knob.Set("1"));
  Targets t;
  auto kv = Probe({}, t);
  knob.Restore();
  EXPECT_EQ(kv["uffd_kernel"], "-1/" + std::to_string(EPERM));
  EXPECT_EQ(kv["uffd_user"], "0/0") << "a userfaultfd for the guest's own faults is harmless";
}

// Init (the guest's pid 1) stays out of the guest's reach whatever fs.suid_dumpable says: its fd
// table is not listed, its OOM score not raised. With 2 (systemd's and apport's setting) init was
// left dumpable for good since it clones the program (restoring 2 is refused), and the guest
// listed /proc/1/fd and set /proc/1/oom_score_adj to 1000.
TEST(LauncherPrivileges, InitIsNotTheGuestsWhateverSuidDumpableSays) {
  if (geteuid() != 0) GTEST_SKIP() << "sets fs.suid_dumpable";
  HostKnob knob("/proc/sys/fs/suid_dumpable");
  if (!knob.found()) GTEST_SKIP() << "no fs.suid_dumpable";
  for (const char* value : {"0", "2"}) {
    SCOPED_TRACE(std::string("fs.suid_dumpable = ") + value);
    ASSERT_TRUE(knob.Set(value));
    RunResult r = RunSandboxed({}, {"sh", "-c",
                                    "ls /proc/1/fd >/dev/null 2>&1; echo fds=$?; "
                                    "echo 1000 > /proc/1/oom_score_adj 2>/dev/null; echo oom=$?"});
    knob.Restore();
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto kv = ParseKeyValues(r.out);
    EXPECT_NE(kv["fds"], "0") << r.out;
    EXPECT_NE(kv["oom"], "0") << r.out;
  }
}

TEST(LauncherPrivileges, HostRootOptOutGivesThemBack) {
  if (geteuid() != 0) GTEST_SKIP() << "--host-root needs root";
  Targets t;
  auto kv = Probe({"--host-root"}, t);
  EXPECT_EQ(kv["write"], "0/0");
  EXPECT_TRUE(t.Planted());
  EXPECT_EQ(kv["set_tid"], "0/0");
  if (HasCapability(CAP_SYS_RESOURCE)) {
    EXPECT_EQ(kv["rlimit"], "0/0");
  }
  EXPECT_EQ(kv["nice"], "0/0");
  EXPECT_EQ(kv["nnp"], "1") << "no_new_privs holds even then";
}

TEST(LauncherPrivileges, UidAndGidChooseTheHostIdentity) {
  if (geteuid() != 0) GTEST_SKIP() << "only root may map the guest to another user";
  char tmpl[] = "/tmp/nvs-ids-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  chmod(dir.c_str(), 01777);
  struct stat st {};
  ASSERT_EQ(RunSandboxed({}, {"touch", dir + "/default"}).exit_code, 0);
  ASSERT_EQ(stat((dir + "/default").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 65534u);
  EXPECT_EQ(st.st_gid, 65534u);
  RunResult r = RunSandboxed({"--uid=12345", "--gid=23456"},
                             {"sh", "-c", "touch " + dir + "/chosen && id -u && id -g"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "0\n0\n") << "root inside";
  ASSERT_EQ(stat((dir + "/chosen").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 12345u);
  EXPECT_EQ(st.st_gid, 23456u);
  for (const char* f : {"/default", "/chosen"}) unlink((dir + f).c_str());
  rmdir(dir.c_str());
}

TEST(LauncherPrivileges, IdentityOptionsThatCannotBeHonouredAreRefused) {
  for (auto [opts, message] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"--uid=0"}, "--host-root"},
           {{"--host-root", "--uid=5"}, "does not combine"},
           {{"--uid=nobody"}, "not a number"}}) {
    RunResult r = RunSandboxed(opts, {"true"});
    EXPECT_EQ(r.exit_code, 2) << opts[0];
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
  }
}

// --- the pid-reuse window (hostshim/sim/memory/guest_process.h) ---

// One line of /proc/PID/task/TID/status, e.g. "CapEff".
std::string StatusField(pid_t pid, pid_t tid, const std::string& key) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/status");
  std::string line;
  while (std::getline(in, line))
    if (line.starts_with(key + ":")) {
      std::string v = line.substr(key.size() + 1);
      v.erase(0, v.find_first_not_of(" \t"));
      return v;
    }
  return "";
}

TEST(LauncherPidReuse, RootStartedSentryHoldsNoCapabilityOverTheHost) {
  if (geteuid() != 0) GTEST_SKIP() << "a sentry started by an ordinary user has none to drop";
  JobShell sh({Sandboxed({JOB_GUEST_BIN, "wait"}), false, true});
  ASSERT_TRUE(sh.started());
  ASSERT_TRUE(sh.WaitForOutput("ready\n", kMs)) << sh.output();
  const std::string nice_only = "0000000000800000";  // CAP_SYS_NICE
  // The guest may be ready before the sentry has started its threads (init goes on while the
  // sentry is made): wait for them, then look at every one.
  const std::string tasks = "/proc/" + std::to_string(sh.job()) + "/task";
  auto count = [&] {
    std::error_code ec;
    int n = 0;
    for (std::filesystem::directory_iterator it(tasks, ec), end; !ec && it != end; it.increment(ec))
      ++n;
    return n;
  };
  for (int i = 0; i < kMs / 10 && count() <= 2; ++i) usleep(10000);
  int threads = 0;
  for (const auto& t :
       std::filesystem::directory_iterator("/proc/" + std::to_string(sh.job()) + "/task")) {
    const pid_t tid = std::stoi(t.path().filename());
    ++threads;
    EXPECT_EQ(StatusField(sh.job(), tid, "CapEff"), nice_only) << "thread " << tid;
    EXPECT_EQ(StatusField(sh.job(), tid, "CapPrm"), nice_only) << "thread " << tid;
    // Real, effective, saved, filesystem: the sentry keeps uid 0 (it owns the guest's user
    // namespace) and checks files as the guest.
    EXPECT_EQ(StatusField(sh.job(), tid, "Uid"), "0\t0\t0\t65534") << "thread " << tid;
  }
  EXPECT_GT(threads, 2) << "workers and GPU threads started after the drop";
  kill(sh.job(), SIGTERM);
  EXPECT_EQ(Describe(sh.NextStatus(kMs)), "exited " + std::to_string(128 + SIGTERM));
}

// The sentry's credentials, applied by the same code in a child of this test: a pid that went
// to a host process (this test, root with every capability) cannot be written; the guest can.
TEST(LauncherPidReuse, SentryCredentialsReachTheGuestButNoHostProcess) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root's credentials to drop";
  JobShell sh({Sandboxed({JOB_GUEST_BIN, "wait"}), false, true});
  ASSERT_TRUE(sh.started());
  ASSERT_TRUE(sh.WaitForOutput("ready\n", kMs)) << sh.output();
  const pid_t guest = GuestOf(sh.job());
  ASSERT_GT(guest, 0);
  uint64_t guest_addr = 0;  // the start of the guest's first mapping
  std::ifstream(("/proc/" + std::to_string(guest) + "/maps").c_str()) >> std::hex >> guest_addr;
  ASSERT_NE(guest_addr, 0u);

  static volatile char canary[8] = "intact";
  absl::StatusOr<sentry::GuestIdentity> id = sentry::ChooseGuestIdentity({});
  ASSERT_TRUE(id.ok());
  int result[2];
  ASSERT_EQ(pipe(result), 0);
  const pid_t test = getpid();
  pid_t child = fork();
  if (child == 0) {
    int r[3] = {-1, -1, -1};
    r[0] = sentry::DropHostCapabilities(*id) == nullptr ? 0 : errno;
    char data[8] = "smashed";
    iovec local{data, sizeof data}, remote{const_cast<char*>(canary), sizeof data};
    r[1] = process_vm_writev(test, &local, 1, &remote, 1, 0) < 0 ? errno : 0;
    char buf[8];
    iovec l2{buf, sizeof buf}, r2{reinterpret_cast<void*>(guest_addr), sizeof buf};
    r[2] = process_vm_readv(guest, &l2, 1, &r2, 1, 0) < 0 ? errno : 0;
    (void)!write(result[1], r, sizeof r);
    _exit(0);
  }
  close(result[1]);
  int r[3] = {-1, -1, -1};
  ASSERT_EQ(read(result[0], r, sizeof r), static_cast<ssize_t>(sizeof r));
  close(result[0]);
  waitpid(child, nullptr, 0);
  EXPECT_EQ(r[0], 0) << "dropping: " << strerror(r[0]);
  EXPECT_EQ(r[1], EPERM) << "a host root process was writable";
  EXPECT_EQ(std::string(const_cast<const char*>(canary)), "intact");
  EXPECT_EQ(r[2], 0) << "the guest must stay reachable: " << strerror(r[2]);
  kill(sh.job(), SIGTERM);
  EXPECT_EQ(Describe(sh.NextStatus(kMs)), "exited " + std::to_string(128 + SIGTERM));
}

// --- the guest's view: --ro-root, --private-tmp, --bind, --ro-bind, --chdir, --no-network ---

// A scratch directory every identity may write (1777), with a file the guest's identity may
// write too: what a read-only root must protect although permissions allow it.
struct Scratch {
  std::string dir, file;
  Scratch() {
    char tmpl[] = "/tmp/nvs-view-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) return;
    dir = tmpl;
    chmod(dir.c_str(), 01777);
    file = dir + "/host-file";
    int fd = open(file.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
    (void)!write(fd, "host\n", 5);
    close(fd);
    chmod(file.c_str(), 0666);
  }
  ~Scratch() { RunProgram({{"rm", "-rf", dir}, {}}); }
  std::string Read(const std::string& path) const {
    std::ifstream in(path);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }
};

TEST(LauncherView, ReadOnlyRootProtectsWhatTheIdentityMayWrite) {
  Scratch s;
  const std::string write = "echo guest > " + s.file + " && touch " + s.dir + "/new";
  // Control: the guest's identity may write there.
  ASSERT_EQ(RunSandboxed({}, {"sh", "-c", write}).exit_code, 0);
  EXPECT_EQ(s.Read(s.file), "guest\n");
  RunResult r = RunSandboxed({"--ro-root"}, {"sh", "-c", "echo again > " + s.file});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("Read-only file system"), std::string::npos) << r.err;
  EXPECT_EQ(s.Read(s.file), "guest\n");
  // A --bind makes one place writable again; a --ro-bind of a writable place is not.
  r = RunSandboxed({"--ro-root", "--bind", s.dir, s.dir}, {"sh", "-c", "echo bound > " + s.file});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(s.Read(s.file), "bound\n");
  r = RunSandboxed({"--ro-bind", s.dir, s.dir}, {"sh", "-c", "echo ro > " + s.file});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(s.Read(s.file), "bound\n");
  // The terminal and /dev/null stay writable, /proc is the guest's own.
  ASSERT_GT(getpid(), 100);  // far above the guest's own pids
  r = RunSandboxed({"--ro-root"}, {"sh", "-c",
                                   "echo out; echo x > /dev/null && test -e /proc/1 && "
                                   "! test -e /proc/" +
                                       std::to_string(getpid()) + " && echo own-proc"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "out\nown-proc\n");
}

// Device nodes open only in the guest's /dev. A host keeps nodes elsewhere too (a chroot's /dev
// on disk, a second devtmpfs, a bind of /dev): here one named like an NVIDIA node and one named
// plainly, both /dev/zero's device, on the host's root filesystem. Before, the guest read zeros
// from both, under either device mode; an NVIDIA node there would have taken its ioctls.
TEST(LauncherView, DeviceNodesOutsideDevDoNotOpen) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to make a device node";
  Scratch s;
  for (const char* name : {"/nvhost-gpu", "/zero"}) {
    const std::string node = s.dir + name;
    ASSERT_EQ(mknod(node.c_str(), S_IFCHR | 0666, makedev(1, 5)), 0) << strerror(errno);
    chmod(node.c_str(), 0666);
  }
  for (const char* devices : {"--devices=files", "--devices=trap"}) {
    RunResult r = RunSandboxed(
        {devices}, {"sh", "-c",
                    "for n in " + s.dir + "/nvhost-gpu " + s.dir +
                        "/zero /dev/zero; do head -c 2 $n >/dev/null 2>&1; echo $n=$?; done; "
                        "python3 -c 'import pty; pty.openpty(); print(\"pty=0\")'"});
    ASSERT_EQ(r.exit_code, 0) << devices << r.out << r.err;
    auto kv = ParseKeyValues(r.out);
    EXPECT_EQ(kv[s.dir + "/nvhost-gpu"], "1") << devices << r.out;
    EXPECT_EQ(kv[s.dir + "/zero"], "1") << devices << r.out;
    // The guest's own /dev keeps its devices, pseudo-terminals included.
    EXPECT_EQ(kv["/dev/zero"], "0") << devices << r.out;
    EXPECT_EQ(kv["pty"], "0") << devices << r.out;
  }
}

// The guest's view is the host's at the start: a mount the host makes later is not in it (before,
// it came in through slave propagation with its own flags, writable under --ro-root). Played in
// a mount namespace of the test's own, shared within itself, as a host with shared mounts is.
TEST(LauncherView, AMountTheHostMakesLaterIsNotTheGuests) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to mount";
  Scratch s;
  const std::string late = s.dir + "/late";
  ASSERT_EQ(mkdir(late.c_str(), 01777), 0);
  EXPECT_EXIT(
      {
        if (unshare(CLONE_NEWNS) != 0 ||
            mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
            mount(nullptr, "/", nullptr, MS_REC | MS_SHARED, nullptr) != 0)
          _exit(3);
        Child nvsentry(
            {{NvsentryPath(), "run", "--ro-root", "--", "sh", "-c",
              "echo started; read go; grep -c ' " + late + " ' /proc/self/mountinfo; echo x > " +
                  late + "/guest 2>/dev/null; echo wrote=$?"},
             {},
             kMs,
             true});
        if (!nvsentry.WaitForOutput("started", kMs)) _exit(4);
        if (mount("late", late.c_str(), "tmpfs", 0, "mode=1777") != 0) _exit(5);
        nvsentry.WriteStdin("go\n");
        RunResult r = nvsentry.Finish(kMs);
        fprintf(stderr, "%s%s", r.out.c_str(), r.err.c_str());
        const bool guest_wrote = access((late + "/guest").c_str(), F_OK) == 0;
        umount2(late.c_str(), MNT_DETACH);
        // Not in its mount table; the write fails (the read-only directory under it).
        const bool unseen =
            r.out.starts_with("started\n0\nwrote=") && r.out.find("wrote=0") == std::string::npos;
        _exit(unseen && !guest_wrote ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

// The mount table of this process's namespace: each mount's id and "mount point fstype".
std::map<int, std::string> MountTable() {
  std::ifstream in("/proc/self/mountinfo");
  std::map<int, std::string> rows;
  for (std::string line; std::getline(in, line);) {
    std::istringstream f(line);
    int id = -1;
    std::string parent, dev, root, point;
    f >> id >> parent >> dev >> root >> point;
    const size_t dash = line.find(" - ");
    std::istringstream t(dash == std::string::npos ? "" : line.substr(dash + 3));
    std::string type;
    t >> type;
    rows[id] = point + " " + type;
  }
  return rows;
}

// A mount point as mountinfo escapes it (space, tab, newline, backslash as \ooo), unescaped.
std::string Unescaped(const std::string& point) {
  std::string out;
  for (size_t i = 0; i < point.size(); ++i) {
    if (point[i] == '\\' && i + 3 < point.size()) {
      out += static_cast<char>(std::stoi(point.substr(i + 1, 3), nullptr, 8));
      i += 3;
    } else {
      out += point[i];
    }
  }
  return out;
}

// Whether `now` is `before` with nothing added or changed, and nothing removed but mounts whose
// mount point is gone. The namespace is a copy of the host's, so it holds copies of other
// processes' mounts (another test's FUSE server on a directory under /tmp, say): when that
// process unmounts and removes the directory, the kernel detaches the copy here too (since Linux
// 3.18 a mount point deleted in one namespace takes its mounts out of every other). That is not
// the sandbox's doing; a mount the sandbox made or removed here is.
bool SameMounts(const char* when, const std::map<int, std::string>& before,
                const std::map<int, std::string>& now) {
  bool same = true;
  for (const auto& [id, row] : now) {
    auto was = before.find(id);
    if (was == before.end() || was->second != row) {
      fprintf(stderr, "new %s: %d %s\n", when, id, row.c_str());
      same = false;
    }
  }
  for (const auto& [id, row] : before) {
    if (now.contains(id)) continue;
    struct stat st {};
    const std::string point = Unescaped(row.substr(0, row.rfind(' ')));
    // Removed outside: gone, or (the kernel detaches the mounts just before it unhashes the name)
    // an inode with no link left.
    if (lstat(point.c_str(), &st) != 0 ? errno == ENOENT : st.st_nlink == 0) continue;
    fprintf(stderr, "gone %s: %d %s\n", when, id, row.c_str());
    same = false;
  }
  return same;
}

// In a child of the test, in a mount namespace of its own (so that a sandbox that did mount there
// changes nothing of the machine's): runs a guest with `options` and exits 0 if this namespace's
// mount table stayed the same while the guest ran and after.
[[noreturn]] void RunAndCompareMountTables(const std::vector<std::string>& options) {
  if (unshare(CLONE_NEWNS) != 0 || mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
    _exit(3);
  const std::map<int, std::string> before = MountTable();
  std::vector<std::string> argv = {NvsentryPath(), "run", "--private-tmp"};
  argv.insert(argv.end(), options.begin(), options.end());
  for (const char* a : {"--", "sh", "-c", "echo started; read go; echo done"}) argv.push_back(a);
  Child nvsentry({argv, {}, kMs, true});
  if (!nvsentry.WaitForOutput("started", kMs)) _exit(4);
  const bool same_during = SameMounts("while it ran", before, MountTable());
  nvsentry.WriteStdin("go\n");
  RunResult r = nvsentry.Finish(kMs);
  const bool same_after = SameMounts("after it ran", before, MountTable());
  if (!same_during || !same_after) _exit(1);
  _exit(r.exit_code == 0 && r.out == "started\ndone\n" ? 0 : 5);
}

// Init builds the guest's view in a mount namespace of its own, which it makes itself before
// anything else: none of it (/dev's filesystem, /proc, the private /tmp) shows in the namespace
// nvsentry was started in, while the guest runs or after. With --host-root too, where init is
// the host's root.
TEST(LauncherView, TheGuestsMountsNeverReachTheNamespaceItWasStartedIn) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root for a mount namespace of the test's own";
  EXPECT_EXIT(RunAndCompareMountTables({}), ::testing::ExitedWithCode(0), "") << "defaults";
  EXPECT_EXIT(RunAndCompareMountTables({"--host-root"}), ::testing::ExitedWithCode(0), "")
      << "--host-root";
}

TEST(LauncherView, PrivateTmpHidesAndKeepsNothing) {
  Scratch s;  // under the host's /tmp
  RunResult r =
      RunSandboxed({"--private-tmp"},
                   {"sh", "-c",
                    "ls -A /tmp /var/tmp /dev/shm | wc -l; test -e " + s.file +
                        " || echo hidden; "
                        "echo x > /tmp/guest-file && echo x > /dev/shm/guest-shm && echo written"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "5\nhidden\nwritten\n") << "three headers and two blank lines: all empty";
  EXPECT_NE(access("/tmp/guest-file", F_OK), 0);
  EXPECT_NE(access("/dev/shm/guest-shm", F_OK), 0);
}

TEST(LauncherView, BindsFindTheirSourceOnTheHostAndMakeMountPointsOnlyInThePrivateTmp) {
  Scratch s;
  // The source lies under the host's /tmp, which --private-tmp hides: still found.
  RunResult r = RunSandboxed({"--private-tmp", "--ro-bind", s.dir, "/tmp/in/here"},
                             {"cat", "/tmp/in/here/host-file"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "host\n");
  // No mount point is ever made in the host's tree.
  r = RunSandboxed({"--bind", s.dir, s.dir + "/missing"}, {"true"});
  EXPECT_EQ(r.exit_code, 125);
  EXPECT_NE(r.err.find("does not exist"), std::string::npos) << r.err;
  EXPECT_NE(access((s.dir + "/missing").c_str(), F_OK), 0);
  r = RunSandboxed({"--bind", s.dir + "/nope", "/tmp"}, {"true"});
  EXPECT_EQ(r.exit_code, 125);
  EXPECT_NE(r.err.find("No such file"), std::string::npos) << r.err;
  r = RunSandboxed({"--bind", s.file, "/tmp"}, {"true"});
  EXPECT_EQ(r.exit_code, 125);
  EXPECT_NE(r.err.find("directory"), std::string::npos) << r.err;
  r = RunSandboxed({"--bind", s.dir, "relative"}, {"true"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("absolute"), std::string::npos) << r.err;
}

TEST(LauncherView, WorkingDirectory) {
  RunResult r = RunSandboxed({"--chdir", "/usr"}, {"pwd"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "/usr\n");
  r = RunSandboxed({"--chdir", "/nonexistent"}, {"pwd"});
  EXPECT_EQ(r.exit_code, 125);
  EXPECT_NE(r.err.find("--chdir /nonexistent"), std::string::npos) << r.err;
  // The caller's directory, hidden by --private-tmp: the guest starts in / (never in the host's
  // directory under the mount).
  Scratch s;
  RunSpec spec;
  spec.argv = {"sh", "-c",
               "cd " + s.dir + " && exec " + std::string(NvsentryPath()) +
                   " run --private-tmp -- sh -c 'pwd; ls'"};
  r = RunProgram(spec);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.substr(0, 2), "/\n") << r.out;
  EXPECT_EQ(r.out.find("host-file"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("not reachable in the sandbox"), std::string::npos) << r.err;
}

// What --no-network must cut: the host's loopback services and its abstract unix sockets (where
// X11 and D-Bus listen, guarded by no file permission).
TEST(LauncherView, NoNetworkReachesNeitherTheHostsLoopbackNorItsAbstractSockets) {
  int tcp = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in in{};
  in.sin_family = AF_INET;
  in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(tcp, reinterpret_cast<sockaddr*>(&in), sizeof in), 0);
  ASSERT_EQ(listen(tcp, 8), 0);
  socklen_t len = sizeof in;
  getsockname(tcp, reinterpret_cast<sockaddr*>(&in), &len);
  const std::string port = std::to_string(ntohs(in.sin_port));
  const std::string name = "nvsentry-test-" + std::to_string(getpid());
  int unix_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un un{};
  un.sun_family = AF_UNIX;
  memcpy(un.sun_path + 1, name.data(), name.size());
  ASSERT_EQ(bind(unix_fd, reinterpret_cast<sockaddr*>(&un),
                 static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size())),
            0);
  ASSERT_EQ(listen(unix_fd, 8), 0);

  auto shared = ParseKeyValues(RunSandboxed({}, {NET_GUEST_BIN, port, name}).out);
  EXPECT_EQ(shared["tcp"], "0/0") << "control: the host's network is shared by default";
  EXPECT_EQ(shared["unix"], "0/0");
  auto cut = ParseKeyValues(RunSandboxed({"--no-network"}, {NET_GUEST_BIN, port, name}).out);
  EXPECT_EQ(cut["tcp"], "-1/" + std::to_string(ECONNREFUSED));
  EXPECT_EQ(cut["unix"], "-1/" + std::to_string(ECONNREFUSED));
  EXPECT_EQ(cut["ifaces"], "1") << "loopback only";
  close(tcp);
  close(unix_fd);
}

}  // namespace
}  // namespace nvsentry::testing
