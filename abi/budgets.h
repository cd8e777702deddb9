// The guest's budgets: how much of each resource the driver keeps for one guest at most, part of
// the guest contract (a charge past a budget is refused with InsufficientMemory, or
// InsufficientTransferMemory for transfer_memory; docs/policy.md "Budgets"). A policy file sets
// them ([budgets]); hostshim/budget.h counts them live.
#pragma once

#include <cstdint>

namespace nvsentry::abi {

// What the guest may make the driver keep. 0 means "none allowed".
struct Budgets {
  uint64_t transfer_memory = 64ull << 20;  // largest Initialize size
  uint32_t open_fds = 1024;  // fds the sentry holds for the guest: sessions, event fds, pidfds
  uint32_t nvmap_objects = 1u << 16;
  uint32_t channels = 64;
  uint32_t address_spaces = 16;
  uint64_t pinned_bytes = 4ull << 30;
  uint32_t mappings = 1u << 16;  // GPU VA entries (MAP_BUFFER*, REMAP pieces, ALLOC_SPACE)
  uint32_t parked_waits = 1024;  // calls parked in the sentry at once (syncpoint and event waits)
  // Sentry memory behind submitted work not yet done: queued GPFIFO jobs and host1x jobs.
  uint64_t queued_bytes = 64ull << 20;
  // The host backend's twins (hostshim/host/twins.h): the pages of guest GPU memory either side
  // made other than zero, each kept once in the sentry (the agreed copy) and once in the host's
  // object. An eighth of pinned_bytes: what a guest touches, not what it declares, and on a 4 GiB
  // Jetson Nano the sentry's share stays an eighth of the machine.
  uint64_t twin_bytes = 512ull << 20;
};

}  // namespace nvsentry::abi
