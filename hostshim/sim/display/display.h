// The simulated display controller: its two heads (display_head.h) and the vblank clock that
// drives them (vblank_clock.h). The clock ticks while a head has a flip ready for the screen or
// somebody waits on a vblank syncpoint (the syncpoint table tells it when a waiter parks).
#pragma once

#include <memory>

#include "hostshim/sim/display/display_head.h"
#include "hostshim/sim/display/vblank_clock.h"
#include "hostshim/sim/sync/syncpoints.h"

namespace nvsentry::hostshim::sim {

class Display {
 public:
  static constexpr uint32_t kHeads = 2;

  // Installs the table's park listener (the table must outlive the display).
  explicit Display(Syncpoints& syncpoints, absl::Duration period = VblankClock::kPeriod);
  ~Display();
  Display(const Display&) = delete;
  Display& operator=(const Display&) = delete;

  DisplayHead& head(uint32_t i) { return *heads_[i]; }
  // Every flip that reaches the screen, on either head (the clock's thread calls it).
  void SetFrameObserver(const FrameObserver& observer);
  bool clock_running() const { return clock_->Running(); }

 private:
  Syncpoints& syncpoints_;
  std::shared_ptr<DisplayHead> heads_[kHeads];
  std::unique_ptr<VblankClock> clock_;
};

}  // namespace nvsentry::hostshim::sim
