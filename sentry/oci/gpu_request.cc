#include "sentry/oci/gpu_request.h"

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "sentry/oci/gpu_devices.h"

namespace nvsentry::oci {
namespace {

constexpr std::string_view kEnvName = "NVSENTRY_GPU=";

// NVSENTRY_GPU from process.env (the last one counts, as for a shell), nullopt when absent.
std::optional<std::string> GpuFromEnv(const nlohmann::json& config) {
  std::optional<std::string> gpu;
  const nlohmann::json* env = nullptr;
  if (config.contains("process") && config["process"].contains("env"))
    env = &config["process"]["env"];
  if (env == nullptr || !env->is_array()) return gpu;
  for (const nlohmann::json& e : *env)
    if (e.is_string() && e.get<std::string>().starts_with(kEnvName))
      gpu = e.get<std::string>().substr(kEnvName.size());
  return gpu;
}

struct Asked {
  std::optional<std::string> gpu;  // sim, host, none, ""
  GpuDefaults choice;
  bool any_annotation = false;
  std::string policy_annotation;  // checked against choice.policy_dir
  std::string trace, trace_format, learn;
};

// The trace file an annotation names, when its directory is `dir` (resolved: no link or .. leads
// out) and it is no link itself; the file is made by the sentry.
absl::StatusOr<std::string> OutputInDir(std::string_view what, const std::string& file,
                                        const std::string& dir) {
  std::error_code ec;
  const std::filesystem::path f(file);
  const std::filesystem::path parent = std::filesystem::canonical(f.parent_path(), ec);
  std::error_code dir_ec;
  const std::filesystem::path d = std::filesystem::canonical(dir, dir_ec);
  if (dir.empty() || ec || dir_ec || parent != d || !f.has_filename() ||
      std::filesystem::is_symlink(f, ec))
    return absl::PermissionDeniedError(
        absl::StrCat("nvsentry.trace: ", file, " is not a file of the configuration's trace_dir (",
                     dir.empty() ? "not set" : dir, "): name one there, or set trace_dir"));
  return (parent / f.filename()).string();
}

// The annotation's policy file, when it lies in `dir` (both resolved: no link or .. leads out).
absl::StatusOr<std::string> PolicyInDir(const std::string& file, const std::string& dir) {
  std::error_code ec;
  const std::filesystem::path f = std::filesystem::canonical(file, ec);
  if (ec) return absl::InvalidArgumentError("nvsentry.policy: cannot read " + file);
  const std::filesystem::path d = std::filesystem::canonical(dir, ec);
  if (ec || dir.empty() || f.parent_path() != d)
    return absl::PermissionDeniedError(absl::StrCat(
        "nvsentry.policy: ", file, " is not a file of the configuration's policy_dir (", dir,
        "): put the policy there, or name its directory in policy_dir"));
  return f.string();
}

// The nvsentry.* annotations over the defaults; an unknown one is an error.
absl::Status ReadAnnotations(const nlohmann::json& config, Asked& a) {
  if (!config.contains("annotations") || !config["annotations"].is_object())
    return absl::OkStatus();
  for (const auto& [key, value] : config["annotations"].items()) {
    if (!key.starts_with("nvsentry.")) continue;
    if (!value.is_string())
      return absl::InvalidArgumentError(absl::StrCat("annotation ", key, ": not a string"));
    const std::string v = value.get<std::string>();
    const std::string_view name = std::string_view(key).substr(9);
    a.any_annotation = true;
    if (name == "gpu")
      a.gpu = v;
    else if (name == "policy")
      a.policy_annotation = v;
    else if (name == "trace")
      a.trace = v;
    else if (name == "learn")
      a.learn = v;
    else if (name == "trace-format")
      a.trace_format = v;
    else if (name == "service")
      a.choice.service = v;
    else if (name == "firmware")
      a.choice.firmware = v;
    else if (name == "backend")
      a.choice.backend = v;
    else
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown annotation ", key,
          " (nvsentry-oci knows nvsentry.gpu, .policy, .service, .firmware, .backend, .trace, "
          ".trace-format, .learn)"));
  }
  return absl::OkStatus();
}

// The sentry's options from the annotations over the defaults; `host`: the host backend.
absl::StatusOr<sentry::RunOptions> RunOptionsOf(const Asked& a, bool host) {
  sentry::RunOptions o;
  o.policy_file = a.choice.policy;
  if (!a.policy_annotation.empty()) {
    absl::StatusOr<std::string> file = PolicyInDir(a.policy_annotation, a.choice.policy_dir);
    if (!file.ok()) return file.status();
    o.policy_file = *file;
  }
  if (!a.choice.service.empty()) o.service = a.choice.service;
  o.firmware = a.choice.firmware;
  const std::string backend = host ? "host" : a.choice.backend;
  if (backend != "" && backend != "simulated" && backend != "host")
    return absl::InvalidArgumentError(
        absl::StrCat("nvsentry.backend=", backend, ": must be simulated or host"));
  o.backend_host = backend == "host";
  o.host_dev_dir = a.choice.host_dev_dir;
  if (!a.trace.empty()) {
    absl::StatusOr<std::string> file = OutputInDir("nvsentry.trace", a.trace, a.choice.trace_dir);
    if (!file.ok()) return file.status();
    o.trace = true;
    o.trace_file = *file;
  }
  if (a.trace_format != "" && a.trace_format != "text" && a.trace_format != "json")
    return absl::InvalidArgumentError(
        absl::StrCat("nvsentry.trace-format=", a.trace_format, ": must be text or json"));
  o.trace_json = a.trace_format == "json";
  if (!a.learn.empty()) {
    absl::StatusOr<std::string> file = OutputInDir("nvsentry.learn", a.learn, a.choice.trace_dir);
    if (!file.ok()) return file.status();
    if (!o.policy_file.empty())
      return absl::InvalidArgumentError("nvsentry.learn: not with a policy (it learns one)");
    o.learn_file = *file;
  }
  return o;
}

// The GPU the container asks for: sim, host, "devices" (its device list's, forwarded) or none.
absl::StatusOr<std::string> GpuOf(const Asked& a, const std::vector<ListedDevice>& listed) {
  const std::string gpu = a.gpu.value_or(!listed.empty()    ? "devices"
                                         : a.any_annotation ? "sim"
                                                            : "none");
  if (gpu == "none" || gpu.empty()) return std::string("none");
  if (gpu != "sim" && gpu != "host" && !(gpu == "devices" && !a.gpu))
    return absl::InvalidArgumentError(
        absl::StrCat("NVSENTRY_GPU=", gpu, ": not a GPU nvsentry serves (sim, host or none)"));
  if (gpu == "devices")
    if (absl::Status s = CheckHostNodes(listed, a.choice.host_dev_dir); !s.ok()) return s;
  return gpu;
}

}  // namespace

absl::StatusOr<std::optional<GpuRequest>> GpuRequestOf(const nlohmann::json& config,
                                                       const GpuDefaults& defaults) {
  Asked a{GpuFromEnv(config), defaults, false};
  if (absl::Status s = ReadAnnotations(config, a); !s.ok()) return s;
  const std::vector<ListedDevice> listed = ListedGpuDevices(config);
  absl::StatusOr<std::string> gpu = GpuOf(a, listed);
  if (!gpu.ok()) return gpu.status();
  if (*gpu == "none") return std::nullopt;
  GpuRequest request;
  if (*gpu == "devices")
    for (const ListedDevice& d : listed) request.devices.push_back(d.name);
  absl::StatusOr<sentry::RunOptions> run = RunOptionsOf(a, *gpu != "sim");
  if (!run.ok()) return run.status();
  request.run = *std::move(run);
  return std::optional<GpuRequest>(std::move(request));
}

}  // namespace nvsentry::oci
