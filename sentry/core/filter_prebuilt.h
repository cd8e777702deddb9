// The guest's filter as libseccomp built it while nvsentry was built (nvsentry_filter_gen writes
// the definitions). Each size is 0 where the build could not make it (a libseccomp or kernel
// without seccomp user notification on the build machine): the sentry then builds it at start.
// tests/unit/sentry/core/filter_test.cc holds the copy to what libseccomp builds now.
#pragma once

#include <linux/filter.h>

#include <cstddef>

#include "sentry/core/filter.h"

namespace nvsentry::sentry::prebuilt {

extern const sock_filter kTrapOpens[];  // BuildGuestFilter(true)
extern const size_t kTrapOpensSize;
extern const sock_filter kFiles[];  // BuildGuestFilter(false)
extern const size_t kFilesSize;
extern const SyscallRow kSyscallRows[];  // TrappedSyscallRowsWithLibseccomp()
extern const size_t kSyscallRowsSize;

}  // namespace nvsentry::sentry::prebuilt
