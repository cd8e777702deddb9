// Pauses that hold a sentry thread at a known point, so that an integration test can make a race
// between the sentry's threads happen on every run instead of once in many. Named, comma-separated,
// in NVSENTRY_TEST_HOOKS in nvsentry's environment; read once; all off otherwise.
#pragma once

namespace nvsentry::sentry {

enum class TestHook {
  // "hold-open-after-placing": a worker that has placed a new session's fd in the guest waits
  // until that session has ended before it finishes the open (as a worker preempted there would
  // while the guest closes the fd at once).
  kHoldOpenAfterPlacing,
  // "hold-session-end": the session-lifetime thread, having taken an ended session out of the
  // table, waits until the guest's exit path has begun ending every session before it lets the
  // session go (as a hang-up noticed late, after the guest's exit, would).
  kHoldSessionEnd,
  // "crash-on-open": the worker serving a device open crashes the sentry (the crash report and
  // the guest's fate when the sentry dies: tests/integration/launcher_test.cc).
  kCrashOnOpen,
};

bool TestHookOn(TestHook hook);

}  // namespace nvsentry::sentry
