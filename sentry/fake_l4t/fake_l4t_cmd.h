// `nvsentry fake-l4t DIR`: serves a fake Jetson (hostshim/fake_l4t/fake_jetson.h) as files of a
// FUSE filesystem at DIR (sentry/fake_l4t/fake_l4t_fs.h) until SIGINT or SIGTERM (then unmounts
// DIR) or until DIR is unmounted. Needs root. Standard output gets "fake-l4t: ready DIR" once the
// files answer, and the fake's status line at each SIGUSR1; the log goes to standard error.
#pragma once

#include <string>

namespace nvsentry::sentry {

// `nvsentry fake-l4t [--log-level=L] DIR` (sentry/fake_l4t/fake_l4t_cmd.h).
struct FakeL4tOptions {
  std::string dir;
  std::string log_level = "info";
};

// The process's exit status: 0 after a clean stop, 1 when it cannot serve (not root, no FUSE,
// DIR gone since the command line found it a directory).
int RunFakeL4t(const FakeL4tOptions& options);

}  // namespace nvsentry::sentry
