// The sentry proper: a receiving thread that serves the guest's fast trapped calls itself and a
// pool of workers for the slow ones (sentry/core/receiver.h, sentry/core/fast_calls.h), and (with
// device files) the filesystem that serves the guest's device nodes. Each open of a device node
// becomes a device session: an open of a device file (sentry/devfs/device_fs.h), or, with trapped
// opens, a trapped open of a device path, whose session is placed in the guest as a new fd. Ioctls
// on sessions go through the copy engine to the simulated GPU; everything else continues natively.
// No handler blocks on the guest: waits are parked and answered by whoever completes them.
#pragma once

#include <fcntl.h>
#include <linux/seccomp.h>

#include <chrono>
#include <deque>
#include <memory>
#include <optional>
#include <string_view>
#include <thread>
#include <vector>

#include "abi/permissions.h"
#include "hostshim/driver_router.h"
#include "hostshim/sim/gpu.h"
#include "proxy/guest_config.h"
#include "proxy/session.h"
#include "sentry/core/fast_calls.h"
#include "sentry/core/filter.h"
#include "sentry/core/frames.h"
#include "sentry/core/listener.h"
#include "sentry/core/open_path.h"
#include "sentry/core/park_watch.h"
#include "sentry/core/parked_call.h"
#include "sentry/core/receiver.h"
#include "sentry/core/session_table.h"
#include "sentry/devfs/device_fs.h"

namespace nvsentry::sentry {

struct SentryOptions {
  int workers = 0;          // slow calls' pool; 0: one per CPU, at least 2
  bool sync_wakeup = true;  // ask the kernel to wake workers on the guest's CPU (6.6+)
  // Shared with the launcher; never null.
  std::shared_ptr<const proxy::GuestConfig> guest;
  // --frames: where presented frames go (null: nowhere), and --frames-every.
  std::shared_ptr<FrameRecorder> frames;
  uint32_t frames_every = 1;
  std::string host_dev_dir = "/dev";  // --host-dev-dir, for the host backend
};

class Sentry final : private DeviceFileHandler {
 public:
  explicit Sentry(const SentryOptions& options);
  // Answers the opens of the device files `files` serves (files of st_dev `dev`) from now on,
  // through `deferred`, which it was made with.
  void ServeDeviceFiles(std::unique_ptr<DeviceFs> files, dev_t dev,
                        DeferredDeviceFileHandler& deferred);
  // Serves the guest's trapped calls from `listener_fd`, which the sentry keeps.
  void Start(int listener_fd);
  // Serves the trapped calls of one more listener, which the sentry keeps: a container's processes
  // each bring the listener of their own filter (its first process's, one per exec'd process), and
  // are served as one guest. With device files only ioctls are trapped: anything else continues.
  // Not with Start; called from one thread.
  void AddListener(int listener_fd);
  SessionTable& sessions() { return sessions_; }
  // The guest has ended: lets the GPU's engine threads finish the steps they are in (bounded), so
  // what they report (trace records, frames) is not cut off by the sentry's exit.
  void Quiesce() { gpu_.Quiesce(absl::Milliseconds(500)); }

 private:
  // DeviceFileHandler: a device file's open and its end.
  int64_t OpenFile(const abi::DeviceDesc& dev, int flags, pid_t tid) override;
  void ReleaseFile(uint64_t handle) override;

  void Serve(const seccomp_notif& req);
  void Handle(const seccomp_notif& req);
  using Clock = std::chrono::steady_clock;
  // A trapped open, in steps: what the guest asked for, the device path it names, the contract's
  // answer, the session, its fd in the guest.
  struct OpenArgs {
    int dirfd = AT_FDCWD;
    uint64_t path_addr = 0;
    uint64_t flags = 0;
  };
  void HandleOpen(const seccomp_notif& req, TrappedCall kind);
  static std::optional<OpenArgs> DecodeOpen(const seccomp_notif& req, TrappedCall kind);
  static std::optional<NormalPath> DevicePath(pid_t tid, const OpenArgs& args);
  // `missing`: the refusal is the guest's mask's (proxy/refusal.h), logged and traced as such.
  void RefuseOpen(const seccomp_notif& req, std::string_view path, abi::NvError verdict, int err,
                  std::string_view why, Clock::time_point t0,
                  std::optional<abi::MissingPermission> missing = std::nullopt);
  void PlaceSession(const seccomp_notif& req, std::string_view path, const abi::DeviceDesc& dev,
                    std::shared_ptr<proxy::Session> session, bool cloexec, Clock::time_point t0);
  void HandleIoctl(const Listener& listener, const seccomp_notif& req);

  Listener listener_{-1};
  SentryOptions options_;
  SyscallTable syscalls_;
  FastCalls fast_calls_{syscalls_};
  // Before gpu_, so it outlives the parked calls the GPU still holds.
  ParkWatch park_watch_;
  Parking parking_{park_watch_, options_.guest->services.budget};
  hostshim::sim::Gpu gpu_;
  // The host backend, when the policy forwards the GPU's devices (null otherwise), and the driver
  // every session comes from: each device's from the backend its policy names.
  std::unique_ptr<hostshim::Driver> host_;
  std::unique_ptr<hostshim::DriverRouter> driver_;
  SessionTable sessions_;
  std::unique_ptr<DeviceFs> device_fs_;
  std::unique_ptr<Receiver> receiver_;
  // AddListener's, never moved (each receiver holds its listener).
  std::deque<Listener> more_listeners_;
  std::vector<std::unique_ptr<Receiver>> more_receivers_;
};

}  // namespace nvsentry::sentry
