#include "hostshim/sim/sync/ctrl_device.h"

#include <cstring>

#include "abi/devices/nvhost_ctrl.h"
#include "abi/ioctl_code.h"
#include "hostshim/unimplemented.h"

namespace nvsentry::hostshim::sim {
namespace ctrl = abi::nvhost_ctrl;
using abi::NvError;

namespace {

// The simulated host1x has no syncpoint FIFO: Switchbrew's shift for "FIFO disabled".
constexpr uint32_t kSyncptShift = 0;

bool Terminated(const char* s, size_t n) { return std::memchr(s, 0, n) != nullptr; }

// Bridges a parked syncpoint wait to the guest call it answers.
class WaitCompletion : public SyncpointWaiter {
 public:
  WaitCompletion(std::shared_ptr<Continuation> call, bool report_value)
      : call_(std::move(call)), report_value_(report_value) {}
  void Reached(uint32_t value) override {
    if (report_value_) ArgAs<ctrl::SyncptWaitEx>(call_->arg()).value = value;
    call_->Finish(NvError::kSuccess);
  }
  void TimedOut() override { call_->Finish(NvError::kTimeout); }
  bool Abandoned() override { return call_->Abandoned(); }

 private:
  std::shared_ptr<Continuation> call_;
  bool report_value_;
};

}  // namespace

CtrlDevice::~CtrlDevice() { mutexes_.ReleaseAll(this); }

abi::NvError CtrlDevice::QueryEvent(uint32_t id, int* eventfd) {
  return events_.Query(id, eventfd);
}

Result CtrlDevice::Ioctl(Call& call) {
  switch (call.desc.code) {
    case ctrl::kSyncptRead:
    case ctrl::kSyncptReadMax: {
      auto& a = ArgAs<ctrl::SyncptIdValue>(call.arg);
      if (!Syncpoints::ValidId(a.id)) return Result::Done(NvError::kBadParameter);
      a.value =
          call.desc.code == ctrl::kSyncptRead ? syncpoints_.Read(a.id) : syncpoints_.ReadMax(a.id);
      return Result::Done(NvError::kSuccess);
    }
    case ctrl::kSyncptIncr: {
      auto& a = ArgAs<ctrl::SyncptIncr>(call.arg);
      if (!Syncpoints::ValidId(a.id)) return Result::Done(NvError::kBadParameter);
      syncpoints_.Increment(a.id);
      return Result::Done(NvError::kSuccess);
    }
    case ctrl::kSyncptWait: return Wait(call, false);
    case ctrl::kSyncptWaitEx: return Wait(call, true);
    case ctrl::kSyncptAllocEvent:
      return Result::Done(events_.Alloc(ArgAs<ctrl::EventSlot>(call.arg).event_slot));
    case ctrl::kSyncptFreeEvent:
      return Result::Done(events_.Free(ArgAs<ctrl::EventSlot>(call.arg).event_slot));
    case ctrl::kSyncptFreeEventBatch:
      return Result::Done(events_.FreeBatch(ArgAs<ctrl::EventSlotMask>(call.arg).event_slot_mask));
    case ctrl::kSyncptClearEventWait:
      return Result::Done(events_.ClearWait(ArgAs<ctrl::EventSlot>(call.arg).event_slot));
    case ctrl::kSyncptWaitEvent:
    case ctrl::kSyncptWaitEventEx: {
      // The answer's value matters with Timeout too (it names the armed event), so it is set
      // whatever the outcome.
      auto& a = ArgAs<ctrl::SyncptWaitEx>(call.arg);
      uint32_t value = a.value;
      NvError e = call.desc.code == ctrl::kSyncptWaitEventEx
                      ? events_.WaitEx(a.id, a.thresh, a.timeout, &value)
                      : events_.WaitAllocating(a.id, a.thresh, a.timeout, &value);
      a.value = value;
      return Result::Done(e);
    }
    case ctrl::kModuleMutex: {
      const auto& a = ArgAs<ctrl::ModuleMutex>(call.arg);
      return Result::Done(mutexes_.Request(this, a.id, a.lock));
    }
    case ctrl::kModuleRegRdWr:
      // Switchbrew: the firmware keeps the 32-bit layout and the call does not work; the simulator
      // has no module registers to offer either.
      return Result::Done(NvError::kNotSupported);
    case ctrl::kGetConfig: {
      // Production mode is answered before the backend. Outside it, every lookup misses: the
      // simulated GPU has no configuration variables.
      const auto& a = ArgAs<ctrl::GetConfig>(call.arg);
      if (!Terminated(a.name, sizeof a.name) || !Terminated(a.key, sizeof a.key))
        return Result::Done(NvError::kBadParameter);
      return Result::Done(NvError::kConfigVarNotFound);
    }
    case ctrl::kSyncptGetShift:
      ArgAs<ctrl::GetShift>(call.arg).syncpt_shift = kSyncptShift;
      return Result::Done(NvError::kSuccess);
    default: return Unimplemented(call);
  }
}

Result CtrlDevice::Wait(Call& call, bool report_value) {
  // SyncptWait is the prefix of SyncptWaitEx; both start with id, thresh, timeout.
  const auto a = ArgAs<ctrl::SyncptWait>(call.arg);
  if (!Syncpoints::ValidId(a.id)) return Result::Done(NvError::kBadParameter);
  uint32_t value = 0;
  auto start = syncpoints_.Wait(
      a.id, a.thresh, a.timeout,
      [&]() -> std::shared_ptr<SyncpointWaiter> {
        std::shared_ptr<Continuation> parked = call.parker.Park();
        if (parked == nullptr) return nullptr;
        return std::make_shared<WaitCompletion>(std::move(parked), report_value);
      },
      &value);
  switch (start) {
    case Syncpoints::WaitStart::kReached:
      if (report_value) ArgAs<ctrl::SyncptWaitEx>(call.arg).value = value;
      return Result::Done(NvError::kSuccess);
    case Syncpoints::WaitStart::kTimedOut: return Result::Done(NvError::kTimeout);
    // The parked_waits budget: what the Linux driver answers when it cannot allocate a waiter.
    case Syncpoints::WaitStart::kRefused: return Result::Done(NvError::kInsufficientMemory);
    case Syncpoints::WaitStart::kParked: break;
  }
  return Result::Parked();
}

}  // namespace nvsentry::hostshim::sim
