// `nvsentry run`: starts the guest under the sandbox and stays until its first process exits.
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "proxy/guest_config.h"
#include "sentry/sandbox/options.h"

namespace nvsentry::sentry {

// The guest's policy (a file, or the default with the command line's service, firmware and debug
// mode) and its learner (--learn); an error names the bad option. Shared by the launcher and the
// sentry. (RunGuest adds the tracer once --trace's file is open.)
absl::StatusOr<std::shared_ptr<proxy::GuestConfig>> MakeGuestConfig(const RunOptions& options);

// The exit status nvsentry should end with; an error when the guest never started because of
// something found before the sandbox's start: InvalidArgument when the command line is wrong (a
// usage error: exit 2), anything else exit 125. A guest that never ran (any error, or the
// sandbox's failure to start, 125) leaves --trace's and --learn's files as they were.
absl::StatusOr<int> RunGuest(const RunOptions& options);

}  // namespace nvsentry::sentry
