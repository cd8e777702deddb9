// Which containers get a GPU, and which: read from the bundle's config.json.
//   - process.env holds NVSENTRY_GPU=sim (the simulated Tegra X1, every catalogue device served)
//     or NVSENTRY_GPU=host (the GPU's devices forwarded to the host's nodes, validated), in the
//     manner of NVIDIA_VISIBLE_DEVICES; "none" or empty: no GPU;
//   - or annotations: nvsentry.gpu (the same values), nvsentry.policy (a policy file on the host),
//     nvsentry.service, nvsentry.firmware, nvsentry.backend (simulated or host); any of them asks
//     for a GPU; the configuration file's [gpu] table gives their defaults;
//   - or, without either choosing one, linux.devices listing catalogue devices: those alone,
//     forwarded to the host's nodes of the same major and minor (sentry/oci/gpu_devices.h).
// A bad value, or an annotation nvsentry.* that is none of these, is an error: the container
// never starts without the confinement it asked for.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "sentry/oci/oci_config.h"
#include "sentry/sandbox/options.h"

namespace nvsentry::oci {

struct GpuRequest {
  // The sentry's options for the container: policy, service, firmware, backend, trace, learn.
  sentry::RunOptions run;
  // The device files bind-mounted into the container (names relative to /dev); empty: every one
  // of the catalogue's (sentry::DeviceFileNames).
  std::vector<std::string> devices;
};

// The container's GPU, nullopt when it asks for none.
absl::StatusOr<std::optional<GpuRequest>> GpuRequestOf(const nlohmann::json& config,
                                                       const GpuDefaults& defaults);

}  // namespace nvsentry::oci
