#include "hostshim/host/host_fences.h"

#include "hostshim/sim/sync/syncpoints.h"

namespace nvsentry::hostshim::host {

bool FencePassed(HostFences& fences, uint32_t id, uint32_t value, bool ask_host) {
  const auto past = [&](std::optional<uint32_t> v) {
    if (!v) return false;
    // The guest's own increments read after the value: every one that moved it is counted.
    const uint64_t own = fences.GuestIncrements(id);
    return own < kMaxGuestIncrements && sim::SyncptReached(*v, value + static_cast<uint32_t>(own));
  };
  return past(fences.Mirrored(id)) || (ask_host && past(fences.Read(id)));
}

}  // namespace nvsentry::hostshim::host
