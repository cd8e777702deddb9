// The events a device session hands out through QueryEvent: one eventfd per event id, made on
// first query, owned here and closed with the session. The device signals an event by id.
#pragma once

#include <cstdint>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"

namespace nvsentry::hostshim {

class EventSet {
 public:
  EventSet() = default;
  ~EventSet();
  EventSet(const EventSet&) = delete;
  EventSet& operator=(const EventSet&) = delete;

  // The eventfd of event `id` (made now if new), or -errno.
  int Get(uint32_t id);
  // Makes the event readable (a no-op for an event nobody queried).
  void Signal(uint32_t id);
  // Consumes a pending signal; true when there was one.
  bool Clear(uint32_t id);

 private:
  absl::Mutex mu_;
  absl::flat_hash_map<uint32_t, int> fds_ ABSL_GUARDED_BY(mu_);
};

}  // namespace nvsentry::hostshim
