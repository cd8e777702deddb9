// The container's sentry as a process of its own (sentry/sandbox/container_serve.h), started at
// create and ended at delete, or by itself once the container's last process is gone.
#pragma once

#include "absl/status/status.h"
#include "sentry/oci/container_state.h"
#include "sentry/sandbox/options.h"

namespace nvsentry::oci {

// Forks the sentry (a session of its own, its standard streams on paths.sentry_log, no fd of the
// engine's kept) and returns once it serves: its device files attached at paths.devices, its
// socket listening at paths.socket; its pid in paths.sentry_pid. An error says why it could not.
// Call while this process is single-threaded.
absl::Status StartContainerSentry(const ContainerPaths& paths, const sentry::RunOptions& run);

// Ends the sentry whose pid paths.sentry_pid holds, if it is still that process (SIGTERM, then
// SIGKILL after 5 s), and unmounts its device files whatever it did (a crashed sentry left them).
absl::Status StopContainerSentry(const ContainerPaths& paths);

}  // namespace nvsentry::oci
