#include "sentry/oci/gpu_devices.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cerrno>
#include <cstring>
#include <set>

#include "absl/strings/str_cat.h"
#include "sentry/devfs/device_fs.h"

namespace nvsentry::oci {

std::vector<ListedDevice> ListedGpuDevices(const nlohmann::json& config) {
  std::vector<ListedDevice> out;
  if (!config.contains("linux") || !config["linux"].is_object()) return out;
  const nlohmann::json& list = config["linux"].value("devices", nlohmann::json::array());
  if (!list.is_array()) return out;
  std::set<std::string> catalogue;
  for (const std::string& n : sentry::DeviceFileNames()) catalogue.insert("/dev/" + n);
  for (const nlohmann::json& e : list) {
    if (!e.is_object() || !e.contains("path") || !e["path"].is_string()) continue;
    const std::string path = e["path"].get<std::string>();
    if (!catalogue.contains(path)) continue;
    ListedDevice d{path.substr(5)};
    if (e.contains("major") && e["major"].is_number_integer()) d.major = e["major"].get<int64_t>();
    if (e.contains("minor") && e["minor"].is_number_integer()) d.minor = e["minor"].get<int64_t>();
    out.push_back(std::move(d));
  }
  return out;
}

absl::Status CheckHostNodes(const std::vector<ListedDevice>& devices,
                            const std::string& host_dev_dir) {
  for (const ListedDevice& d : devices) {
    const std::string node = absl::StrCat(host_dev_dir, "/", d.name);
    const std::string listed = absl::StrCat("linux.devices lists /dev/", d.name, " (c ", d.major,
                                            ":", d.minor, "), which nvsentry-oci forwards to ");
    struct stat st {};
    if (stat(node.c_str(), &st) != 0)
      return absl::FailedPreconditionError(absl::StrCat(
          listed, node, ": ", strerror(errno),
          " (give the container NVSENTRY_GPU=sim for the simulated GPU, or run it where the "
          "GPU's node is)"));
    if (!S_ISCHR(st.st_mode) || major(st.st_rdev) != d.major || minor(st.st_rdev) != d.minor)
      return absl::FailedPreconditionError(absl::StrCat(
          listed, node, ", but that is ",
          S_ISCHR(st.st_mode) ? absl::StrCat("c ", major(st.st_rdev), ":", minor(st.st_rdev))
                              : std::string("no character device"),
          " (list the host's own major and minor, or set the configuration's host_dev_dir)"));
  }
  return absl::OkStatus();
}

}  // namespace nvsentry::oci
