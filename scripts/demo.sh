#!/usr/bin/env bash
# Builds nvsentry and runs the demo guest under the sandbox on the simulated GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
nvsentry="$PWD/build/sentry/nvsentry"
demo=build/examples/gpu_demo
# Started as root, nvsentry runs the guest as nobody (65534) over the host, who may not enter a
# checkout closed to other users (root's home is 0700): then the demo runs from a copy in a
# folder nobody may use (it needs nothing but the C library).
if [ "$(id -u)" = 0 ] &&
  ! setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$PWD/$demo" 2>/dev/null; then
  copy=$(mktemp -d)
  trap 'rm -rf "$copy"' EXIT
  chmod 0755 "$copy"
  cp "$demo" "$copy/"
  echo "demo.sh: the guest is nobody (uid 65534) over the host and may not enter $PWD:" \
    "running a copy of the demo from $copy" >&2
  cd "$copy"
  demo=./gpu_demo
  "$nvsentry" run -- "$demo" "$@"
  exit
fi
exec "$nvsentry" run -- "$demo" "$@"
