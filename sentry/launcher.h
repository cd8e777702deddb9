// `nvsentry run`: starts the guest under the sandbox and stays until its first process exits.
// Returns the exit status nvsentry should end with.
#pragma once

#include "absl/status/statusor.h"
#include "proxy/guest_config.h"
#include "sentry/cli.h"

namespace nvsentry::sentry {

// The guest's service identity, firmware, permission mask, debug mode and tracer, from the
// command line; an error names the bad option.
absl::StatusOr<proxy::GuestConfig> MakeGuestConfig(const RunOptions& options);

int RunGuest(const RunOptions& options);

}  // namespace nvsentry::sentry
