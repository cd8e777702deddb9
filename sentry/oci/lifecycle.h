// The verbs nvsentry-oci does more for than hand them to the runtime: create and run (a container
// that asks for a GPU gets its sentry and a rewritten bundle) and delete (the sentry ended, its
// state removed). Each returns the exit status nvsentry-oci ends with, having logged its errors.
#pragma once

#include "sentry/oci/oci_args.h"
#include "sentry/oci/oci_config.h"

namespace nvsentry::oci {

int Create(const OciCommand& command, const OciConfig& config);
int Delete(const OciCommand& command, const OciConfig& config);

}  // namespace nvsentry::oci
