// /dev/nvhost-ctrl on the simulated GPU: syncpoint read, increment and wait (a wait with a timeout
// parks the call, never the worker; InsufficientMemory when the guest's parked_waits budget is
// spent), the session's 64 syncpoint events (syncpoint_events.h), the
// GPU-wide host1x module mutexes, GET_CONFIG (the simulator has no configuration variables) and
// the syncpoint shift. One session per open; its events and its module locks end with it.
#pragma once

#include <memory>

#include "hostshim/backend.h"
#include "hostshim/budget.h"
#include "hostshim/sim/sync/module_mutexes.h"
#include "hostshim/sim/sync/syncpoint_events.h"
#include "hostshim/sim/sync/syncpoints.h"

namespace nvsentry::hostshim::sim {

class CtrlDevice : public DeviceBackend {
 public:
  // `budget` (may be null: nothing charged) is charged for the session's event fds (open_fds) and
  // takes the parked_waits charge of an armed event.
  CtrlDevice(Syncpoints& syncpoints, ModuleMutexes& mutexes,
             std::shared_ptr<BudgetAccount> budget = nullptr)
      : syncpoints_(syncpoints), mutexes_(mutexes), events_(syncpoints, std::move(budget)) {}
  ~CtrlDevice() override;
  Result Ioctl(Call& call) override;
  // Syncpoint events 0x10000000 | slot (bits 16-27, the syncpoint of WAIT_EVENT's answer, are
  // ignored); the slot must be allocated.
  abi::NvError QueryEvent(uint32_t id, int* eventfd) override;

  SyncpointEvents& events() { return events_; }

 private:
  Result Wait(Call& call, bool report_value);
  Syncpoints& syncpoints_;
  ModuleMutexes& mutexes_;
  SyncpointEvents events_;
};

}  // namespace nvsentry::hostshim::sim
