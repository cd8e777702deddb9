#include "sentry/oci/bundle_rewrite.h"

#include <filesystem>
#include <fstream>
#include <set>

#include "abi/catalogue.h"
#include "absl/strings/str_cat.h"
#include "sentry/oci/seccomp_merge.h"

namespace nvsentry::oci {
namespace {

namespace fs = std::filesystem;

// Removes from the array `list` the entries whose `key` is one of `paths`.
void DropEntries(nlohmann::json& list, const char* key, const std::set<std::string>& paths) {
  if (!list.is_array()) return;
  nlohmann::json kept = nlohmann::json::array();
  for (const nlohmann::json& e : list)
    if (!e.contains(key) || !e[key].is_string() || !paths.contains(e[key].get<std::string>()))
      kept.push_back(e);
  list = std::move(kept);
}

}  // namespace

absl::StatusOr<nlohmann::json> ReadBundleConfig(const std::string& bundle) {
  const std::string path = bundle + "/config.json";
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  nlohmann::json c = nlohmann::json::parse(in, nullptr, false);
  if (c.is_discarded() || !c.is_object())
    return absl::InvalidArgumentError(absl::StrCat(path, " is not a JSON object"));
  return c;
}

absl::StatusOr<nlohmann::json> RewriteForSentry(nlohmann::json config, const std::string& bundle,
                                                const ContainerPaths& paths,
                                                const std::vector<std::string>& device_names) {
  // The bundle's own path resolved (runc refuses a root.path through a symbolic link).
  std::error_code ec;
  fs::path abs_bundle = fs::canonical(bundle, ec);
  if (ec) abs_bundle = fs::absolute(bundle).lexically_normal();
  if (!config.contains("root") || !config["root"].contains("path") ||
      !config["root"]["path"].is_string())
    return absl::InvalidArgumentError("config.json has no root.path");
  const fs::path root = config["root"]["path"].get<std::string>();
  if (root.is_relative()) config["root"]["path"] = (abs_bundle / root).lexically_normal().string();
  std::set<std::string> served;
  for (const std::string& n : device_names) served.insert("/dev/" + n);
  nlohmann::json& mounts = config["mounts"];
  if (mounts.is_null()) mounts = nlohmann::json::array();
  DropEntries(mounts, "destination", served);
  for (const std::string& n : device_names)
    mounts.push_back({{"destination", "/dev/" + n},
                      {"type", "bind"},
                      {"source", paths.devices + "/" + n},
                      {"options", {"bind", "nosuid", "noexec"}}});
  nlohmann::json& lnx = config["linux"];
  if (lnx.is_null()) lnx = nlohmann::json::object();
  if (lnx.contains("devices")) DropEntries(lnx["devices"], "path", served);
  const nlohmann::json seccomp = lnx.contains("seccomp") ? lnx["seccomp"] : nlohmann::json();
  absl::StatusOr<nlohmann::json> merged = NotifyGpuIoctls(seccomp, abi::AllMagics(), paths.socket);
  if (!merged.ok()) return merged.status();
  lnx["seccomp"] = *std::move(merged);
  return config;
}

absl::Status WriteBundle(const nlohmann::json& config, const std::string& bundle,
                         const ContainerPaths& paths) {
  std::error_code ec;
  const fs::path abs_bundle = fs::absolute(bundle).lexically_normal();
  for (const fs::directory_entry& e : fs::directory_iterator(abs_bundle, ec)) {
    if (e.path().filename() == "config.json") continue;
    fs::create_symlink(e.path(), fs::path(paths.bundle) / e.path().filename(), ec);
    if (ec)
      return absl::InternalError(absl::StrCat("linking ", e.path().string(), ": ", ec.message()));
  }
  if (ec) return absl::InternalError(absl::StrCat("listing ", bundle, ": ", ec.message()));
  std::ofstream out(paths.bundle + "/config.json");
  out << config.dump(2) << "\n";
  out.close();
  if (!out) return absl::InternalError(absl::StrCat("cannot write ", paths.bundle, "/config.json"));
  return absl::OkStatus();
}

}  // namespace nvsentry::oci
