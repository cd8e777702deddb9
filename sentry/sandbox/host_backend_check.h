// The host backend's nodes, checked before the guest runs. With --backend=host (or a policy whose
// GPU devices say backend = "host") the sentry forwards the GPU's five devices to the host's L4T
// nodes under --host-dev-dir, opened with the guest's filesystem ids (identity.h,
// DropHostCapabilities). Before this check the start went on without them, and the guest's
// first open was refused with DeviceNotFound (a log line naming the node).
#pragma once

#include <string>

#include "absl/status/status.h"
#include "sentry/sandbox/identity.h"

namespace nvsentry::sentry {

// Every node the host backend opens (nvhost-ctrl, nvhost-ctrl-gpu, nvhost-as-gpu, nvhost-gpu,
// nvmap) exists under `dir` and opens read-write as the sentry will open it (as the guest's
// identity); each is closed again. An error names the node, --host-dev-dir and
// `nvsentry fake-l4t`.
absl::Status CheckHostBackendNodes(const std::string& dir, const GuestIdentity& id);

}  // namespace nvsentry::sentry
