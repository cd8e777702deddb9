// A GPU chosen by the container's device list alone: the catalogue devices config.json's
// linux.devices lists (as the NVIDIA Container Toolkit's Jetson CSV mode and CDI specs list
// /dev/nvhost-*, /dev/nvmap) without NVSENTRY_GPU or nvsentry.gpu. Those devices, and only those,
// are served by the container's sentry, forwarded (the host backend, validated) to the host's
// node of the same name whose major and minor are the listed ones. The engine resolved the
// listed node on the host when it wrote the entry, so a host without that node (or with another
// device there) is refused at create: the container would otherwise get a GPU nobody asked for.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "nlohmann/json.hpp"

namespace nvsentry::oci {

struct ListedDevice {
  std::string name;  // relative to /dev: "nvhost-gpu"
  int64_t major = -1, minor = -1;
};

// The entries of linux.devices at a catalogue device's /dev path (sentry::DeviceFileNames), in
// order; others (a non-GPU device, a GPU node nvsentry does not serve) stay the runtime's.
std::vector<ListedDevice> ListedGpuDevices(const nlohmann::json& config);

// OK when each listed device's node under host_dev_dir is a character device of its major and
// minor; an error naming the first that is not, and what to do.
absl::Status CheckHostNodes(const std::vector<ListedDevice>& devices,
                            const std::string& host_dev_dir);

}  // namespace nvsentry::oci
