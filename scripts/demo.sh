#!/usr/bin/env bash
# Builds what the demos need (nvsentry and examples/, nothing of the tests) and runs the
# demo guest under the sandbox on the simulated GPU. `scripts/demo.sh --direct` runs it through
# the Linux device nodes instead. A build dir made by scripts/test.sh is reused as it is.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
BUILD_DIR=${BUILD_DIR:-build}
if [ ! -f "$BUILD_DIR/CMakeCache.txt" ]; then
  cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=${BUILD_TYPE:-RelWithDebInfo} -DNVSENTRY_TESTS=OFF -DNVSENTRY_DEBUG_INFO=OFF >/dev/null
fi
cmake --build "$BUILD_DIR" -j"$(nproc)" --target nvsentry gpu_demo display_demo syncpt_demo
nvsentry="$(cd "$BUILD_DIR" && pwd)/sentry/nvsentry"
demo="$BUILD_DIR/examples/gpu_demo"
# Started as root, nvsentry runs the guest as nobody (65534) over the host, who may not enter a
# checkout closed to other users (root's home is 0700): then the demo runs from a copy in a
# folder nobody may use (it needs nothing but the C library).
if [ "$(id -u)" = 0 ] &&
  ! setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$(cd "$(dirname "$demo")" && pwd)/gpu_demo" 2>/dev/null; then
  copy=$(mktemp -d)
  trap 'rm -rf "$copy"' EXIT
  chmod 0755 "$copy"
  cp "$demo" "$copy/"
  echo "demo.sh: the guest is nobody (uid 65534) over the host and may not enter $PWD:" \
    "running a copy of the demo from $copy" >&2
  cd "$copy"
  "$nvsentry" run -- ./gpu_demo "$@"
  exit
fi
exec "$nvsentry" run -- "$demo" "$@"
