#!/usr/bin/env bash
# Installs the Debian packages nvsentry needs. Idempotent: does nothing when all are present.
#   scripts/install-deps.sh          what nvsentry and the demos build with (scripts/demo.sh)
#   scripts/install-deps.sh --tests  that, and what the tests and benchmarks need (scripts/test.sh)
set -euo pipefail
pkgs=(build-essential cmake pkg-config libseccomp-dev libabsl-dev libspdlog-dev libunwind-dev
      libtomlplusplus-dev
      libfuse3-dev              # the guest's device nodes (sentry/devfs/device_fs.h)
      libpng-dev                # --frames (sentry/core/frames.h)
      nlohmann-json3-dev)       # nvsentry-oci reads and writes OCI bundles' config.json
if [ "${1:-}" = --tests ]; then
  pkgs+=(googletest libgtest-dev libgmock-dev libbenchmark-dev python3
         clang-format-14          # ctest Format
         universal-ctags          # ctest FunctionLength
         jq                       # docs/tracing.md's example (ctest docs)
         bubblewrap               # bench/run.sh: the start-up row's baseline (bwrap, same namespaces)
         libpython3.11-testsuite  # CPython's regression tests, for the transparency suite
         runc crun podman conmon containerd busybox-static)  # ctest -L oci (tests/oci)
elif [ -n "${1:-}" ]; then
  echo "usage: scripts/install-deps.sh [--tests]" >&2
  exit 2
fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
echo "install-deps: installing ${missing[*]}"
$SUDO apt-get update -q
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q "${missing[@]}"
