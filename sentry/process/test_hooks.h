// Pauses that hold a sentry thread at a known point, so that an integration test can make a race
// between the sentry's threads happen on every run instead of once in many. Only the test build of
// the binary (nvsentry_hooked, test_hooks.cc) has them: named, comma-separated, in
// NVSENTRY_TEST_HOOKS in its environment, read once. The nvsentry users run links
// test_hooks_off.cc: every hook off, no environment read.
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
  // "hold-first-ioctl": the thread serving the guest's first trapped ioctl waits, before it
  // serves it, until another trapped ioctl has been answered, or 5 s; then it logs (warning)
  // which of the two ended the wait. Shows which calls another call can hold up.
  kHoldFirstIoctl,
  // "fail-device-listing": DeviceFs::Prime's serving fails at once (EIO), as a failed poll of the
  // connection would, while the other thread lists the guest's /dev.
  kFailDeviceListing,
};

bool TestHookOn(TestHook hook);

// For kHoldFirstIoctl: made before a trapped ioctl is served (the first one waits here) and
// destroyed once it is answered.
class HoldFirstIoctl {
 public:
  HoldFirstIoctl();
  ~HoldFirstIoctl();
  HoldFirstIoctl(const HoldFirstIoctl&) = delete;
  HoldFirstIoctl& operator=(const HoldFirstIoctl&) = delete;
};

}  // namespace nvsentry::sentry
