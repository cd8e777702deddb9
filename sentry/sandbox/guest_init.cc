#include "sentry/sandbox/guest_init.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "sentry/process/startup_marks.h"
#include "sentry/sandbox/fd_passing.h"
#include "sentry/sandbox/guest_exec.h"
#include "sentry/sandbox/guest_network.h"

namespace nvsentry::sentry {
namespace {

[[noreturn]] void FailWith(int control_fd, const char* message) {
  SendWithFd(control_fd, message, -1).IgnoreError();  // exiting anyway: the launcher sees EOF
  _exit(125);
}

[[noreturn]] void Fail(int control_fd, const char* what, int err) {
  char msg[1024];
  snprintf(msg, sizeof msg, "%s: %s", what, strerror(err));
  FailWith(control_fd, msg);
}

void SendListener(int control_fd, int listener, bool killable) {
  if (!SendWithFd(control_fd, killable ? "ok:killable" : "ok", listener).ok()) _exit(125);
}

// The sentry's next word on the control socket; false at its end (the sentry gave up).
bool AwaitWord(int control_fd) {
  char word[8];
  ssize_t n;
  do n = recv(control_fd, word, sizeof word, 0);
  while (n < 0 && errno == EINTR);
  return n > 0;
}

// The same, for a word due within some 0.1 ms, from the sentry on another CPU: asked for until
// it comes (for at most kSpinNs, then waited for). Blocked, init's CPU went idle and the word's
// wake-up took it 0.03-0.12 ms (2-CPU VM). With one CPU (`cpus`, nvsentry's), init waits at once.
bool AwaitWordSoon(int control_fd, const cpu_set_t& cpus) {
  constexpr long kSpinNs = 500'000;
  if (CPU_COUNT(&cpus) > 1) {
    timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    do {
      char word[8];
      const ssize_t n = recv(control_fd, word, sizeof word, MSG_DONTWAIT);
      if (n >= 0) return n > 0;
      if (errno != EAGAIN && errno != EINTR) return false;
      sched_yield();  // should init share the sentry's CPU, the sentry goes first
      clock_gettime(CLOCK_MONOTONIC, &now);
    } while ((now.tv_sec - start.tv_sec) * 1'000'000'000L + (now.tv_nsec - start.tv_nsec) <
             kSpinNs);
  }
  return AwaitWord(control_fd);
}

void Report(int status_fd, InitReport::Kind kind, int value) {
  const InitReport r{kind, value};
  (void)!write(status_fd, &r, sizeof r);
}

// `lost_workdir`: the directory the guest could not start in (it starts in /), or null.
[[noreturn]] void ExecGuest(const GuestInitArgs& a, const char* lost_workdir) {
  StartupMark("guest: exec");
  sigprocmask(SIG_SETMASK, &a.guest_sigmask, nullptr);
  ExecGuestProgram(a.argv, {a.refused_advice.c_str(), lost_workdir});
}

// The guest program's own user and mount namespaces, one level below init's. Mounts copied into
// a mount namespace of a less privileged user namespace are locked to each other (MNT_LOCKED) and
// so are their flags: whatever mount calls the filter does not know (new ones come with kernel
// releases: open_tree_attr, say), the guest can neither clone a directory without the mount that
// covers a node in it, nor clear a read-only flag. The uid and gid maps are the identity: the
// guest is the same root as before, init keeps its own namespaces.
//
// In init: the child's maps, "0 0 1" (init, root of the parent namespace, may write any).
bool MapLockedNamespaces(pid_t child) {
  for (const char* name : {"uid_map", "gid_map"}) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/%s", child, name);
    const int fd = open(path, O_WRONLY | O_CLOEXEC);
    const bool ok = fd >= 0 && write(fd, "0 0 1\n", 6) == 6;
    const int err = errno;
    if (fd >= 0) close(fd);
    if (!ok) {
      fprintf(stderr, "nvsentry: %s the program's %s: %s\n", fd < 0 ? "opening" : "writing", name,
              strerror(err));
      return false;
    }
  }
  return true;
}

// The program is born in them (clone, not fork and then unshare: init writes the maps at once,
// instead of waiting to hear that the namespaces exist). Init's /proc files of a child are its to
// write only while the child is dumpable, which the child takes from init (and, sharing init's
// memory, shares with it until its exec): init is dumpable from the clone until the maps are
// written (nothing of the guest runs yet) and the exec decides afresh for the program.
//
// The child shares init's memory until its exec, as posix_spawn's does: a fork would copy init's
// page tables (those of a copy of the sentry) only for the exec to tear them down (0.15-0.2 ms of
// the start, measured on a 2-CPU VM). It runs on a stack of its own, and init touches nothing the
// two share (errno included) from the moment the child may run on until it has exec'd or exited.
struct GuestStart {
  const GuestInitArgs* args;
  int status_fd, sentry_stat;
  int mapped[2];  // a pipe: init writes byte 1 once the maps are written (lock only)
  int execd[2];   // a pipe whose write end the exec closes: init waits for its end of file
  bool lock;
  const char* lost_workdir = nullptr;  // ExecGuest's
};

[[noreturn]] int RunGuestChild(void* arg) {
  const GuestStart& g = *static_cast<const GuestStart*>(arg);
  close(g.status_fd);
  if (g.sentry_stat >= 0) close(g.sentry_stat);
  close(g.execd[0]);
  if (g.lock) {
    // On once init has written the maps (byte 1); a child that cannot exits 125, which init
    // reports as the guest's exit.
    char byte = 0;
    close(g.mapped[1]);
    if (read(g.mapped[0], &byte, 1) != 1 || byte != 1) _exit(125);
    close(g.mapped[0]);
    StartupMark("guest: namespaces locked");
  }
  ExecGuest(*g.args, g.lost_workdir);
}

// In init: the guest program's pid once it has exec'd (or exited), or -1 (errno says why). With
// `g.lock`, in namespaces of its own whose maps init writes here.
pid_t StartGuestProgram(GuestStart& g) {
  // As large as a main thread's: the exec's path search takes a PATH's length of it, and its
  // retry of a script a pointer per argument (glibc's execvp, in arrays on the stack). Only the
  // pages touched are ever allocated.
  constexpr size_t kStack = 8 << 20;
  void* stack = mmap(nullptr, kStack, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK | MAP_NORESERVE, -1, 0);
  if (stack == MAP_FAILED) return -1;
  const int was = prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
  if (g.lock) prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
  const int flags = CLONE_VM | SIGCHLD | (g.lock ? CLONE_NEWUSER | CLONE_NEWNS : 0);
  const pid_t pid = clone(RunGuestChild, static_cast<char*>(stack) + kStack, flags, &g);
  const int err = errno;
  char byte = 0;
  if (g.lock) {
    // The child waits for the byte meanwhile.
    byte = pid > 0 && MapLockedNamespaces(pid) ? 1 : 0;
    // Back to what it was; 2 (fs.suid_dumpable = 2 after init's change of ids) cannot be set
    // again and means "not the user's" anyway: 0. (Setting 2 fails, which left init dumpable.)
    prctl(PR_SET_DUMPABLE, was == 1 ? 1 : 0, 0, 0, 0);
  }
  close(g.execd[1]);
  if (pid < 0) {
    errno = err;
    return -1;
  }
  // The child runs on from here: nothing but these calls until the exec's end of file.
  if (g.lock) (void)!write(g.mapped[1], &byte, 1);
  char none;
  ssize_t n;
  do n = read(g.execd[0], &none, 1);
  while (n < 0 && errno == EINTR);
  close(g.execd[0]);
  if (g.lock) {
    close(g.mapped[0]);
    close(g.mapped[1]);
  }
  munmap(stack, kStack);
  return pid;
}

// The state letter of /proc/PID/stat (after the command name, which may hold spaces and ')').
char ProcessState(int stat_fd) {
  char buf[512];
  ssize_t n = pread(stat_fd, buf, sizeof buf - 1, 0);
  if (n <= 0) return '?';
  buf[n] = 0;
  const char* close_paren = strrchr(buf, ')');
  return close_paren != nullptr && close_paren[1] == ' ' ? close_paren[2] : '?';
}

// Whether init still has a child, alive or not yet reaped (those that are gone are reaped here).
bool HasChildrenLeft() {
  for (;;) {
    const pid_t p = waitpid(-1, nullptr, WNOHANG | __WALL);
    if (p > 0 || (p < 0 && errno == EINTR)) continue;
    return p == 0 || errno != ECHILD;
  }
}

// The guest program's job-control state, as init tracks it.
struct GuestState {
  pid_t pid;
  bool stopped = false;   // stopped, as waitpid last said
  bool mirrored = false;  // stopped by init because the sentry was stopped: not reported
};

void Reap(int status_fd, GuestState& g) {
  int st;
  pid_t p;
  while ((p = waitpid(-1, &st, WNOHANG | WUNTRACED | WCONTINUED)) > 0) {
    if (p != g.pid) continue;  // orphans of the guest: only reaped
    if (WIFEXITED(st) || WIFSIGNALED(st)) {
      StartupMark("init: the guest exited");
      // The rest of the guest ends now, as it would when init exits, and is reaped here: the
      // report then says the whole guest is gone, and the sentry need not wait for init's own
      // end (its namespaces' teardown, some 0.6 ms; docs/benchmarks.md).
      // (Only if anything is left: a process of the namespace is init's child or has a live
      // ancestor that is, and kill(-1) walks every process of the host.)
      if (HasChildrenLeft()) {
        kill(-1, SIGKILL);
        while (waitpid(-1, nullptr, __WALL) > 0 || errno == EINTR) {
        }
      }
      Report(status_fd, InitReport::kGuestExited, st);
      _exit(0);
    }
    if (WIFSTOPPED(st)) {
      g.stopped = true;
      // nvsentry stands in for the guest towards its shell: it stops itself with this signal.
      if (!g.mirrored) Report(status_fd, InitReport::kGuestStopped, WSTOPSIG(st));
    } else if (WIFCONTINUED(st)) {
      g.stopped = false;
      g.mirrored = false;
    }
  }
}

// Init's own state before it sets up anything of the guest's: its mount namespace, the CPUs,
// its identity, the guest's limits, no_new_privs and its own process group.
void BecomeGuestInit(const GuestInitArgs& a) {
  // Its own mount namespace, owned by its user namespace (the sentry cloned it into the others):
  // first, before anything looks at a path. With --host-root, root's own.
  if (unshare(CLONE_NEWNS) != 0) Fail(a.control_fd, "creating the guest's mount namespace", errno);
  // The sentry moved init off its own CPU for the start (launcher.cc): the guest gets the CPUs
  // nvsentry had.
  if (CPU_COUNT(&a.guest_cpus) > 0 && sched_setaffinity(0, sizeof a.guest_cpus, &a.guest_cpus) != 0)
    Fail(a.control_fd, "giving the guest nvsentry's CPUs", errno);
  if (a.identity.user_ns) {
    if (const char* what = BecomeGuestRoot(a.identity)) Fail(a.control_fd, what, errno);
    // A change of credentials clears the parent-death signal: set it again. (The sentry cannot
    // have died meanwhile unnoticed: it holds the other end of control_fd, checked below.)
    prctl(PR_SET_PDEATHSIG, SIGKILL);
  }
  // The host's pids are shared: a guest that forks (or leaves zombies) without end would take
  // them all. RLIMIT_NPROC counts this user namespace's tasks (threads and unreaped zombies
  // too); its root holds no CAP_SYS_RESOURCE over the host, so it cannot raise it. (With
  // --host-root the kernel exempts root: no limit.)
  if (a.max_tasks != 0) {
    const rlimit tasks = {a.max_tasks, a.max_tasks};
    if (setrlimit(RLIMIT_NPROC, &tasks) != 0)
      Fail(a.control_fd, "setting RLIMIT_NPROC (--max-tasks)", errno);
  }
  // Whatever the guest execs, it gains no privilege (setuid and file capabilities do nothing).
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
    Fail(a.control_fd, "setting no_new_privs", errno);
  // Out of nvsentry's group: a guest's kill(0, ...) reaches only the guest.
  setpgid(0, 0);
}

// The sentry's state, from the host's /proc (before this namespace's /proc covers it): an fd of
// its main thread's stat file (a group stop stops them all: cheaper than the whole process's),
// or -1.
int OpenSentryStat(pid_t sentry_pid) {
  char stat_path[64];
  snprintf(stat_path, sizeof stat_path, "/proc/%d/task/%d/stat", sentry_pid, sentry_pid);
  return open(stat_path, O_RDONLY | O_CLOEXEC);
}

// The guest's view: its mounts, its loopback, its working directory. Whether the working
// directory was lost (the guest then starts in /, and its exec errors say so).
bool SetUpGuestView(const GuestInitArgs& a) {
  // The device files' mount points are listed by the sentry meanwhile: it says so ("dev").
  if (std::string e =
          SetUpGuestMounts(a.mounts, [&a] { return AwaitWordSoon(a.control_fd, a.guest_cpus); });
      !e.empty())
    FailWith(a.control_fd, e.c_str());
  if (a.loopback)
    if (const char* what = BringUpLoopback()) Fail(a.control_fd, what, errno);
  // The path again, in the guest's view (the inherited directory may lie under a mount now).
  const bool lost_workdir = !a.workdir.empty() && chdir(a.workdir.c_str()) != 0;
  if (lost_workdir) {
    const int err = errno;
    // Refused to the guest's identity: who it is, and what to do.
    const std::string why =
        std::string(strerror(err)) +
        (err == EACCES && !a.refused_advice.empty() ? ": " + a.refused_advice : "");
    if (a.workdir_required) FailWith(a.control_fd, ("--chdir " + a.workdir + ": " + why).c_str());
    fprintf(stderr, "nvsentry: %s is not reachable in the sandbox (%s); the program starts in /\n",
            a.workdir.c_str(), why.c_str());
    if (chdir("/") != 0) Fail(a.control_fd, "changing to /", errno);
  }
  return lost_workdir;
}

// Installs the seccomp filter on init and hands its listener to the sentry; the control socket's
// last use.
void HandOverListener(const GuestInitArgs& a) {
  bool killable = false;
  int listener = LoadGuestFilter(*a.filter, &killable);
  // Linux lets a process's filters have one listener in all: EBUSY when a supervisor above
  // nvsentry already has one (a seccomp-notify sandbox, `nvsentry fake-l4t DIR -- PROGRAM`).
  if (listener == -EBUSY)
    FailWith(a.control_fd,
             "installing the seccomp filter: another seccomp supervisor (a filter with a "
             "listener) already watches this process, and Linux allows one per process; run "
             "nvsentry outside it");
  if (listener < 0) Fail(a.control_fd, "installing the seccomp filter", -listener);
  StartupMark("init: filter loaded");
  SendListener(a.control_fd, listener, killable);
  close(listener);
  close(a.control_fd);
}

// The guest program, started; init exits (reporting exit status 125) when it cannot be.
GuestState StartGuestOrExit(const GuestInitArgs& a, int sentry_stat, bool lost_workdir) {
  // (--host-root keeps the host's root: no namespace.)
  GuestStart start{&a,
                   a.status_fd,
                   sentry_stat,
                   {-1, -1},
                   {-1, -1},
                   a.identity.user_ns,
                   lost_workdir ? a.workdir.c_str() : nullptr};
  if (pipe2(start.execd, O_CLOEXEC) != 0 || (start.lock && pipe2(start.mapped, O_CLOEXEC) != 0)) {
    Report(a.status_fd, InitReport::kGuestExited, 125 << 8);  // reported as exit status 125
    _exit(125);
  }
  StartupMark("init: forking the guest");
  GuestState guest{StartGuestProgram(start)};
  if (guest.pid < 0) {
    fprintf(stderr, "nvsentry: starting the program%s: %s\n",
            start.lock ? " in its own namespaces" : "", strerror(errno));
    Report(a.status_fd, InitReport::kGuestExited, 125 << 8);
    _exit(125);
  }
  return guest;
}

// Until the guest program exits (Reap then ends init): reaps, mirrors a SIGSTOP of nvsentry's
// and passes on the signals the sentry sent, which `wait_set` holds blocked.
[[noreturn]] void SuperviseGuest(int status_fd, GuestState& guest, const sigset_t& wait_set,
                                 int sentry_stat) {
  const timespec tick{0, kSentryWatchMs * 1000000L};
  for (;;) {
    siginfo_t si;
    int sig = sigtimedwait(&wait_set, &si, &tick);
    if (sig < 0) {
      // A SIGSTOP sent to nvsentry: stop the whole guest too (kill(-1) spares init). The
      // sentry's SIGCONT, forwarded when it is continued, continues it.
      if (errno == EAGAIN && !guest.stopped && !guest.mirrored && sentry_stat >= 0 &&
          ProcessState(sentry_stat) == 'T') {
        guest.mirrored = true;
        kill(-1, SIGSTOP);
      }
      continue;
    }
    if (sig == SIGCHLD) {
      Reap(status_fd, guest);
      continue;
    }
    // Act only on what the sentry sent (a sender outside this namespace shows as pid 0); the
    // terminal's own signals reached the guest's group, init included, directly.
    if (si.si_code != SI_USER || si.si_pid != 0) continue;
    if (sig == SIGCONT) {
      // nvsentry was continued: so is everything of the guest that was stopped with it.
      kill(guest.mirrored ? -1 : 0, SIGCONT);
      guest.mirrored = false;
    } else {
      kill(guest.pid, sig);
    }
  }
}

}  // namespace

void RunGuestInit(const GuestInitArgs& a) {
  if (a.device_connection >= 0) close(a.device_connection);
  // If the sentry dies, so does init, and with it the whole PID namespace.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  // The sentry has made this process a group of its own and handed it the terminal, if nvsentry
  // was its foreground job; then it says go. (EOF: the sentry gave up.)
  if (!AwaitWordSoon(a.control_fd, a.guest_cpus)) _exit(125);
  StartupMark("init: go");
  BecomeGuestInit(a);
  const int sentry_stat = OpenSentryStat(a.sentry_pid);
  StartupMark("init: guest root");
  const bool lost_workdir = SetUpGuestView(a);
  StartupMark("init: mounts made");
  HandOverListener(a);
  // The sentry blocked these before cloning us; init takes them synchronously.
  sigset_t wait_set;
  sigemptyset(&wait_set);
  sigaddset(&wait_set, SIGCHLD);
  sigaddset(&wait_set, SIGCONT);
  for (int s : kForwardedSignals) sigaddset(&wait_set, s);
  GuestState guest = StartGuestOrExit(a, sentry_stat, lost_workdir);
  SuperviseGuest(a.status_fd, guest, wait_set, sentry_stat);
}

}  // namespace nvsentry::sentry
