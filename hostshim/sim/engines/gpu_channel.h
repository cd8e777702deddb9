// /dev/nvhost-gpu on the simulated GPU: one GPU channel per open. This is the ioctl side: it checks
// each request against what Switchbrew and the Linux driver accept and hands the work to the
// channel's ChannelEngine (channel_engine.h), which runs it on the GPU's engine threads.
//
// Decisions where Switchbrew is silent (docs/simulated-gpu.md has the table):
// - The channel takes its kChannels budget charge and its own syncpoint when it is opened
//   (InsufficientMemory when either is exhausted); both come back when the channel is gone.
// - ALLOC_GPFIFO: 1..65536 entries (BadParameter otherwise); the plain form rounds up to a power of
//   two, the _EX forms require one (as Linux); a second allocation is AlreadyAllocated. The
//   returned fence is {channel syncpoint, its max}.
// - ALLOC_OBJ_CTX: the GM20B classes 3D 0xB197, compute 0xB1C0, I2M 0xA140, 2D 0x902D, DMA 0xB0B5
//   (anything else BadParameter); InvalidState without an address space; one context per channel
//   (seed), so a second is AlreadyAllocated. obj_id is the class number.
// - SUBMIT_GPFIFO*: flags bit 0 fence wait (engine side), bit 1 fence increment (+2), bit 4
//   suppress WFI, bit 8 the entries themselves increment fence.value times; wait with bit 8 is
//   BadParameter. The fence is always returned. A failed channel answers Timeout (Linux's
//   ETIMEDOUT) until FORCE_RESET; no ring yet is InvalidState; a submit larger than the whole ring
//   is InsufficientMemory (Linux ENOMEM); a full ring is Busy.
// - FORCE_RESET drops pending work, clears the error and restarts the channel (Linux instead
//   marks the channel dead; nvdrv clients expect to go on).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "absl/synchronization/mutex.h"
#include "hostshim/budget.h"
#include "hostshim/sim/engines/channel_engine.h"
#include "hostshim/sim/engines/runlist.h"
#include "hostshim/sim/memory/channel_device.h"
#include "hostshim/sim/memory/nvmap.h"
#include "hostshim/sim/sync/syncpoints.h"

namespace nvsentry::hostshim::sim {

// What a channel needs from the GPU; everything here outlives the channel (Syncpoints must
// outlive the Runlist too: a channel's last step may end on an engine thread).
struct ChannelDeps {
  Syncpoints& syncpoints;
  Runlist& runlist;
  Nvmap& nvmap;
  BudgetAccount* budget = nullptr;
  std::function<uint64_t()> gpu_time_ns = nullptr;  // null: GpuTimeNs() (gpu_clock.h)
  const StreamPolicy* policy = nullptr;  // the guest's command-stream rules (null: allow all)
};

class GpuChannel : public ChannelDevice {
 public:
  // Charges kChannels and allocates the channel's syncpoint.
  static abi::NvError Create(const ChannelDeps& deps, std::unique_ptr<GpuChannel>* out);
  ~GpuChannel() override;

  Result Ioctl(Call& call) override;
  // Events 1 (SM breakpoint), 2 (SM pause), 3 (error notifier; signalled when the channel fails).
  abi::NvError QueryEvent(uint32_t id, int* eventfd) override;
  abi::NvError BindAddressSpace(std::shared_ptr<AddressSpace> as) override;

  uint32_t syncpoint_id() const { return engine_->syncpoint_id(); }
  ChannelEngine& engine() { return *engine_; }

 private:
  GpuChannel(Nvmap& nvmap, Syncpoints& syncpoints, std::shared_ptr<ChannelEngine> engine)
      : nvmap_(nvmap), syncpoints_(syncpoints), engine_(std::move(engine)) {}

  Result SetNvmapFd(Call& call);
  Result AllocGpfifo(Call& call);
  Result AllocObjCtx(Call& call);
  Result Submit(Call& call);
  Result SetErrorNotifier(Call& call);
  Result Wait(Call& call);
  Result EventIdControl(Call& call);
  Result GetErrorInfo(Call& call);
  Result GetErrorNotification(Call& call);
  pid_t CallerTgid(Call& call) const;

  Nvmap& nvmap_;
  Syncpoints& syncpoints_;
  const std::shared_ptr<ChannelEngine> engine_;

  absl::Mutex mu_;
  uint32_t obj_class_ ABSL_GUARDED_BY(mu_) = 0;
  uint32_t priority_ ABSL_GUARDED_BY(mu_) = 0x64;
  uint32_t timeslice_us_ ABSL_GUARDED_BY(mu_) = 0;
  uint32_t timeout_ms_ ABSL_GUARDED_BY(mu_) = 0;  // stored; the watchdog is not simulated
  uint64_t user_data_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t zcull_va_ ABSL_GUARDED_BY(mu_) = 0;
  uint32_t zcull_mode_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace nvsentry::hostshim::sim
