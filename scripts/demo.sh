#!/usr/bin/env bash
# Builds nvsentry and runs the demo guest under the sandbox on the simulated GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
exec build/sentry/nvsentry run -- build/examples/gpu_demo "$@"
