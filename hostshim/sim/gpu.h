// The built-in simulated Tegra X1 GPU (GM20B): one per sentry, shared by every guest process, like
// the hardware of one machine. It owns the GPU-wide state (syncpoints, the nvmap object table and
// its per-process clients, the ZBC table, the engine threads that run channels) and makes a
// device session for each open of a node. Every object a guest makes through it is charged to
// the guest's budgets.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "abi/catalogue.h"
#include "abi/services.h"
#include "absl/time/time.h"
#include "hostshim/backend.h"
#include "hostshim/budget.h"
#include "hostshim/sim/display/frame.h"
#include "hostshim/sim/engines/stream_policy.h"
#include "hostshim/sim/sync/syncpoints.h"

namespace nvsentry::hostshim::sim {

class Nvmap;
class Runlist;
class GpuControlState;
class ModuleMutexes;
class Display;

struct GpuOptions {
  // The guest's budgets; null: the policy defaults.
  std::shared_ptr<BudgetAccount> budget;
  // NvDrvPermission bits: FROM_ID (9, 12), the VA windows (13, 15). Default: nvdrv's latest.
  uint32_t permission_mask = abi::kDefaultServiceMask;
  uint64_t aruid = 0;      // the guest's applet resource user id (FROM_ID of exported objects)
  int engine_threads = 2;  // threads that run channels' command processors
  // What the policy says about the guest's command streams (default: every class may be bound).
  StreamPolicy stream;
  // Each `frames_every`-th frame the display presents (hostshim/sim/display/frame.h), one per
  // window, on the display's thread; null: none is copied out.
  std::function<void(Frame)> frame_presented;
  uint32_t frames_every = 1;
  // Asked before a frame's memory is read: false spares the copy (the recorder would drop it).
  std::function<bool()> frame_wanted;
  // For the trace: a line per finished host1x engine job (what its stream wrote, by name) and per
  // stopped host1x channel, under the submitting thread's id. Called on engine threads; empty:
  // nobody listens.
  std::function<void(pid_t tid, std::string_view text)> host1x_note;
};

class Gpu : public Driver {
 public:
  explicit Gpu(GpuOptions options = {});
  ~Gpu() override;
  Gpu(const Gpu&) = delete;
  Gpu& operator=(const Gpu&) = delete;

  // A session on `device`, or null with the reason in `refused` (a budget or the syncpoints are
  // spent).
  std::unique_ptr<DeviceBackend> Open(const abi::DeviceDesc& device,
                                      abi::NvError& refused) override;

  Syncpoints& syncpoints() { return syncpoints_; }
  Nvmap& nvmap() { return *nvmap_; }
  BudgetAccount& budget() { return *options_.budget; }
  const StreamPolicy& stream_policy() const { return options_.stream; }
  Display& display() { return *display_; }
  // Lets the engine threads finish the steps they are in (at most `timeout`): called when the
  // guest has ended, so the trace records of the jobs it ran are written before the sentry exits.
  void Quiesce(absl::Duration timeout);
  // One paragraph for DumpStatus: objects, pins (process and range), budgets in use.
  std::string Status() const override;

 private:
  GpuOptions options_;
  Syncpoints syncpoints_;
  std::unique_ptr<Nvmap> nvmap_;
  std::unique_ptr<GpuControlState> control_;
  std::unique_ptr<ModuleMutexes> module_mutexes_;
  std::unique_ptr<Display> display_;  // its clock increments syncpoints
  std::unique_ptr<Runlist> runlist_;  // last: its threads stop before what they use goes
};

}  // namespace nvsentry::hostshim::sim
