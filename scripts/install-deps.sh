#!/usr/bin/env bash
# Installs the Debian packages nvsentry builds with. Idempotent: does nothing when all are present.
set -euo pipefail
pkgs=(build-essential cmake pkg-config libseccomp-dev libabsl-dev libspdlog-dev libunwind-dev
      googletest libgtest-dev libgmock-dev libbenchmark-dev libtomlplusplus-dev nlohmann-json3-dev python3
      libfuse3-dev              # the guest's device nodes (sentry/devfs/device_fs.h)
      libpng-dev                # --frames (sentry/core/frames.h)
      clang-format-14           # ctest Format
      jq                        # docs/tracing.md's example (ctest docs)
      bubblewrap                # bench/run.sh: the start-up row's baseline (bwrap, same namespaces)
      libpython3.11-testsuite)  # CPython's regression tests, for the transparency suite
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
