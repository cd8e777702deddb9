#include "hostshim/sim/gpu.h"

#include "absl/strings/str_cat.h"
#include "hostshim/sim/display/display.h"
#include "hostshim/sim/display/display_ctrl_devices.h"
#include "hostshim/sim/display/frame_capture.h"
#include "hostshim/sim/display/nvdisp_device.h"
#include "hostshim/sim/engines/ctrl_gpu_device.h"
#include "hostshim/sim/engines/gpu_channel.h"
#include "hostshim/sim/engines/runlist.h"
#include "hostshim/sim/host1x/host1x_device.h"
#include "hostshim/sim/memory/as_device.h"
#include "hostshim/sim/memory/nvmap.h"
#include "hostshim/sim/memory/nvmap_device.h"
#include "hostshim/sim/sync/ctrl_device.h"
#include "hostshim/sim/sync/module_mutexes.h"
#include "hostshim/unimplemented.h"

namespace nvsentry::hostshim::sim {
namespace {

// A device that could not be made (a budget is spent): every ioctl answers why.
}  // namespace

Gpu::Gpu(GpuOptions options) : options_(std::move(options)) {
  if (!options_.budget) options_.budget = std::make_shared<BudgetAccount>(abi::Budgets{});
  nvmap_ = std::make_unique<Nvmap>(options_.budget.get(), options_.permission_mask, options_.aruid);
  control_ = std::make_unique<GpuControlState>();
  module_mutexes_ = std::make_unique<ModuleMutexes>();
  runlist_ = std::make_unique<Runlist>(options_.engine_threads);
  display_ = std::make_unique<Display>(syncpoints_);
  if (options_.frame_presented)
    display_->SetFrameObserver(
        CaptureFrames(options_.frame_presented, options_.frames_every, options_.frame_wanted));
}

Gpu::~Gpu() {
  // The engine threads go first: a channel's last step may touch syncpoints and nvmap objects.
  runlist_.reset();
  display_.reset();
}

std::unique_ptr<DeviceBackend> Gpu::Open(const abi::DeviceDesc& device, abi::NvError& refused) {
  switch (device.id) {
    case abi::DeviceId::kNvhostCtrl:
      return std::make_unique<CtrlDevice>(syncpoints_, *module_mutexes_, options_.budget);
    case abi::DeviceId::kNvmap: return std::make_unique<NvmapDevice>(*nvmap_);
    case abi::DeviceId::kNvhostAsGpu:
      return std::make_unique<AsDevice>(*nvmap_, options_.budget.get(), options_.permission_mask);
    case abi::DeviceId::kNvhostCtrlGpu:
      return std::make_unique<CtrlGpuDevice>(*control_, options_.budget.get());
    case abi::DeviceId::kNvhostGpu: {
      std::unique_ptr<GpuChannel> channel;
      ChannelDeps deps{syncpoints_, *runlist_, *nvmap_, options_.budget.get()};
      deps.policy = &options_.stream;
      abi::NvError err = GpuChannel::Create(deps, &channel);
      if (err != abi::NvError::kSuccess) {
        refused = err;
        return nullptr;
      }
      return channel;
    }
    case abi::DeviceId::kNvdispDisp0:
      return std::make_unique<NvdispDevice>(display_->head(0), *nvmap_);
    case abi::DeviceId::kNvdispDisp1:
      return std::make_unique<NvdispDevice>(display_->head(1), *nvmap_);
    default: break;
  }
  if (auto d = OpenDisplayCtrlDevice(device, *display_)) return d;
  if (const Host1xEngine* engine = FindHost1xEngine(device.id)) {
    std::unique_ptr<Host1xDevice> channel;
    abi::NvError err = Host1xDevice::Create(
        {syncpoints_, *runlist_, *nvmap_, options_.budget.get(), &options_.host1x_note}, *engine,
        &channel);
    if (err != abi::NvError::kSuccess) {
      refused = err;
      return nullptr;
    }
    return channel;
  }
  return std::make_unique<UnimplementedDevice>(device, options_.budget.get());
}

void Gpu::Quiesce(absl::Duration timeout) { runlist_->WaitIdle(timeout); }

std::string Gpu::Status() const {
  std::string s = absl::StrCat("gpu: ", nvmap_->object_count(), " nvmap objects; budgets in use:");
  for (size_t k = 0; k < kBudgetKinds; ++k) {
    const auto kind = static_cast<BudgetKind>(k);
    absl::StrAppend(&s, " ", std::string(BudgetName(kind)), " ");
    absl::StrAppend(&s, options_.budget->used(kind), "/", options_.budget->limit(kind));
  }
  std::vector<PinInfo> pins = nvmap_->Pins();
  absl::StrAppend(&s, "; ", pins.size(), " pins");
  for (const PinInfo& p : pins) {
    if (p.pid < 0)
      absl::StrAppend(&s, " [id ", p.id, " sentry memory 0x", absl::Hex(p.size), " bytes, ",
                      p.mappings, " mappings]");
    else
      absl::StrAppend(&s, " [id ", p.id, " pid ", p.pid, " 0x", absl::Hex(p.guest_addr), "+0x",
                      absl::Hex(p.size), ", ", p.mappings, " mappings]");
  }
  return s;
}

}  // namespace nvsentry::hostshim::sim
