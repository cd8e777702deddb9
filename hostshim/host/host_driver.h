// The host backend: the GPU's five devices forwarded to a Linux for Tegra host's own
// (docs/host-passthrough.md). The sentry opens the host's nodes itself (the guest never holds a
// host fd) and translates each call the copy engine validated from the guest ABI to the host's.
//
// What stays in the sentry: the guest's nvmap table (ids, FROM_ID across processes, budgets, the
// guest memory each object names): a host driver cannot pin another process's memory, so the
// guest's /dev/nvmap is served by the same table as with the simulated GPU, and each object gets
// a host twin when the GPU first needs it (hostshim/host/object_mirror.h moves the contents).
#pragma once

#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "hostshim/backend.h"
#include "hostshim/budget.h"
#include "hostshim/host/host_call.h"

namespace nvsentry::hostshim::sim {
class Nvmap;
struct StreamPolicy;
}  // namespace nvsentry::hostshim::sim

namespace nvsentry::hostshim::host {

struct HostOptions {
  std::string dev_dir = "/dev";  // where the host's nodes are (--host-dev-dir)
  std::shared_ptr<BudgetAccount> budget;
  sim::Nvmap* nvmap = nullptr;  // the guest's nvmap table; outlives the driver
  HostNote note;                // --trace: each host call after the guest's (null: none)
  // The guest's command-stream rules (the simulated GPU's, sim/engines/stream_policy.h); outlives
  // the driver. Null: every class may be bound.
  const sim::StreamPolicy* stream = nullptr;
};

class HostContext;

class HostDriver : public Driver {
 public:
  explicit HostDriver(HostOptions options);
  ~HostDriver() override;
  HostDriver(const HostDriver&) = delete;
  HostDriver& operator=(const HostDriver&) = delete;

  // A session of one of the five devices: the guest's nvmap table for /dev/nvmap, else a new open
  // of the host's node of the same name under dev_dir (DeviceNotFound, with a log line, when the
  // host has none or refuses it). Other devices: null, NotSupported (the policy never routes
  // them here).
  std::unique_ptr<DeviceBackend> Open(const abi::DeviceDesc& device,
                                      abi::NvError& refused) override;
  std::string Status() const override;

 private:
  // The shared state, made at the first open (null while the host's nodes cannot be opened).
  HostContext* Context(abi::NvError& refused);

  HostOptions options_;
  absl::Mutex mu_;
  std::unique_ptr<HostContext> context_ ABSL_GUARDED_BY(mu_);
};

}  // namespace nvsentry::hostshim::host
