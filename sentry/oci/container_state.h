// Where nvsentry-oci keeps a container's state, under the state root (--root, or the
// configuration's `state`): the low-level runtime's own state in ROOT/runc (it is handed
// --root ROOT/runc), and, for a container with a GPU, ROOT/nvsentry/ID: the rewritten bundle, the
// sentry's device files, its pid and its log. The seccomp socket is in ROOT/sock (a socket's
// path is at most 107 bytes). Everything is removed at delete; delete --force also cleans what a
// crash of either side left.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "sentry/oci/oci_args.h"
#include "sentry/oci/oci_config.h"

namespace nvsentry::oci {

struct ContainerPaths {
  std::string dir;         // ROOT/nvsentry/ID
  std::string bundle;      // the rewritten bundle runc is pointed at
  std::string devices;     // the sentry's device files are attached here
  std::string socket;      // linux.seccomp.listenerPath
  std::string sentry_pid;  // "PID STARTTIME" of the sentry's process
  std::string sentry_log;  // the sentry's log
};

// runc's rule for container ids: letters, digits, _ + - . and not "." or "..": it names a
// directory of the state.
bool ValidContainerId(const std::string& id);

std::string StateRoot(const OciCommand& command, const OciConfig& config);
std::string RuntimeRoot(const OciCommand& command, const OciConfig& config);
ContainerPaths PathsOf(const OciCommand& command, const OciConfig& config, const std::string& id);

// Makes dir (and its parents, 0700), bundle and devices. AlreadyExists when dir does.
absl::Status MakeContainerState(const ContainerPaths& paths);
// Removes the socket and dir (after the sentry's end: StopContainerSentry).
absl::Status RemoveContainerState(const ContainerPaths& paths);

}  // namespace nvsentry::oci
