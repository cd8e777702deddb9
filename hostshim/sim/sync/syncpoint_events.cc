#include "hostshim/sim/sync/syncpoint_events.h"

#include <atomic>

#include "absl/synchronization/mutex.h"
#include "hostshim/backend.h"
#include "hostshim/events.h"

namespace nvsentry::hostshim::sim {

using abi::NvError;

namespace {

struct Slot {
  bool allocated = false;
  bool picked = false;  // allocated by WAIT_EVENT rather than by the guest
  uint32_t syncpt = 0;  // of the last wait armed here
};

// A CLEAR_EVENT_WAIT argument: a bare slot, or the event id 0x10000000 | id << 16 | slot.
bool DecodeEvent(uint32_t event, uint32_t* slot) {
  if ((event >> 29) != 0) return false;
  *slot = (event & SyncpointEvents::kAllocatedFlag) ? (event & 0xFFFF) : event;
  return *slot < SyncpointEvents::kSlots;
}

}  // namespace

struct SyncpointEvents::Core {
  explicit Core(BudgetAccount* budget) : fds(budget) {}
  absl::Mutex mu;
  Slot slots[kSlots] ABSL_GUARDED_BY(mu);
  // The armed wait of each slot (null when idle); identifies which waiter may still fire.
  std::shared_ptr<Waiter> armed[kSlots] ABSL_GUARDED_BY(mu);
  EventSet fds;  // its own lock, always taken after `mu`
};

// One armed wait. The Syncpoints table owns it until it fires or is dropped; cancelling only
// marks it, and the table's sweep then drops it.
class SyncpointEvents::Waiter : public SyncpointWaiter {
 public:
  Waiter(std::weak_ptr<Core> core, uint32_t slot) : core_(std::move(core)), slot_(slot) {}

  void Reached(uint32_t) override { Fire(true); }
  void TimedOut() override { Fire(false); }  // not expected: armed waits have no deadline
  bool Abandoned() override {
    return cancelled_.load(std::memory_order_acquire) || core_.expired();
  }
  // Under the core's lock, as the slot lets go of it: the charge goes back now, and the table
  // drops the waiter at its next sweep.
  void Cancel() {
    cancelled_.store(true, std::memory_order_release);
    hold.Release();
    NoteAbandonedCall();
  }

  BudgetHold hold;  // parked_waits, taken before the table keeps the waiter

 private:
  void Fire(bool signal) {
    if (cancelled_.load(std::memory_order_acquire)) return;
    std::shared_ptr<Core> core = core_.lock();
    if (core == nullptr) return;
    absl::MutexLock l(&core->mu);
    // Cancelled, or the slot re-armed, while this callback was on its way: not ours to fire.
    if (core->armed[slot_].get() != this) return;
    hold.Release();
    core->armed[slot_].reset();  // the table's caller still holds this waiter
    if (signal) core->fds.Signal(slot_);
  }

  std::weak_ptr<Core> core_;
  const uint32_t slot_;
  std::atomic<bool> cancelled_{false};
};

SyncpointEvents::SyncpointEvents(Syncpoints& syncpoints, std::shared_ptr<BudgetAccount> budget)
    : syncpoints_(syncpoints),
      budget_(std::move(budget)),
      core_(std::make_shared<Core>(budget_.get())) {}

SyncpointEvents::~SyncpointEvents() {
  absl::MutexLock l(&core_->mu);
  for (auto& w : core_->armed) {
    if (w != nullptr) w->Cancel();
    w.reset();
  }
}

NvError SyncpointEvents::Alloc(uint32_t slot) {
  if (slot >= kSlots) return NvError::kBadParameter;
  Core& c = *core_;
  absl::MutexLock l(&c.mu);
  if (c.armed[slot] != nullptr) return NvError::kBusy;
  // The eventfd exists from now on, so a signal can never fall before the guest's query.
  if (c.fds.Get(slot) < 0) return NvError::kInsufficientMemory;
  c.fds.Clear(slot);
  c.slots[slot] = {true, false, 0};
  return NvError::kSuccess;
}

NvError SyncpointEvents::Free(uint32_t slot) {
  if (slot >= kSlots) return NvError::kBadParameter;
  Core& c = *core_;
  absl::MutexLock l(&c.mu);
  if (!c.slots[slot].allocated) return NvError::kBadParameter;
  if (c.armed[slot] != nullptr) return NvError::kBusy;
  c.slots[slot] = {};
  c.fds.Close(slot);
  return NvError::kSuccess;
}

NvError SyncpointEvents::FreeBatch(uint64_t mask) {
  Core& c = *core_;
  absl::MutexLock l(&c.mu);
  for (uint32_t s = 0; s < kSlots; ++s)
    if ((mask >> s & 1) && c.slots[s].allocated && c.armed[s] != nullptr) return NvError::kBusy;
  for (uint32_t s = 0; s < kSlots; ++s) {
    if ((mask >> s & 1) && c.slots[s].allocated) {
      c.slots[s] = {};
      c.fds.Close(s);
    }
  }
  return NvError::kSuccess;
}

std::shared_ptr<SyncpointWaiter> SyncpointEvents::Arm(uint32_t slot, std::shared_ptr<Waiter>* w) {
  auto made = std::make_shared<Waiter>(core_, slot);
  if (!made->hold.Take(budget_, BudgetKind::kParkedWaits)) return nullptr;
  *w = made;
  return made;
}

NvError SyncpointEvents::WaitEx(uint32_t id, uint32_t thresh, int32_t timeout_ms, uint32_t* value) {
  const uint32_t slot = *value;
  if (!Syncpoints::ValidId(id) || slot >= kSlots) return NvError::kBadParameter;
  Core& c = *core_;
  absl::MutexLock l(&c.mu);
  if (!c.slots[slot].allocated) return NvError::kBadParameter;
  if (c.armed[slot] != nullptr) return NvError::kBusy;
  std::shared_ptr<Waiter> w;
  uint32_t now = 0;
  auto start = syncpoints_.Wait(
      id, thresh, timeout_ms == 0 ? 0 : -1, [&] { return Arm(slot, &w); }, &now);
  if (start == Syncpoints::WaitStart::kReached) {
    *value = now;
    return NvError::kSuccess;
  }
  if (start == Syncpoints::WaitStart::kRefused) return NvError::kInsufficientMemory;
  if (start == Syncpoints::WaitStart::kParked) {
    // A signal left from an earlier wait must not answer this one.
    c.fds.Clear(slot);
    c.armed[slot] = std::move(w);
    c.slots[slot].syncpt = id;
  }
  *value = id << 4 | slot;
  return NvError::kTimeout;
}

NvError SyncpointEvents::WaitAllocating(uint32_t id, uint32_t thresh, int32_t timeout_ms,
                                        uint32_t* value) {
  if (!Syncpoints::ValidId(id)) return NvError::kBadParameter;
  const uint32_t id_bits = (id & 0xFFF) << 16;
  uint32_t now = syncpoints_.Read(id);
  if (SyncptReached(now, thresh)) {
    *value = now;
    return NvError::kSuccess;
  }
  if (timeout_ms == 0) {
    *value = id_bits;
    return NvError::kTimeout;
  }
  Core& c = *core_;
  absl::MutexLock l(&c.mu);
  uint32_t slot = kSlots, free_slot = kSlots, other = kSlots;
  for (uint32_t s = 0; s < kSlots && slot == kSlots; ++s) {
    const Slot& e = c.slots[s];
    if (!e.allocated) {
      if (free_slot == kSlots) free_slot = s;
    } else if (e.picked && c.armed[s] == nullptr) {
      if (e.syncpt == id)
        slot = s;
      else if (other == kSlots)
        other = s;
    }
  }
  if (slot == kSlots) slot = free_slot != kSlots ? free_slot : other;
  if (slot == kSlots) return NvError::kBusy;
  if (c.fds.Get(slot) < 0) return NvError::kInsufficientMemory;
  std::shared_ptr<Waiter> w;
  auto start = syncpoints_.Wait(
      id, thresh, -1, [&] { return Arm(slot, &w); }, &now);
  if (start == Syncpoints::WaitStart::kReached) {
    // A free slot this wait did not keep holds no eventfd (nor its charge).
    if (!c.slots[slot].allocated) c.fds.Close(slot);
    *value = now;
    return NvError::kSuccess;
  }
  if (start == Syncpoints::WaitStart::kRefused) return NvError::kInsufficientMemory;
  c.fds.Clear(slot);
  c.armed[slot] = std::move(w);
  c.slots[slot] = {true, true, id};
  *value = kAllocatedFlag | id_bits | slot;
  return NvError::kTimeout;
}

NvError SyncpointEvents::ClearWait(uint32_t event) {
  uint32_t slot;
  if (!DecodeEvent(event, &slot)) return NvError::kBadParameter;
  Core& c = *core_;
  absl::MutexLock l(&c.mu);
  if (!c.slots[slot].allocated) return NvError::kBadParameter;
  if (c.armed[slot] != nullptr) {
    c.armed[slot]->Cancel();
    c.armed[slot].reset();
  }
  c.fds.Clear(slot);
  return NvError::kSuccess;
}

NvError SyncpointEvents::Query(uint32_t event_id, int* eventfd) {
  if ((event_id >> 28) != 1) return NvError::kBadParameter;
  const uint32_t slot = event_id & 0xFFFF;
  if (slot >= kSlots) return NvError::kBadParameter;
  Core& c = *core_;
  absl::MutexLock l(&c.mu);
  if (!c.slots[slot].allocated) return NvError::kBadParameter;
  int fd = c.fds.Get(slot);
  if (fd < 0) return NvError::kInsufficientMemory;
  *eventfd = fd;
  return NvError::kSuccess;
}

bool SyncpointEvents::Allocated(uint32_t slot) const {
  if (slot >= kSlots) return false;
  absl::MutexLock l(&core_->mu);
  return core_->slots[slot].allocated;
}

bool SyncpointEvents::Armed(uint32_t slot) const {
  if (slot >= kSlots) return false;
  absl::MutexLock l(&core_->mu);
  return core_->armed[slot] != nullptr;
}

}  // namespace nvsentry::hostshim::sim
