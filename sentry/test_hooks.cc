#include "sentry/test_hooks.h"

#include <cstdlib>

#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"

namespace nvsentry::sentry {
namespace {

struct Hooks {
  bool hold_open_after_placing = false;
  bool hold_session_end = false;
  bool crash_on_open = false;
};

Hooks Read() {
  Hooks h;
  const char* env = getenv("NVSENTRY_TEST_HOOKS");
  if (env == nullptr) return h;
  for (absl::string_view name : absl::StrSplit(env, ',')) {
    if (name == "hold-open-after-placing") h.hold_open_after_placing = true;
    if (name == "hold-session-end") h.hold_session_end = true;
    if (name == "crash-on-open") h.crash_on_open = true;
  }
  return h;
}

}  // namespace

bool TestHookOn(TestHook hook) {
  static const Hooks hooks = Read();
  switch (hook) {
    case TestHook::kHoldOpenAfterPlacing: return hooks.hold_open_after_placing;
    case TestHook::kHoldSessionEnd: return hooks.hold_session_end;
    case TestHook::kCrashOnOpen: return hooks.crash_on_open;
  }
  return false;
}

}  // namespace nvsentry::sentry
