#!/usr/bin/env bash
# Builds what the demo needs (nvsentry and examples/gpu_demo, nothing of the tests) and runs the
# demo guest under the sandbox on the simulated GPU. `scripts/demo.sh --direct` runs it through
# the Linux device nodes instead. A build dir made by scripts/test.sh is reused as it is.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
BUILD_DIR=${BUILD_DIR:-build}
if [ ! -f "$BUILD_DIR/CMakeCache.txt" ]; then
  cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=${BUILD_TYPE:-RelWithDebInfo} -DNVSENTRY_TESTS=OFF >/dev/null
fi
cmake --build "$BUILD_DIR" -j"$(nproc)" --target nvsentry gpu_demo
exec "$BUILD_DIR/sentry/nvsentry" run -- "$BUILD_DIR/examples/gpu_demo" "$@"
