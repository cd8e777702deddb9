#include "sentry/oci/lifecycle.h"

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "sentry/devfs/device_fs.h"
#include "sentry/oci/bundle_rewrite.h"
#include "sentry/oci/container_sentry.h"
#include "sentry/oci/container_state.h"
#include "sentry/oci/gpu_request.h"
#include "sentry/oci/oci_log.h"
#include "sentry/oci/runtime_call.h"
#include "sentry/sandbox/launcher.h"

namespace nvsentry::oci {
namespace {

// The sentry started and the rewritten bundle written; an error says why not (and nothing of the
// container's state is left).
absl::Status PrepareGpuContainer(const ContainerPaths& paths, const std::string& bundle,
                                 nlohmann::json config, const GpuRequest& gpu,
                                 const EngineLog& engine_log) {
  if (absl::Status s = MakeContainerState(paths); !s.ok()) return s;
  auto undo = [&paths](absl::Status why) {
    StopContainerSentry(paths).IgnoreError();
    RemoveContainerState(paths).IgnoreError();
    return why;
  };
  absl::StatusOr<nlohmann::json> rewritten =
      RewriteForSentry(std::move(config), bundle, paths,
                       gpu.devices.empty() ? sentry::DeviceFileNames() : gpu.devices);
  if (!rewritten.ok()) return undo(rewritten.status());
  if (absl::Status s = WriteBundle(*rewritten, bundle, paths); !s.ok()) return undo(s);
  if (absl::Status s = StartContainerSentry(paths, gpu.run, engine_log); !s.ok()) return undo(s);
  return absl::OkStatus();
}

// The sentry's options for this container, checked as `nvsentry run` checks its own (the policy
// file read, the service and firmware known); nullopt for a container without a GPU.
absl::StatusOr<std::optional<GpuRequest>> SentryOptionsOf(const nlohmann::json& config,
                                                          const OciConfig& oci) {
  absl::StatusOr<std::optional<GpuRequest>> gpu = GpuRequestOf(config, oci.gpu);
  if (!gpu.ok() || !gpu->has_value()) return gpu;
  (*gpu)->run.log_level = "info";
  if (absl::StatusOr<std::shared_ptr<proxy::GuestConfig>> g = sentry::MakeGuestConfig((*gpu)->run);
      !g.ok())
    return g.status();
  return gpu;
}

}  // namespace

int Create(const OciCommand& command, const OciConfig& config) {
  const OciLog log(command);
  std::vector<std::string> as_given{command.verb};
  as_given.insert(as_given.end(), command.args.begin(), command.args.end());
  absl::StatusOr<CreateArgs> args = ParseCreateArgs(command.args);
  // What nvsentry-oci cannot read is the runtime's to refuse, in its own words.
  if (!args.ok()) return ExecRuntime(command, config, as_given);
  absl::StatusOr<nlohmann::json> bundle_config = ReadBundleConfig(args->bundle);
  if (!bundle_config.ok()) return ExecRuntime(command, config, as_given);
  absl::StatusOr<std::optional<GpuRequest>> run = SentryOptionsOf(*bundle_config, config);
  if (!run.ok()) {
    log.Error(absl::StrCat("nvsentry-oci: ", run.status().message()));
    return 1;
  }
  if (!run->has_value()) return ExecRuntime(command, config, as_given);
  if (!ValidContainerId(args->id)) {
    log.Error("nvsentry-oci: invalid container id: " + args->id +
              " (letters, digits, _ + - . only)");
    return 1;
  }
  const ContainerPaths paths = PathsOf(command, config, args->id);
  if (absl::Status s = PrepareGpuContainer(paths, args->bundle, *std::move(bundle_config), **run,
                                           {command.log_file, command.log_json});
      !s.ok()) {
    log.Error(absl::StrCat("nvsentry-oci: ", s.message()));
    return 1;
  }
  std::vector<std::string> runtime_args{command.verb, "--bundle", paths.bundle};
  runtime_args.insert(runtime_args.end(), args->without_bundle.begin(), args->without_bundle.end());
  const int status = RunRuntime(command, config, runtime_args);
  // A container that did not come to be, or a run that has ended: nothing of it stays.
  if (status != 0 || (command.verb == "run" && !args->detach)) {
    StopContainerSentry(paths).IgnoreError();
    RemoveContainerState(paths).IgnoreError();
  }
  return status;
}

int Delete(const OciCommand& command, const OciConfig& config) {
  const int status = RunRuntime(command, config, [&] {
    std::vector<std::string> a{command.verb};
    a.insert(a.end(), command.args.begin(), command.args.end());
    return a;
  }());
  const std::string id = ContainerIdOf(command.args);
  if (!ValidContainerId(id)) return status;  // the runtime has said why
  const ContainerPaths paths = PathsOf(command, config, id);
  std::error_code ec;
  if (!std::filesystem::exists(paths.dir, ec)) return status;
  // A delete the runtime refused (a running container, without --force) keeps the sentry.
  if (status != 0 && !HasFlag(command.args, "force", 'f')) return status;
  absl::Status s = StopContainerSentry(paths);
  if (s.ok()) s = RemoveContainerState(paths);
  if (!s.ok()) {
    OciLog(command).Error(absl::StrCat("nvsentry-oci: ", s.message()));
    return status != 0 ? status : 1;
  }
  return status;
}

}  // namespace nvsentry::oci
