// The container's sentry as a process of its own (sentry/sandbox/container_serve.h), started at
// create and ended at delete, or by itself once the container's last process is gone.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "sentry/oci/container_state.h"
#include "sentry/sandbox/options.h"

namespace nvsentry::oci {

// Where the engine's log is (the create's --log and --log-format; "" for none): the sentry's
// log lines go there too (sentry/oci/oci_log.h, EngineLogSink).
struct EngineLog {
  std::string file;
  bool json = false;
};

// Forks the sentry (a session of its own, its standard streams and log on paths.sentry_log and
// its log on `engine_log` too, no fd of the engine's kept) and returns once it serves: its device
// files attached at paths.devices, its socket listening at paths.socket; its pid in
// paths.sentry_pid. An error says why it could not. Call while this process is single-threaded.
absl::Status StartContainerSentry(const ContainerPaths& paths, const sentry::RunOptions& run,
                                  const EngineLog& engine_log);

// Ends the sentry whose pid paths.sentry_pid holds, if it is still that process (SIGTERM, then
// SIGKILL after 5 s), and unmounts its device files whatever it did (a crashed sentry left them).
absl::Status StopContainerSentry(const ContainerPaths& paths);

}  // namespace nvsentry::oci
