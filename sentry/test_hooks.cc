#include "sentry/test_hooks.h"

#include <cstdlib>

#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"

namespace nvsentry::sentry {
namespace {

struct Hooks {
  bool hold_open_after_placing = false;
  bool hold_session_end = false;
};

Hooks Read() {
  Hooks h;
  const char* env = getenv("NVSENTRY_TEST_HOOKS");
  if (env == nullptr) return h;
  for (absl::string_view name : absl::StrSplit(env, ',')) {
    if (name == "hold-open-after-placing") h.hold_open_after_placing = true;
    if (name == "hold-session-end") h.hold_session_end = true;
  }
  return h;
}

}  // namespace

bool TestHookOn(TestHook hook) {
  static const Hooks hooks = Read();
  switch (hook) {
    case TestHook::kHoldOpenAfterPlacing: return hooks.hold_open_after_placing;
    case TestHook::kHoldSessionEnd: return hooks.hold_session_end;
  }
  return false;
}

}  // namespace nvsentry::sentry
