// The bundle runc builds a GPU container from: a copy of the engine's, whose config.json differs
// only in what the sentry needs, the engine's own bundle left as it was.
//   - each device file of the sentry (sentry::DeviceFileNames) is bind-mounted at its /dev path,
//     in place of any mount or linux.devices entry there (a GPU node the engine or a CDI spec
//     listed is served by the sentry instead);
//   - linux.seccomp notifies the GPU's ioctls to the sentry's socket (sentry/oci/seccomp_merge.h);
//   - root.path is made absolute, and every other entry of the engine's bundle is linked into the
//     copy, so that paths relative to the bundle (bind sources, hooks' files) still resolve.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "sentry/oci/container_state.h"

namespace nvsentry::oci {

// The engine's config.json, parsed; an error saying why not.
absl::StatusOr<nlohmann::json> ReadBundleConfig(const std::string& bundle);

// The rewritten config (pure: for the tests too).
absl::StatusOr<nlohmann::json> RewriteForSentry(nlohmann::json config, const std::string& bundle,
                                                const ContainerPaths& paths,
                                                const std::vector<std::string>& device_names);

// Writes the rewritten config into paths.bundle and links the engine's other entries there.
absl::Status WriteBundle(const nlohmann::json& config, const std::string& bundle,
                         const ContainerPaths& paths);

}  // namespace nvsentry::oci
