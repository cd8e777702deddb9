// What the running kernel must offer before a guest can be served, checked before anything of the
// sandbox is made. The sentry serves every guest through seccomp user notification and places the
// fds its answers return with SECCOMP_ADDFD_FLAG_SEND (Linux 5.14); it watches the guest through a
// pidfd (5.3) and mounts the device files with the new mount API (5.2). A kernel without them
// (L4T r32's 4.9, the last release for the Jetson Nano and TX1) used to fail later with an errno
// from deep inside the start; now the start says which kernel this is, what it lacks and what to
// do (docs/architecture.md, "Kernel requirements"; docs/host-passthrough.md, "On a real Jetson").
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"

namespace nvsentry::sentry {

// What the probes found: each missing facility with the Linux release that brought it.
struct KernelFacts {
  std::string release;               // uname's, e.g. "4.9.337-tegra"
  std::vector<std::string> missing;  // "seccomp user notification (Linux 5.0)", ...
};

// The running kernel's facts: each facility probed by calling it (ENOSYS or, for seccomp's
// operations, EINVAL means absent), and a release below 5.14 counted as lacking ADDFD's SEND flag,
// which cannot be probed without a listener.
KernelFacts ProbeKernel();

// OK when nothing is missing; otherwise an error naming the release, every missing facility and
// what to do.
absl::Status JudgeKernel(const KernelFacts& facts);

}  // namespace nvsentry::sentry
