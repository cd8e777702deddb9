#include "hostshim/sim/ctrl_device.h"

#include "abi/devices/nvhost_ctrl.h"
#include "hostshim/unimplemented.h"

namespace nvsentry::hostshim::sim {
namespace ctrl = abi::nvhost_ctrl;
using abi::NvError;

namespace {

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

abi::NvError CtrlDevice::QueryEvent(uint32_t id, int* eventfd) {
  if ((id >> 28) != 1 || (id & 0x0FFFFFFF) >= 64) return NvError::kBadParameter;
  int fd = events_.Get(id & 0x3F);
  if (fd < 0) return NvError::kInsufficientMemory;
  *eventfd = fd;
  return NvError::kSuccess;
}

Result CtrlDevice::Ioctl(Call& call) {
  switch (call.desc.code) {
    case ctrl::kSyncptRead:
    case ctrl::kSyncptReadMax: {
      auto& a = ArgAs<ctrl::SyncptIdValue>(call.arg);
      if (!Syncpoints::ValidId(a.id)) return Result::Done(NvError::kBadParameter);
      a.value = call.desc.code == ctrl::kSyncptRead ? syncpoints_.Read(a.id)
                                                     : syncpoints_.ReadMax(a.id);
      return Result::Done(NvError::kSuccess);
    }
    case ctrl::kSyncptIncr: {
      auto& a = ArgAs<ctrl::SyncptIncr>(call.arg);
      if (!Syncpoints::ValidId(a.id)) return Result::Done(NvError::kBadParameter);
      syncpoints_.Increment(a.id);
      return Result::Done(NvError::kSuccess);
    }
    case ctrl::kSyncptWait:
      return Wait(call, false);
    case ctrl::kSyncptWaitEx:
      return Wait(call, true);
    default:
      return Unimplemented(call.desc);
  }
}

Result CtrlDevice::Wait(Call& call, bool report_value) {
  // SyncptWait is the prefix of SyncptWaitEx; both start with id, thresh, timeout.
  const auto a = ArgAs<ctrl::SyncptWait>(call.arg);
  if (!Syncpoints::ValidId(a.id)) return Result::Done(NvError::kBadParameter);
  uint32_t value = 0;
  auto start = syncpoints_.Wait(a.id, a.thresh, a.timeout, [&] {
    return std::make_shared<WaitCompletion>(call.parker.Park(), report_value);
  }, &value);
  if (start == Syncpoints::WaitStart::kReached) {
    if (report_value) ArgAs<ctrl::SyncptWaitEx>(call.arg).value = value;
    return Result::Done(NvError::kSuccess);
  }
  if (start == Syncpoints::WaitStart::kTimedOut) return Result::Done(NvError::kTimeout);
  return Result::Parked();
}

}  // namespace nvsentry::hostshim::sim
