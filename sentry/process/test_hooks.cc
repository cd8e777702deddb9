#include "sentry/process/test_hooks.h"

#include <cstdlib>

#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "spdlog/spdlog.h"

namespace nvsentry::sentry {
namespace {

struct Hooks {
  bool hold_open_after_placing = false;
  bool hold_session_end = false;
  bool crash_on_open = false;
  bool hold_first_ioctl = false;
  bool fail_device_listing = false;
};

Hooks Read() {
  Hooks h;
  const char* env = getenv("NVSENTRY_TEST_HOOKS");
  if (env == nullptr) return h;
  for (absl::string_view name : absl::StrSplit(env, ',')) {
    if (name == "hold-open-after-placing") h.hold_open_after_placing = true;
    if (name == "hold-session-end") h.hold_session_end = true;
    if (name == "crash-on-open") h.crash_on_open = true;
    if (name == "hold-first-ioctl") h.hold_first_ioctl = true;
    if (name == "fail-device-listing") h.fail_device_listing = true;
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
    case TestHook::kHoldFirstIoctl: return hooks.hold_first_ioctl;
    case TestHook::kFailDeviceListing: return hooks.fail_device_listing;
  }
  return false;
}

namespace {

struct IoctlCount {
  absl::Mutex mu;
  bool first_taken ABSL_GUARDED_BY(mu) = false;
  int answered ABSL_GUARDED_BY(mu) = 0;
};

IoctlCount& Count() {
  static auto* count = new IoctlCount;
  return *count;
}

}  // namespace

HoldFirstIoctl::HoldFirstIoctl() {
  IoctlCount& c = Count();
  absl::MutexLock lock(&c.mu);
  if (c.first_taken) return;
  c.first_taken = true;
  const int before = c.answered;
  auto another = [&c, before]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(c.mu) { return c.answered > before; };
  if (c.mu.AwaitWithTimeout(absl::Condition(&another), absl::Seconds(5)))
    spdlog::warn("test hook: the first ioctl was held until another ioctl was answered");
  else
    spdlog::warn("test hook: the first ioctl was held 5 s; no other ioctl was answered meanwhile");
}

HoldFirstIoctl::~HoldFirstIoctl() {
  IoctlCount& c = Count();
  absl::MutexLock lock(&c.mu);
  ++c.answered;
}

}  // namespace nvsentry::sentry
