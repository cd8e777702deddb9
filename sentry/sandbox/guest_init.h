// The guest's init: the first process of the sandbox's own user, PID and mount namespaces. It
// waits for the sentry's go-ahead (its uid and gid maps written), becomes root of its user
// namespace, leaves nvsentry's process group for one of its own (in nvsentry's
// session, so that it can own nvsentry's terminal, if any), sets up the guest's view of the
// filesystem (guest_mounts.h: host NVIDIA nodes hidden, a /proc that shows only the guest) and
// network, installs the seccomp filter on itself (so even a guest that ptraces it stays confined),
// hands the listener to the sentry, starts the guest program in its group and reaps everything. It
// reports the guest program's stops and, when it exits, its raw wait status, then exits; the kernel
// kills whatever of the guest is left.
#pragma once

#include <sched.h>
#include <signal.h>
#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "sentry/core/filter.h"
#include "sentry/sandbox/guest_mounts.h"
#include "sentry/sandbox/identity.h"

namespace nvsentry::sentry {

struct GuestInitArgs {
  char** argv;       // the guest program and its arguments
  MountPlan mounts;  // the guest's view, host nodes covered
  const FilterProgram* filter;
  int control_fd;  // SOCK_SEQPACKET to the sentry: "go" (and "dev", with a device mount) in;
                   // "ok" + listener fd, or an error, out
  int status_fd;   // pipe to the sentry: InitReports
  sigset_t guest_sigmask;  // the mask the guest starts with (the caller's)
  cpu_set_t guest_cpus;    // the CPUs the guest may use (the caller's; empty: as init is cloned)
  pid_t sentry_pid;        // while the sentry is stopped (SIGSTOP), so is the guest
  GuestIdentity identity;  // with a user namespace, init becomes its root once the maps are written
  bool loopback;           // in a network namespace of its own: bring its loopback up
  std::string workdir;     // where the guest starts, as a path in its own view
  bool workdir_required;   // --chdir: a workdir that does not exist there is an error
  uint32_t max_tasks;      // RLIMIT_NPROC of the guest (0: unlimited)
  // The device files' FUSE connection (/dev/fuse), the sentry's alone: init closes its copy
  // first. (Held by init, it kept the connection up when the sentry's serving had failed, and
  // the sentry's first requests then waited for good: DeviceFs::Prime.) -1: none.
  int device_connection = -1;
  // Who the guest is over the host and what to do, for a path its identity is refused
  // (RefusedAdvice): the program, the working directory.
  std::string refused_advice;
};

// What init tells the sentry, one fixed-size record per write (atomic on a pipe).
struct InitReport {
  enum Kind : int32_t { kGuestStopped = 1, kGuestExited = 2 };
  Kind kind;
  // kGuestStopped: the stop signal; kGuestExited: the guest program's raw wait status, sent once
  // every other process of the guest is gone too (killed and reaped by init).
  int32_t value;
};

[[noreturn]] void RunGuestInit(const GuestInitArgs& args);

// The signals the sentry passes on to the guest program when they are sent to nvsentry. Init
// takes them synchronously and forwards only those the sentry sent: the terminal's own signals
// (Ctrl-C, Ctrl-Z, window changes) reach the guest's group directly. SIGCONT is handled apart:
// init continues the guest's whole group with it (what a shell's `fg` does).
inline constexpr int kForwardedSignals[] = {SIGINT,  SIGTERM,  SIGHUP,  SIGQUIT, SIGUSR1, SIGUSR2,
                                            SIGALRM, SIGWINCH, SIGTSTP, SIGTTIN, SIGTTOU};

// How often init looks at the sentry's state to mirror a SIGSTOP sent to nvsentry (which no
// process but nvsentry's parent or tracer is told about).
inline constexpr int kSentryWatchMs = 100;

}  // namespace nvsentry::sentry
