#include "sentry/fake_l4t/fake_l4t_program.h"

#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <future>
#include <thread>

#include "abi/ioctl_code.h"
#include "hostshim/unique_fd.h"
#include "sentry/fake_l4t/fake_l4t_codes.h"
#include "sentry/fake_l4t/traced_call.h"
#include "spdlog/spdlog.h"

namespace nvsentry::sentry {
namespace {

using hostshim::UniqueFd;
using hostshim::fake_l4t::FakeJetson;

// The filter: every code of FdHandingCodes() on ioctl stops the caller for its tracer (the
// fake); everything else, other architectures' calls included, is allowed. Built before the fork
// (libseccomp allocates).
bool BuildFilter(std::vector<sock_filter>* out) {
  scmp_filter_ctx c = seccomp_init(SCMP_ACT_ALLOW);
  if (c == nullptr) return false;
  bool ok = seccomp_attr_set(c, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_ALLOW) == 0;
  for (uint32_t code : FdHandingCodes())
    ok = ok && seccomp_rule_add(c, SCMP_ACT_TRACE(0), SCMP_SYS(ioctl), 1,
                                SCMP_A1(SCMP_CMP_MASKED_EQ, 0xFFFFFFFF, code)) == 0;
  const int mem = memfd_create("fake-l4t-bpf", MFD_CLOEXEC);
  ok = ok && mem >= 0 && seccomp_export_bpf(c, mem) == 0;
  seccomp_release(c);
  const off_t len = ok ? lseek(mem, 0, SEEK_END) : -1;
  ok = len > 0 && len % sizeof(sock_filter) == 0;
  if (ok) {
    out->resize(static_cast<size_t>(len) / sizeof(sock_filter));
    ok = pread(mem, out->data(), static_cast<size_t>(len), 0) == len;
  }
  if (mem >= 0) close(mem);
  return ok;
}

// In the child, between fork and exec: only async-signal-safe calls. `report` says when the
// filter is on (or why not); the parent attaches, then says go.
[[noreturn]] void StartChild(const std::vector<sock_filter>& prog, char* const* argv, int report) {
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);  // the fake's blocked signals are its own
  sock_fprog fprog{static_cast<unsigned short>(prog.size()), const_cast<sock_filter*>(prog.data())};
  // Root needs no NO_NEW_PRIVS (CAP_SYS_ADMIN): PROGRAM keeps what exec would give it.
  if (geteuid() != 0) prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  const int err = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fprog) == 0 ? 0 : errno;
  if (write(report, &err, sizeof err) != sizeof err || err != 0) _exit(1);
  char go = 0;
  if (read(report, &go, 1) != 1) _exit(1);
  close(report);
  execvp(argv[0], argv);
  _exit(errno == ENOENT ? 127 : 126);
}

// The exit status of a wait status, as a shell reports it.
int ExitStatus(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;
}

bool IsStopSignal(int sig) {
  return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

// Serves every stop of every tracee until none is left; `child`'s wait status goes to `ended` when
// it ends (its threads and children may outlive it, holding files, and must not stay stopped).
void Trace(pid_t child, const TracedServer& server, std::promise<int>& ended) {
  bool child_ended = false;
  for (;;) {
    int st = 0;
    const pid_t pid = waitpid(-1, &st, __WALL);
    if (pid < 0) {
      if (errno == EINTR) continue;
      break;  // ECHILD: nothing left to trace
    }
    if (WIFEXITED(st) || WIFSIGNALED(st)) {
      if (pid == child && !child_ended) {
        child_ended = true;
        ended.set_value(st);
      }
      continue;
    }
    if (!WIFSTOPPED(st)) continue;
    const int sig = WSTOPSIG(st);
    const int event = st >> 16;
    if (sig == SIGTRAP && event == PTRACE_EVENT_SECCOMP) {
      ServeTracedCall(server, pid);
    } else if (event == PTRACE_EVENT_STOP) {
      // A group stop waits (for SIGCONT) in PTRACE_LISTEN; a new tracee's first stop goes on.
      ptrace(IsStopSignal(sig) ? PTRACE_LISTEN : PTRACE_CONT, pid, 0, 0);
    } else if (sig == SIGTRAP && event != 0) {
      ptrace(PTRACE_CONT, pid, 0, 0);  // fork, clone, exec
    } else if (sig == (SIGTRAP | 0x80)) {
      ptrace(PTRACE_CONT, pid, 0, 0);  // a system call stop nobody asked for
    } else {
      ptrace(PTRACE_CONT, pid, 0, sig);  // a signal: delivered as without the fake
    }
  }
  if (!child_ended) ended.set_value(1 << 8);  // its end was missed: exit status 1
}

// Forks PROGRAM under the filter and attaches to it before it execs: its pid, or -1 (said on
// standard error).
pid_t StartTraced(const std::vector<sock_filter>& prog, std::vector<char*>& cargv,
                  const char* name) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    perror("nvsentry fake-l4t: socketpair");
    return -1;
  }
  const pid_t child = fork();
  if (child < 0) {
    perror("nvsentry fake-l4t: fork");
    return -1;
  }
  if (child == 0) {
    close(sv[0]);
    StartChild(prog, cargv.data(), sv[1]);
  }
  close(sv[1]);
  const UniqueFd report(sv[0]);
  int err = EIO;
  if (read(report.get(), &err, sizeof err) == sizeof err && err == 0) {
    // Every thread and child PROGRAM makes is traced from its start: a trapped call of one the
    // fake did not trace would fail (ENOSYS).
    const long options = PTRACE_O_TRACESECCOMP | PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK |
                         PTRACE_O_TRACEVFORK | PTRACE_O_TRACEEXEC | PTRACE_O_TRACESYSGOOD;
    if (ptrace(PTRACE_SEIZE, child, 0, options) != 0) err = errno;
  }
  if (err != 0) {
    fprintf(stderr, "nvsentry fake-l4t: cannot serve %s: %s\n", name, strerror(err));
    kill(child, SIGKILL);
    waitpid(child, nullptr, 0);
    return -1;
  }
  const char go = 1;
  (void)!write(report.get(), &go, 1);
  return child;
}

}  // namespace

int ServeProgram(const std::string& dir, dev_t dev, FakeJetson& fake,
                 const std::vector<std::string>& argv) {
  std::vector<sock_filter> prog;
  if (!BuildFilter(&prog)) {
    fprintf(stderr, "nvsentry fake-l4t: cannot build the seccomp filter (libseccomp)\n");
    return 1;
  }
  std::vector<char*> cargv;
  for (const std::string& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  // The tracer is one thread (ptrace requests come from the thread that attached): it starts
  // PROGRAM, and serves it and whatever it starts until all have ended.
  auto* ended = new std::promise<int>;  // both live on with the tracer
  auto* server = new TracedServer{dir, dev, fake};
  std::future<int> status = ended->get_future();
  std::thread([server, cargv = std::move(cargv), prog = std::move(prog), ended]() mutable {
    const pid_t child = StartTraced(prog, cargv, cargv[0]);
    if (child < 0) {
      ended->set_value(1 << 8);
      return;
    }
    Trace(child, *server, *ended);
  }).detach();
  return ExitStatus(status.get());
}

}  // namespace nvsentry::sentry
