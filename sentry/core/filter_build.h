// libseccomp's side of the guest's filter (sentry/core/filter.h): the program and the calls it
// traps, made from the rules. Run by nvsentry_filter_gen while nvsentry is built (its output is
// sentry/core/filter_prebuilt.h's copy), and by the sentry only when that copy is empty.
#pragma once

#include <vector>

#include "absl/status/statusor.h"
#include "sentry/core/filter.h"

namespace nvsentry::sentry {

// Allocates (libseccomp): in the sentry before the guest exists, never after a fork.
absl::StatusOr<FilterProgram> BuildGuestFilterWithLibseccomp(bool trap_opens);

// The open family and ioctl on every architecture the filter admits.
std::vector<SyscallRow> TrappedSyscallRowsWithLibseccomp();

}  // namespace nvsentry::sentry
