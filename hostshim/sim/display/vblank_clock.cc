#include "hostshim/sim/display/vblank_clock.h"

#include "absl/time/clock.h"

namespace nvsentry::hostshim::sim {

VblankClock::VblankClock(std::function<void()> tick, std::function<bool()> wanted,
                         absl::Duration period)
    : tick_(std::move(tick)), wanted_(std::move(wanted)), period_(period) {}

VblankClock::~VblankClock() {
  bool started;
  {
    absl::MutexLock l(&mu_);
    stopping_ = true;
    started = started_;
  }
  if (started) thread_.join();
}

void VblankClock::Wake() {
  absl::MutexLock l(&mu_);
  woken_ = true;
  // The first Wake: until now the thread would only have slept.
  if (!started_ && !stopping_) {
    thread_ = std::thread([this] { Loop(); });
    started_ = true;
  }
}

bool VblankClock::Running() const {
  absl::MutexLock l(&mu_);
  return running_;
}

void VblankClock::Loop() {
  absl::Time next;
  for (;;) {
    {
      absl::MutexLock l(&mu_);
      if (!running_) {
        auto ready = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return stopping_ || woken_; };
        mu_.Await(absl::Condition(&ready));
        if (stopping_) return;
        running_ = true;
        next = absl::Now() + period_;
      }
      auto stop = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return stopping_; };
      mu_.AwaitWithDeadline(absl::Condition(&stop), next);
      if (stopping_) return;
      woken_ = false;
    }
    tick_();
    const absl::Time now = absl::Now();
    next += period_;
    if (next < now) next = now + period_;  // stalled: restart the schedule, no burst
    if (!wanted_()) {
      absl::MutexLock l(&mu_);
      if (!woken_) running_ = false;  // a Wake after the look keeps it running
    }
  }
}

}  // namespace nvsentry::hostshim::sim
