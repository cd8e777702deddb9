// Which trapped calls the receiver serves itself (sentry/core/receiver.h) and which it hands to the
// pool. Fast: what cannot take long by its nature, so that it never holds up the calls queued
// behind it:
//   - calls the filter traps that the sentry lets continue untouched;
//   - ioctls whose code selects, on every device of the catalogue and every firmware, an entry of
//     fixed size that is pure (reads driver state, copies a bounded argument in and out:
//     SYNCPT_READ, GET_CHARACTERISTICS, ...) or a wait (answered at once, or parked: a parked
//     call never holds a thread).
// Slow: opens (paths, /proc lookups, a new session and its fds), every other ioctl (allocations,
// mappings, submissions that run the command processor, channel set-up: their cost grows with
// their arguments), everything /dev/nvdrv carries (the carried call is known only after the
// copy-in), and codes the catalogue does not know.
// A fast call that takes long all the same is the receiver's stall watch's to handle.
#pragma once

#include <linux/seccomp.h>

#include <cstdint>

#include "absl/container/flat_hash_set.h"
#include "sentry/core/filter.h"

namespace nvsentry::sentry {

class FastCalls {
 public:
  // `syscalls` outlives this.
  explicit FastCalls(const SyscallTable& syscalls);
  bool IsFast(const seccomp_notif& req) const;
  // For tests: whether an ioctl with this code is served by the receiver.
  bool IsFastIoctl(uint32_t code) const { return fast_ioctls_.contains(code); }

 private:
  const SyscallTable& syscalls_;
  absl::flat_hash_set<uint32_t> fast_ioctls_;
};

}  // namespace nvsentry::sentry
