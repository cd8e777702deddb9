// `nvsentry run`: starts the guest under the sandbox and stays until its first process exits.
// Returns the exit status nvsentry should end with.
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "proxy/guest_config.h"
#include "sentry/sandbox/options.h"

namespace nvsentry::sentry {

// The guest's policy (a file, or the default with the command line's service, firmware and debug
// mode) and its services (tracer, learner); an error names the bad option. Shared by the
// launcher and the sentry.
absl::StatusOr<std::shared_ptr<proxy::GuestConfig>> MakeGuestConfig(const RunOptions& options);

int RunGuest(const RunOptions& options);

}  // namespace nvsentry::sentry
