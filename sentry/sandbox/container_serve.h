// The sentry of one container that an OCI runtime (runc, crun) builds: it launches no guest of its
// own. It attaches the device files at a directory of the host (the runtime binds each into the
// container at its /dev path) and listens on a unix socket for seccomp listener fds, the way
// runc and crun hand them to `linux.seccomp.listenerPath`: one SCM_RIGHTS message per process
// that loads the filter (the container's first process, then each exec'd one), its text the
// container's state as JSON. Every listener's calls are served as one guest's.
//
// Once its files are attached and its socket listens it keeps only CAP_SYS_PTRACE (the container's
// processes' memory and fds) and CAP_SYS_NICE; a child of its own keeps CAP_SYS_ADMIN to unmount
// the device files when the sentry ends, however it ends. It ends when asked (SIGTERM, SIGINT,
// SIGHUP) or when every listener it took has hung up (no process of the container is left),
// removing the socket.
#pragma once

#include <functional>
#include <string>

#include "absl/status/status.h"
#include "sentry/sandbox/options.h"

namespace nvsentry::sentry {

struct ContainerServeOptions {
  // The guest's policy, service, firmware, backend and the sentry's threads, as `nvsentry run`
  // reads them (argv and the sandbox's own options are not used).
  RunOptions run;
  std::string device_dir;   // an empty directory: the device files are attached there
  std::string socket_path;  // where runc connects (must not exist)
};

// Serves until the end above; `ready` is called once: OK when the device files are attached and
// the socket listens (the runtime may start), or why the sentry cannot serve (it then returns at
// once, having undone what it made). Returns the process's exit status. The calling process must
// be single-threaded; the sentry's threads stay until it exits.
int ServeContainer(const ContainerServeOptions& options,
                   const std::function<void(const absl::Status&)>& ready);

}  // namespace nvsentry::sentry
