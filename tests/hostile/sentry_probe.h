// What a hostile-guest test reads of the sentry itself (the nvsentry process): its open fds, its
// resident memory and the CPU time it has used, from /proc/<pid>.
#pragma once

#include <sys/types.h>

#include <functional>

namespace nvsentry::testing {

// Entries of /proc/<pid>/fd, or -1.
int OpenFds(pid_t pid);
// VmRSS in KiB, or -1.
long RssKiB(pid_t pid);
// User plus system CPU time of all the process's threads, in seconds, or -1.
double CpuSeconds(pid_t pid);
// Polls `done` (every 10 ms) until it holds or `timeout_ms` pass; returns its last answer. For
// state the sentry changes on its own threads (a session ends when its lifetime thread sees the
// hang-up), not a stand-in for a handshake.
bool Eventually(const std::function<bool()>& done, int timeout_ms = 20000);

}  // namespace nvsentry::testing
