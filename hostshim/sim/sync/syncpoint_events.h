// The syncpoint events of one /dev/nvhost-ctrl session: 64 slots, each an eventfd the guest gets
// through QueryEvent(0x10000000 | slot) once the slot is allocated. The sentry holds a slot's
// eventfd from its allocation to its free (or the session's end), charged to open_fds meanwhile. A
// wait on an event never parks the guest: it answers Success when the fence is already reached, and
// otherwise Timeout at once, having armed the event (unless the timeout was 0) so that its eventfd
// becomes readable when the syncpoint reaches the threshold. The guest then waits on the eventfd
// with its own timeout and, giving up, cancels the armed wait with CLEAR_EVENT_WAIT. Every slot
// index from the guest is checked against 64 before it is used.
//
// Encodings (Switchbrew): WAIT_EVENT (the driver picks the slot) answers
// 0x10000000 | (id & 0xFFF) << 16 | slot; WAIT_EVENT_EX (the guest names the slot) answers
// id << 4 | slot. QueryEvent and CLEAR_EVENT_WAIT take the first form (the syncpoint bits are
// ignored); CLEAR_EVENT_WAIT also takes a bare slot.
//
// Thread-safe. Lock order: this object's lock, then the Syncpoints table's (Wait is called under
// it; the table calls its waiters back outside its own lock, and they take this one).
#pragma once

#include <cstdint>
#include <memory>

#include "abi/nverror.h"
#include "hostshim/budget.h"
#include "hostshim/sim/sync/syncpoints.h"

namespace nvsentry::hostshim::sim {

class SyncpointEvents {
 public:
  static constexpr uint32_t kSlots = 64;
  static constexpr uint32_t kAllocatedFlag = 1u << 28;

  // `budget` (null: nothing charged) is charged one open_fds per eventfd held, and an armed wait
  // holds one parked_waits charge until it fires or is cancelled; an unreached wait the budget
  // cannot take is InsufficientMemory, nothing armed.
  explicit SyncpointEvents(Syncpoints& syncpoints, std::shared_ptr<BudgetAccount> budget = nullptr);
  // Cancels every armed wait (the Syncpoints table drops them at its next sweep) and closes the
  // session's eventfds (copies in the guest stay valid but never fire again).
  ~SyncpointEvents();
  SyncpointEvents(const SyncpointEvents&) = delete;
  SyncpointEvents& operator=(const SyncpointEvents&) = delete;

  // SYNCPT_ALLOC_EVENT: makes the slot's eventfd. Allocating an idle slot again resets it (drops a
  // pending signal); an armed one is Busy. BadParameter for slot >= 64; InsufficientMemory when
  // the open_fds budget is spent.
  abi::NvError Alloc(uint32_t slot);
  // SYNCPT_FREE_EVENT: closes the slot's eventfd (the guest's copies never fire again).
  // BadParameter for slot >= 64 or not allocated; Busy while armed.
  abi::NvError Free(uint32_t slot);
  // SYNCPT_FREE_EVENT_BATCH: frees every allocated slot of the mask (bits of unallocated slots
  // are ignored); Busy, freeing none, when one of them is armed.
  abi::NvError FreeBatch(uint64_t mask);
  // SYNCPT_WAIT_EVENT_EX: *value in = the slot (must be allocated and not armed; Busy when armed).
  // Success: *value = the syncpoint's value; Timeout: *value = id << 4 | slot.
  abi::NvError WaitEx(uint32_t id, uint32_t thresh, int32_t timeout_ms, uint32_t* value);
  // SYNCPT_WAIT_EVENT: the driver picks a slot (an idle one it picked before for this syncpoint,
  // else a free slot, else any idle one it picked before; Busy when there is none). Success:
  // *value = the syncpoint's value; Timeout: *value = 0x10000000 | (id & 0xFFF) << 16 | slot
  // when armed, (id & 0xFFF) << 16 (no event) when the timeout was 0.
  abi::NvError WaitAllocating(uint32_t id, uint32_t thresh, int32_t timeout_ms, uint32_t* value);
  // SYNCPT_CLEAR_EVENT_WAIT: cancels the slot's armed wait, if any, and drops a pending signal.
  abi::NvError ClearWait(uint32_t event);
  // QueryEvent(0x10000000 | [id << 16 |] slot) of an allocated slot: its eventfd (owned here).
  abi::NvError Query(uint32_t event_id, int* eventfd);

  bool Allocated(uint32_t slot) const;
  bool Armed(uint32_t slot) const;

 private:
  struct Core;
  class Waiter;
  // The waiter of an armed wait, charged to parked_waits (under the table's lock, from Wait); null
  // when the budget is spent.
  std::shared_ptr<SyncpointWaiter> Arm(uint32_t slot, std::shared_ptr<Waiter>* w);
  Syncpoints& syncpoints_;
  const std::shared_ptr<BudgetAccount> budget_;
  std::shared_ptr<Core> core_;  // waiters hold it weakly: the session's end is the events' end
};

}  // namespace nvsentry::hostshim::sim
