// The events a device session hands out through QueryEvent: one eventfd per event id, made on
// first use, owned here and closed with the session (or when the device frees the event). Each
// eventfd the sentry holds is charged to the guest's open_fds budget while it is held, so a guest
// cannot grow the sentry's fd table past its budget through events. The device signals an event
// by id.
#pragma once

#include <cstdint>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "hostshim/budget.h"
#include "hostshim/unique_fd.h"

namespace nvsentry::hostshim {

class EventSet {
 public:
  // `budget` (may be null: nothing is charged) outlives the set.
  explicit EventSet(BudgetAccount* budget = nullptr) : budget_(budget) {}
  ~EventSet();
  EventSet(const EventSet&) = delete;
  EventSet& operator=(const EventSet&) = delete;

  // The eventfd of event `id` (made now if new), or -errno: -ENOMEM when the open_fds budget
  // is spent, -EMFILE and the like when the sentry cannot make one.
  int Get(uint32_t id);
  // Closes the sentry's eventfd of `id` and gives its charge back (copies the guest holds stay
  // valid but never fire again). A no-op for an event never made.
  void Close(uint32_t id);
  // Makes the event readable (a no-op for an event nobody queried).
  void Signal(uint32_t id);
  // Consumes a pending signal; true when there was one.
  bool Clear(uint32_t id);
  // Eventfds held now.
  size_t size() const;

 private:
  BudgetAccount* const budget_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<uint32_t, UniqueFd> fds_ ABSL_GUARDED_BY(mu_);
};

}  // namespace nvsentry::hostshim
