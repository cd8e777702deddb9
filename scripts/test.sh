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
cd build
exec ctest --output-on-failure -j"$(nproc)" "$@"
