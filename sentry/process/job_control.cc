#include "sentry/process/job_control.h"

#include <fcntl.h>
#include <signal.h>
#include <termios.h>
#include <unistd.h>

#include <atomic>

namespace nvsentry::sentry {
namespace {

// The terminal a crash must give back, if the guest has it (-1: none).
std::atomic<int> g_handed_tty{-1};

}  // namespace

Terminal Terminal::OpenControlling() {
  return Terminal(open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC));
}

Terminal::Terminal(Terminal&& other) noexcept : fd_(other.fd_), handed_(other.handed_) {
  other.fd_ = -1;
  other.handed_ = false;
}

Terminal::~Terminal() {
  if (fd_ < 0) return;
  g_handed_tty.store(-1);
  close(fd_);
}

void Terminal::HandToIfForeground(pid_t pgid) {
  if (fd_ < 0 || tcgetpgrp(fd_) != getpgrp()) return;
  if (tcsetpgrp(fd_, pgid) == 0) {
    handed_ = true;
    g_handed_tty.store(fd_);
  }
}

void Terminal::TakeBack() {
  if (fd_ < 0 || !handed_) return;
  handed_ = false;
  g_handed_tty.store(-1);
  if (tcgetpgrp(fd_) != getpgrp()) tcsetpgrp(fd_, getpgrp());
}

bool StopSelf(int sig) {
  if (sig == SIGSTOP) {
    raise(SIGSTOP);
    return true;
  }
  struct sigaction dfl {
  }, old{};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(sig, &dfl, &old);
  sigset_t one;
  sigemptyset(&one);
  sigaddset(&one, sig);
  // Pending on this thread, then unblocked here only: the default action stops the whole process,
  // and the call returns once it is continued (or at once if the kernel discarded the signal).
  raise(sig);
  pthread_sigmask(SIG_UNBLOCK, &one, nullptr);
  pthread_sigmask(SIG_BLOCK, &one, nullptr);
  sigaction(sig, &old, nullptr);
  sigset_t pending;
  return sigpending(&pending) == 0 && sigismember(&pending, SIGCONT) == 1;
}

void TakeBackTerminalAfterCrash() {
  const int fd = g_handed_tty.load();
  if (fd >= 0) tcsetpgrp(fd, getpgrp());
}

}  // namespace nvsentry::sentry
