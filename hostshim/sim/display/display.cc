#include "hostshim/sim/display/display.h"

namespace nvsentry::hostshim::sim {

Display::Display(Syncpoints& syncpoints, absl::Duration period) : syncpoints_(syncpoints) {
  // The heads wake the clock through this indirection: it is made after them.
  auto wake = [this] { clock_->Wake(); };
  for (uint32_t i = 0; i < kHeads; ++i)
    heads_[i] = std::make_shared<DisplayHead>(i, syncpoints, wake);
  clock_ = std::make_unique<VblankClock>(
      [this] {
        for (auto& h : heads_) h->Vblank();
      },
      [this] {
        for (auto& h : heads_)
          if (h->WantsVblank()) return true;
        return false;
      },
      period);
  syncpoints_.SetParkListener([this](uint32_t id) {
    for (auto& h : heads_)
      if (id == h->vblank_syncpoint() && h->connected()) clock_->Wake();
  });
}

Display::~Display() {
  syncpoints_.SetParkListener(nullptr);
  clock_.reset();  // no tick after this
}

void Display::SetFrameObserver(const FrameObserver& observer) {
  for (auto& h : heads_) h->SetFrameObserver(observer);
}

}  // namespace nvsentry::hostshim::sim
