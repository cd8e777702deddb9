// runc's command line, as engines call an OCI runtime: global flags (--root, --log, --log-format,
// --debug, --systemd-cgroup, and runc's --rootless and --criu), then a verb and its own arguments.
// nvsentry-oci reads what it needs and hands the rest to the low-level runtime as given.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace nvsentry::oci {

struct OciCommand {
  std::string root;       // --root: "" for the default
  std::string log_file;   // --log: "" for standard error
  bool log_json = false;  // --log-format=json
  bool debug = false;
  // The global flags as given, but --root (the runtime's own state has a place of its own).
  std::vector<std::string> runtime_flags;
  std::string verb;
  std::vector<std::string> args;  // the verb's arguments, as given
};

// --version, -v, --help and -h are taken as the verb (the runtime answers them).
// InvalidArgument for an unknown global flag, a flag without its value, or no verb; the verbs
// themselves are the runtime's to check.
absl::StatusOr<OciCommand> ParseOciCommand(std::span<char* const> argv);

// What create and run name: the bundle (--bundle, -b; the current directory without it), the
// arguments without it (to name another), and the container's id.
struct CreateArgs {
  std::string bundle;
  std::vector<std::string> without_bundle;
  std::string id;
  bool detach = false;  // run --detach
};
absl::StatusOr<CreateArgs> ParseCreateArgs(const std::vector<std::string>& args);

// The container id of delete, state, kill, start (the first argument that is no flag), "" if none.
std::string ContainerIdOf(const std::vector<std::string>& args);
// Whether a boolean flag (--force, -f) is among `args`.
bool HasFlag(const std::vector<std::string>& args, std::string_view long_name, char short_name);

}  // namespace nvsentry::oci
