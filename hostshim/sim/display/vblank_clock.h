// The simulated display's vblank: one thread that calls `tick` once per period (60 Hz) while
// `wanted` says somebody waits for a vblank, and otherwise sleeps on a condition variable, so an
// idle guest costs no CPU. Ticks follow an absolute schedule (no drift); after a stall the
// schedule restarts instead of bursting to catch up. While idle no vblank happens: the vblank
// counters stand still (docs/simulated-gpu.md).
//
// Thread-safe. `tick` and `wanted` run on the clock's thread without the clock's lock held; Wake
// takes only the clock's lock, so it may be called under other locks (the syncpoint table's). The
// thread starts with the first Wake (a guest that never waits for a vblank costs none).
#pragma once

#include <functional>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace nvsentry::hostshim::sim {

class VblankClock {
 public:
  static constexpr absl::Duration kPeriod = absl::Nanoseconds(1000000000 / 60);

  VblankClock(std::function<void()> tick, std::function<bool()> wanted,
              absl::Duration period = kPeriod);
  // Stops the thread; no tick runs after it returns.
  ~VblankClock();
  VblankClock(const VblankClock&) = delete;
  VblankClock& operator=(const VblankClock&) = delete;

  // Somebody may want vblanks now: the clock runs until `wanted` says no after a tick.
  void Wake();
  bool Running() const;

 private:
  void Loop();

  const std::function<void()> tick_;
  const std::function<bool()> wanted_;
  const absl::Duration period_;
  mutable absl::Mutex mu_;
  bool woken_ ABSL_GUARDED_BY(mu_) = false;
  bool running_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;  // started by the first Wake
};

}  // namespace nvsentry::hostshim::sim
