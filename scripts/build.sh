#!/usr/bin/env bash
# Configures and builds nvsentry with its tests and benchmarks into ./build (or $BUILD_DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --tests
BUILD_DIR=${BUILD_DIR:-build}
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=${BUILD_TYPE:-RelWithDebInfo} -DNVSENTRY_TESTS=ON -DNVSENTRY_DEBUG_INFO=ON >/dev/null
cmake --build "$BUILD_DIR" -j"$(nproc)"
