// One submission's hold on the pushbuffer bytes its check read (docs/security.md, "Command
// stream"). The host's GPU fetches a checked entry some time after the submit returns; until then
// a push (for any later submission of the guest's) must not give the host other words there, or
// the GPU would run words nobody checked. So the check freezes the bytes it reads (in each twin's
// FrozenRanges) under this hold, and they stay frozen while the hold holds:
// - from the check until the host answers the submit (the fence is not known yet);
// - then until the host's syncpoint reaches the submission's fence (its job, and so every fetch
//   of its entries, is done);
// - not at all once the submission failed (it never reached the host): Release.
// Shared by the twins it froze and the submission; thread-safe.
#pragma once

#include <cstdint>

#include "absl/base/thread_annotations.h"
#include "absl/functional/function_ref.h"
#include "absl/synchronization/mutex.h"

namespace nvsentry::hostshim::host {

class FreezeHold {
 public:
  // Whether the host's syncpoint `id` reached `value`.
  using Reached = absl::FunctionRef<bool(uint32_t id, uint32_t value)>;

  // The host took the submission: frozen until syncpoint `id` reaches `value`.
  void SetFence(uint32_t id, uint32_t value);
  // The submission did not reach the host: thawed now.
  void Release();
  // Whether the bytes may move again. Once true, true for good (a syncpoint only counts up; the
  // fence is less than 2^31 increments ahead).
  bool Thawed(Reached reached);

 private:
  enum class State { kChecking, kFenced, kThawed };
  absl::Mutex mu_;
  State state_ ABSL_GUARDED_BY(mu_) = State::kChecking;
  uint32_t id_ ABSL_GUARDED_BY(mu_) = 0;
  uint32_t value_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace nvsentry::hostshim::host
