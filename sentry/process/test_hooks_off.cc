// The test hooks as the nvsentry users run has them: every hook off, nothing read from the
// environment (the test build links test_hooks.cc instead).
#include "sentry/process/test_hooks.h"

namespace nvsentry::sentry {

bool TestHookOn(TestHook) { return false; }

HoldFirstIoctl::HoldFirstIoctl() {}
HoldFirstIoctl::~HoldFirstIoctl() {}

}  // namespace nvsentry::sentry
