// Who sent a signal the sentry received: one of the guest's processes (its kill(0, ...) reaches
// the sentry through the process group they share) or someone outside the sandbox.
#pragma once

#include <sys/types.h>

namespace nvsentry::sentry {

// `sender` is the si_pid signalfd reported; `guest_init` the host pid of the guest's init. The
// kernel translates si_pid only for senders in an ancestor PID namespace (they show as 0): a
// guest process reports its pid as the guest's namespace numbers it. So a signal is the guest's
// when a process of the guest's namespace has that pid there and no user process of the
// sentry's namespace has it here (on such a clash, rare as the low host pids are kernel
// threads, the signal counts as sent from outside).
bool SentByGuest(pid_t sender, pid_t guest_init);

}  // namespace nvsentry::sentry
