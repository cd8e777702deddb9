// The guest's init: the first process of the sandbox's own PID and mount namespaces. It hides the
// host's NVIDIA nodes, mounts a /proc that shows only the guest, installs the seccomp filter on
// itself (so even a guest that ptraces it stays confined), hands the listener to the sentry,
// starts the guest program and reaps everything. When the guest's first process exits, init
// reports the raw wait status and exits, and the kernel kills whatever of the guest is left.
#pragma once

#include <string>
#include <vector>

#include <signal.h>

#include "sentry/filter.h"
#include "sentry/host_nodes.h"

namespace nvsentry::sentry {

struct GuestInitArgs {
  char** argv;                       // the guest program and its arguments
  std::vector<HostNode> host_nodes;  // to cover
  const FilterProgram* filter;
  int control_fd;   // SOCK_SEQPACKET to the sentry: "ok" + listener fd, or an error text
  int status_fd;    // pipe to the sentry: the guest's raw wait status
  sigset_t guest_sigmask;  // the mask the guest starts with (the caller's)
};

[[noreturn]] void RunGuestInit(const GuestInitArgs& args);

// The signals the sentry forwards to the guest when they come from outside it. They are caught
// (never their default action) because a guest's kill(0, ...) reaches the sentry too through the
// process group they share; those the sentry drops, since the guest already got them.
inline constexpr int kForwardedSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM};

}  // namespace nvsentry::sentry
