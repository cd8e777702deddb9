// `nvsentry run`: starts the guest under the sandbox and stays until its first process exits.
// Returns the exit status nvsentry should end with.
#pragma once

#include "sentry/cli.h"

namespace nvsentry::sentry {

int RunGuest(const RunOptions& options);

}  // namespace nvsentry::sentry
