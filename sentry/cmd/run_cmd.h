// `nvsentry run [OPTIONS] [--] PROGRAM [ARGS...]`: sets up the sentry's log and crash reports,
// then runs the program in the sandbox (sentry/sandbox/launcher.h).
#pragma once

#include "sentry/cmd/cli.h"

namespace nvsentry::sentry {

// Returns only when the sandbox did not start (2: the log could not be set up); otherwise the
// process leaves with the program's status (ExitSentry).
int RunRunCommand(const Command& cmd);

}  // namespace nvsentry::sentry
