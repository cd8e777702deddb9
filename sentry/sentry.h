// The sentry proper: worker threads that receive the guest's trapped calls and serve them. Opens
// of device paths become device sessions placed in the guest; ioctls on sessions go through the
// copy engine to the simulated GPU; everything else continues natively. No handler blocks on the
// guest: waits are parked and answered by whoever completes them.
#pragma once

#include <linux/seccomp.h>

#include <memory>
#include <thread>
#include <vector>

#include "hostshim/sim/gpu.h"
#include "proxy/guest_config.h"
#include "sentry/filter.h"
#include "sentry/listener.h"
#include "sentry/park_watch.h"
#include "sentry/parked_call.h"
#include "sentry/session_table.h"

namespace nvsentry::sentry {

struct SentryOptions {
  int workers = 0;           // 0: one per CPU, at least 2
  bool sync_wakeup = true;  // ask the kernel to wake workers on the guest's CPU (6.6+)
  proxy::GuestConfig guest;
};

class Sentry {
 public:
  Sentry(int listener_fd, const SentryOptions& options);
  void Start();
  SessionTable& sessions() { return sessions_; }

 private:
  void WorkerLoop();
  void Handle(const seccomp_notif& req);
  void HandleOpen(const seccomp_notif& req, TrappedCall kind);
  void HandleIoctl(const seccomp_notif& req);

  Listener listener_;
  SentryOptions options_;
  SyscallTable syscalls_;
  // Before gpu_, so it outlives the parked calls the GPU still holds.
  ParkWatch park_watch_;
  Parking parking_{park_watch_, options_.guest.budget};
  hostshim::sim::Gpu gpu_;
  SessionTable sessions_;
  std::vector<std::thread> workers_;
};

}  // namespace nvsentry::sentry
