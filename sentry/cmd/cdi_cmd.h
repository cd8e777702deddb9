// `nvsentry cdi`: a CDI spec (the Container Device Interface's JSON) of kind nvsentry.dev/gpu,
// so that an engine with CDI (podman 4.1 and later) gives a container nvsentry's GPU by name:
// `podman run --device nvsentry.dev/gpu=sim` with nvsentry-oci as the runtime.
//
// Each device (`sim`, the simulated Tegra X1; `host`, the host's GPU forwarded, validated) only
// adds NVSENTRY_GPU=sim or =host to the container's environment. The spec lists no device node:
// the GPU's nodes are the container's sentry's files, which nvsentry-oci bind-mounts at create;
// no node of the host's reaches the container, and the spec needs none on the host to apply.
#pragma once

#include <cstdio>
#include <string>

#include "sentry/cmd/cli.h"

namespace nvsentry::sentry {

// The spec, as printed (JSON, one device per line).
std::string CdiSpec();

// Prints CdiSpec() to `out`; returns 0.
int RunCdiCommand(const Command& cmd, FILE* out = stdout);

}  // namespace nvsentry::sentry
