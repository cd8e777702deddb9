// The floor of the mechanism: what one seccomp user-notification round trip costs on this
// kernel, with a supervisor that does nothing but answer.
#pragma once

#include <optional>
#include <vector>

namespace nvbench {

struct RawOptions {
  bool sync_wakeup = false;  // ask for SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (Linux 6.6+)
  // Also make, per call, the three syscalls nvsentry's fast path adds to the round trip (an fd
  // identity check with kcmp, the argument's copy-in and copy-out): the floor of its design.
  bool fast_path_syscalls = false;
  long warmup = 0;
  int blocks = 0;
  long calls = 0;  // per block
  // Threads of the child left waiting in a trapped call the supervisor received and never
  // answers, before the timing starts: what parked calls cost the kernel's notification list.
  int parked = 0;
};

struct RawResult {
  std::optional<std::vector<double>> ns_per_call;  // one per block; empty if the run failed
  bool sync_wakeup_applied = false;                // the kernel accepted the flag
  bool killable_recv = false;  // the filter has SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
};

// Forks a child that traps one ioctl code and times it, and answers its calls from this
// process. The caller must be single-threaded (it forks).
RawResult MeasureRawRoundTrip(const RawOptions& options);

}  // namespace nvbench
