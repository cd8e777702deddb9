// nvsentry-oci: an OCI runtime for container engines (podman, Docker, containerd), built on runc
// or crun (docs/containers.md). It speaks runc's command line; a container that asks for no GPU
// goes to the runtime untouched, one that asks for one gets its sentry (sentry/oci/lifecycle.h).
#include <cstdio>
#include <span>
#include <string>

#include "absl/strings/str_cat.h"
#include "sentry/oci/lifecycle.h"
#include "sentry/oci/oci_args.h"
#include "sentry/oci/oci_config.h"
#include "sentry/oci/oci_log.h"
#include "sentry/oci/runtime_call.h"

namespace {

constexpr char kUsage[] =
    "usage: nvsentry-oci [--root DIR] [--log FILE] [--log-format text|json] [--debug]\n"
    "                    [--systemd-cgroup] COMMAND [ARGS...]\n"
    "runc's command line (create, start, state, kill, delete, exec, ps, pause, resume, update,\n"
    "features, events, spec, run, list, ...); the configuration is "
    "/etc/nvsentry/oci.toml\n"
    "(NVSENTRY_OCI_CONFIG names another). A container gets the sandbox's GPU when its\n"
    "environment has NVSENTRY_GPU=sim or NVSENTRY_GPU=host, when its linux.devices list GPU\n"
    "nodes, or by the annotations nvsentry.gpu, .policy, .service, .firmware, .backend, .trace,\n"
    ".trace-format and .learn; `nvsentry cdi` prints a CDI spec for podman's --device "
    "nvsentry.dev/gpu=sim.\n"
    "Every other container goes to the runtime untouched. See docs/containers.md.\n";

}  // namespace

int main(int argc, char** argv) {
  using namespace nvsentry::oci;
  absl::StatusOr<OciCommand> command = ParseOciCommand(std::span<char* const>(argv, argc));
  if (!command.ok()) {
    fprintf(stderr, "nvsentry-oci: %s\n%s", std::string(command.status().message()).c_str(),
            kUsage);
    return 2;
  }
  absl::StatusOr<OciConfig> config = LoadOciConfig(OciConfigPath());
  if (!config.ok()) {
    OciLog(*command).Error(absl::StrCat("nvsentry-oci: ", config.status().message()));
    return 1;
  }
  // Its own line first, then the runtime's (podman info shows the whole text as the version).
  if (command->verb == "--version" || command->verb == "-v") {
    printf("nvsentry-oci 0.1.0, over %s:\n", config->runtime.c_str());
    fflush(stdout);
  }
  if (command->verb == "--help" || command->verb == "-h") {
    printf("%sWhat follows is the help of the runtime it runs containers with (%s):\n\n", kUsage,
           config->runtime.c_str());
    fflush(stdout);
  }
  if (command->verb == "create" || command->verb == "run") return Create(*command, *config);
  if (command->verb == "delete") return Delete(*command, *config);
  std::vector<std::string> args{command->verb};
  args.insert(args.end(), command->args.begin(), command->args.end());
  return ExecRuntime(*command, *config, args);
}
