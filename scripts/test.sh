#!/usr/bin/env bash
# Builds nvsentry and runs the whole test suite; ctest's summary is the last thing printed.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
cd build
exec ctest --output-on-failure -j"$(nproc)" "$@"
