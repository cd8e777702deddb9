// nvsentry-oci's host-wide configuration: /etc/nvsentry/oci.toml (NVSENTRY_OCI_CONFIG names
// another file). Missing: the defaults below.
//
//   runtime = "runc"            # the low-level runtime: runc or crun, a name on PATH or a path
//   state = "/run/nvsentry-oci" # where state lives when the engine gives no --root (default:
//                               # $XDG_RUNTIME_DIR/nvsentry-oci where runc would use its own)
//   [gpu]                       # defaults for containers that ask for a GPU (annotations win)
//   policy = "/etc/nvsentry/policy.toml"
//   policy_dir = "/etc/nvsentry/policies"  # where nvsentry.policy annotations may name files
//   trace_dir = ""              # where nvsentry.trace and nvsentry.learn annotations may write
//   service = "nvdrv"
//   firmware = "17.0.0"
//   backend = "simulated"       # or "host"
//   host_dev_dir = "/dev"       # where the host's GPU nodes are, for the host backend
#pragma once

#include <string>

#include "absl/status/statusor.h"

namespace nvsentry::oci {

struct GpuDefaults {
  std::string policy, service, firmware, backend;
  // The only directory an nvsentry.policy annotation may name a file in: whoever writes a
  // container's annotations (a pod's author) must not make root's sentry read any host file.
  std::string policy_dir = "/etc/nvsentry/policies";
  // The only directory an nvsentry.trace or nvsentry.learn annotation may write a file in; empty:
  // none may.
  std::string trace_dir;
  // Where the host's GPU nodes are, for the host backend (nvsentry run's --host-dev-dir).
  std::string host_dev_dir = "/dev";
};

struct OciConfig {
  std::string runtime = "runc";
  // "": runc's rule (DefaultStateRoot).
  std::string state;
  GpuDefaults gpu;
};

// runc's rule for its default --root, with nvsentry-oci's name: $XDG_RUNTIME_DIR/nvsentry-oci when
// XDG_RUNTIME_DIR is set and this process is not root, or is root only in a user namespace with
// USER other than root (rootless podman's conmon); /run/nvsentry-oci otherwise.
std::string DefaultStateRoot();

// The configuration file's path: NVSENTRY_OCI_CONFIG, else /etc/nvsentry/oci.toml.
std::string OciConfigPath();
// Reads `path`; defaults when it does not exist; an error naming the file, line and key when it
// is wrong (an unknown key too).
absl::StatusOr<OciConfig> LoadOciConfig(const std::string& path);

}  // namespace nvsentry::oci
