// A parked ioctl: the continuation a trapped call becomes when its backend must wait (a syncpoint
// wait, a channel wait, the same carried by /dev/nvdrv). It holds the call's argument copy, the
// way to answer it, and one charge of the guest's parked_waits budget; the ParkWatch watches its
// thread. It ends exactly once, by whoever gets there first: Finish (reached, timed out, refused
// by its holder), a signal the thread would take (answered with the restart code or EINTR), or
// the thread's death (dropped). The charge goes back at that end.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "hostshim/backend.h"
#include "hostshim/budget.h"
#include "proxy/guest_io.h"
#include "sentry/core/listener.h"
#include "sentry/core/park_watch.h"

namespace nvsentry::sentry {

// What parking a call needs from the sentry.
struct Parking {
  ParkWatch& watch;
  std::shared_ptr<hostshim::BudgetAccount> budget;  // parked_waits; null: not charged
};

// A continuation for call `id` of thread `tid`, watched by `parking.watch`; null when the
// guest's parked_waits budget is spent (nothing changes then).
std::shared_ptr<hostshim::Continuation> ParkCall(const Listener& listener, const Parking& parking,
                                                 uint64_t id, pid_t tid, std::string_view what,
                                                 std::vector<uint8_t> arg, proxy::Finisher finish);

}  // namespace nvsentry::sentry
