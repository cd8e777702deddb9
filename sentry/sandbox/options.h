// What `nvsentry run` asks of the sandbox: the guest program, its view of the host, its identity,
// its devices and what the sentry records. Filled by the command line (sentry/cmd/cli.h) and read
// by the launcher (sentry/sandbox/launcher.h).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sentry/sandbox/guest_mounts.h"

namespace nvsentry::sentry {

// How the guest reaches its device nodes (--devices).
enum class DeviceMode { kAuto, kFiles, kTrap };

struct RunOptions {
  std::vector<std::string> argv;  // the guest program and its arguments
  std::string log_level = "warn";
  std::string log_file;
  // --log-burst=N: lines each log call site a guest can reach writes per 10 s (0: no limit).
  uint32_t log_burst = 10;
  int workers = 0;
  bool sync_wakeup = true;  // used where the kernel has it (6.6+)
  // files: served as files of the guest's /dev (sentry/devfs/device_fs.h); trap: every open
  // trapped; auto: files where this nvsentry may make them (started as root), else trap.
  DeviceMode devices = DeviceMode::kAuto;
  // --trace[=FILE]: every device open, ioctl and close, decoded. "-" (the default) is stderr.
  bool trace = false;
  std::string trace_file = "-";
  bool trace_json = false;  // --trace-format=json: one JSON object per line
  // --frames=DIR: every --frames-every=N-th frame the simulated display presents, as PNG files
  // (sentry/core/frames.h). Empty: none.
  std::string frames_dir;
  uint32_t frames_every = 1;
  uint64_t frames_max = 1000;  // --frames-max=N files at most (and 1 GiB of them at most)
  // --policy=FILE: the guest's policy (docs/policy.md). Without it, the default policy, adjusted
  // by the shorthands below (which a policy file states itself, so they do not combine with it).
  std::string policy_file;
  // --learn=FILE: run in audit mode and write the smallest policy that allows what the guest did.
  std::string learn_file;
  std::string service = "nvdrv";
  std::string firmware;  // empty: the latest the catalogue knows
  bool debug_mode = false;
  // --backend=host: the GPU's five devices forwarded to the host's (policy::HostCapable); a
  // policy file says it per device instead.
  bool backend_host = false;
  // --host-dev-dir=DIR: where the host's device nodes are, for the host backend.
  std::string host_dev_dir = "/dev";
  // --simulated-jetson: the host backend's host is a simulated Jetson inside the sentry
  // (hostshim/fake_l4t/in_process_jetson.h), not nodes under host_dev_dir.
  bool simulated_jetson = false;
  // Who the guest is over the host (sentry/sandbox/identity.h): --uid/--gid choose the host ids its
  // user namespace's root maps to; --host-root runs it without a user namespace, as the host's
  // root.
  std::optional<uid_t> uid;
  std::optional<gid_t> gid;
  bool host_root = false;
  // The guest's view (sentry/sandbox/guest_mounts.h), network and working directory. Defaults: the
  // host's tree as it is, the host's network, the caller's directory.
  bool ro_root = false;
  bool private_tmp = false;
  std::vector<BindMount> binds;  // --bind/--ro-bind SRC DST, in order (SRC as given)
  bool no_network = false;
  std::string chdir;  // empty: the caller's current directory
  // --max-tasks=N: processes and threads the guest may hold at once (zombies count until
  // reaped), RLIMIT_NPROC in its user namespace; 0: no limit. Host pids are shared with the host.
  uint32_t max_tasks = 4096;
};

}  // namespace nvsentry::sentry
