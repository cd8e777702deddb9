#include "sentry/process/teardown_handoff.h"

#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace nvsentry::sentry {
namespace {

// The clone's stack: it makes two system calls.
alignas(64) char g_stack[16384];
int g_pidfd = -1;  // this process, as the clone waits for it

// Raw system calls only: the clone shares the exiting thread's TLS and must not depend on it.
int WaitThenEnd(void*) {
  pollfd p{g_pidfd, POLLIN, 0};
  while (syscall(SYS_poll, &p, 1, -1) < 0) {
  }
  syscall(SYS_exit, 0);
  return 0;
}

}  // namespace

void HandOffTeardown() {
  g_pidfd = static_cast<int>(syscall(SYS_pidfd_open, getpid(), 0));
  if (g_pidfd < 0) return;
  // SIGCHLD: whoever inherits the clone (the host's init, a subreaper) reaps it as any orphan.
  const int clone_pid =
      clone(WaitThenEnd, g_stack + sizeof g_stack, CLONE_VM | CLONE_FILES | SIGCHLD, nullptr);
  if (clone_pid < 0) {
    close(g_pidfd);
    return;
  }
  // A process group of its own, before this process can end: the job's signals (a shell's or a
  // harness's SIGSTOP to the group, the terminal's) do not reach it once nvsentry's parent has
  // seen the end and continues nothing; and a clone stopped before this (a SIGSTOP that stopped
  // nvsentry too) is in a group the kernel continues (SIGHUP, blocked here, and SIGCONT) when
  // this process's exit orphans it.
  setpgid(clone_pid, clone_pid);
}

}  // namespace nvsentry::sentry
