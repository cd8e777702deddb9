#include "hostshim/host/freeze_hold.h"

namespace nvsentry::hostshim::host {

void FreezeHold::SetFence(uint32_t id, uint32_t value) {
  absl::MutexLock l(&mu_);
  if (state_ != State::kChecking) return;
  id_ = id;
  value_ = value;
  state_ = State::kFenced;
}

void FreezeHold::Release() {
  absl::MutexLock l(&mu_);
  if (state_ == State::kChecking) state_ = State::kThawed;
}

bool FreezeHold::Thawed(Reached reached) {
  uint32_t id, value;
  {
    absl::MutexLock l(&mu_);
    if (state_ != State::kFenced) return state_ == State::kThawed;
    id = id_;
    value = value_;
  }
  // Outside the lock: `reached` may ask the host.
  if (!reached(id, value)) return false;
  absl::MutexLock l(&mu_);
  state_ = State::kThawed;
  return true;
}

}  // namespace nvsentry::hostshim::host
