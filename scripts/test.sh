#!/usr/bin/env bash
# Builds nvsentry and runs the whole test suite; ctest's summary is the last thing printed.
#   scripts/test.sh [CTEST OPTIONS...]   e.g. -L hostile, -R Launcher, -LE fuzz-smoke
# The whole suite takes about 11-12 minutes on 2 cores once nvsentry is built (686 s in the last
# CI run): some 900 tests in about 3 minutes, each reported as it ends, then the fuzz smoke test,
# last and alone: about 5 minutes of libFuzzer runs, plus their clang build when it is cold
# (label fuzz-smoke, docs/fuzzing.md; skipped without clang++-14). -LE fuzz-smoke leaves it out.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "scripts/test.sh: builds, then runs the whole suite: about 11-12 minutes on 2 cores, the" \
  "fuzz smoke test last and alone (-LE fuzz-smoke leaves it out)"
scripts/build.sh
BUILD_DIR=${BUILD_DIR:-build}
# Started as root, nvsentry runs its guests as nobody (65534) over the host: the tests' guests,
# in the build dir, must be ones nobody may run.
if [ "$(id -u)" = 0 ] &&
  ! setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$(cd "$BUILD_DIR" && pwd)/examples/gpu_demo" \
    2>/dev/null; then
  echo "test.sh: the tests run guests as nobody (uid 65534), who may not enter $PWD (root's" \
    "home is closed to other users): check the project out where other users may read it" \
    "(/srv, /opt) and run scripts/test.sh there" >&2
  exit 1
fi
cd "$BUILD_DIR"
exec ctest --output-on-failure -j"$(nproc)" "$@"
