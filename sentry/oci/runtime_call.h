// Calling the low-level runtime (runc or crun): the engine's global flags, --root at the
// runtime's own state, then the verb and its arguments.
#pragma once

#include <string>
#include <vector>

#include "sentry/oci/oci_args.h"
#include "sentry/oci/oci_config.h"

namespace nvsentry::oci {

std::vector<std::string> RuntimeArgv(const OciCommand& command, const OciConfig& config,
                                     const std::vector<std::string>& args);

// Becomes the runtime (execvp): returns only when it cannot, with the exit status to end with
// (having logged why).
int ExecRuntime(const OciCommand& command, const OciConfig& config,
                const std::vector<std::string>& args);

// Runs the runtime as a child (sharing this process's standard streams) and returns its exit
// status (128+N for signal N; 1, logged, when it could not be run).
int RunRuntime(const OciCommand& command, const OciConfig& config,
               const std::vector<std::string>& args);

}  // namespace nvsentry::oci
