// `nvsentry fake-l4t DIR`: serves a fake Jetson (hostshim/fake_l4t/fake_jetson.h) as files of a
// FUSE filesystem at DIR (sentry/fake_l4t/fake_l4t_fs.h) until SIGINT or SIGTERM (then unmounts
// DIR) or until DIR is unmounted. Needs root. Standard output gets "fake-l4t: ready DIR" once the
// files answer, and the fake's status line at each SIGUSR1; the log goes to standard error.
// With `-- PROGRAM [ARGS]` it runs PROGRAM instead (sentry/fake_l4t/fake_l4t_program.h), calls
// that return fds included, prints no ready line, and when PROGRAM ends waits (at most 10 s) until
// the fake holds nothing, prints its status line on standard error, unmounts DIR and exits with
// PROGRAM's status.
#pragma once

#include <string>
#include <vector>

namespace nvsentry::sentry {

// `nvsentry fake-l4t [--log-level=L] DIR [-- PROGRAM [ARGS]]` (sentry/fake_l4t/fake_l4t_cmd.h).
struct FakeL4tOptions {
  std::string dir;
  std::string log_level = "info";
  std::vector<std::string> program;  // empty: serve until a signal
};

// The process's exit status: 0 after a clean stop (PROGRAM's with one), 1 when it cannot serve
// (not root, no FUSE, DIR gone since the command line found it a directory).
int RunFakeL4t(const FakeL4tOptions& options);

}  // namespace nvsentry::sentry
