// nvsentry's side of job control. The guest runs in a process group of its own (so that nothing
// it signals with kill(0, ...) is outside its PID namespace); nvsentry stands in for it towards
// the shell that started nvsentry:
// - with a controlling terminal, the guest's group stays in nvsentry's session and, while
//   nvsentry is the terminal's foreground job, owns the terminal (Ctrl-C and Ctrl-Z reach the
//   guest); the terminal is given back to nvsentry's group when the guest ends;
// - when the guest stops, nvsentry stops itself with the same signal, so its shell sees the job
//   stopped; when nvsentry is continued it continues the guest (and hands the terminal over again
//   if the shell made nvsentry the foreground job: `fg`).
// Without a controlling terminal the guest gets a session of its own instead.
#pragma once

#include <sys/types.h>

namespace nvsentry::sentry {

class Terminal {
 public:
  // nvsentry's controlling terminal, if it has one (/dev/tty opens).
  static Terminal OpenControlling();
  Terminal(Terminal&& other) noexcept;
  Terminal& operator=(Terminal&&) = delete;
  ~Terminal();

  bool present() const { return fd_ >= 0; }
  // When nvsentry's own group is the terminal's foreground group, makes `pgid` (the guest's) the
  // foreground group. Call with SIGTTOU blocked.
  void HandToIfForeground(pid_t pgid);
  // Makes nvsentry's group the foreground group again if it handed the terminal to the guest and
  // the guest (or a group it made) still has it. Call with SIGTTOU blocked.
  void TakeBack();
  // Forgets a handover: nvsentry stopped, and its shell takes the terminal itself.
  void ForgetHandover() { handed_ = false; }

 private:
  explicit Terminal(int fd) : fd_(fd) {}
  int fd_ = -1;
  bool handed_ = false;
};

// Stops nvsentry with `sig` (the signal that stopped the guest) as the default action would, so
// that its parent sees it stopped by that signal; returns once nvsentry is continued (its SIGCONT
// is then pending). The caller has `sig` and SIGCONT blocked (it reads them from a signalfd); they
// stay blocked. False if nvsentry did not stop: the kernel discards SIGTSTP, SIGTTIN and SIGTTOU
// in an orphaned process group (no job-control shell that could continue it), as for any program.
bool StopSelf(int sig);

// For the crash handler (async-signal-safe): gives the terminal back if the guest has it.
void TakeBackTerminalAfterCrash();

}  // namespace nvsentry::sentry
