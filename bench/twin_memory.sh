#!/bin/bash
# The memory eight 256 MiB nvmap objects over untouched guest memory cost over the host backend:
# the sentry's resident memory (VmRSS and its peak, VmHWM) and the host's (the fake's), read
# while the guest holds them. Usage: bench/twin_memory.sh NVSENTRY TWIN_GUEST_BENCH DIR FAKE_PID
# (DIR: a running `nvsentry fake-l4t DIR`, FAKE_PID its process). bench/run.sh calls it.
set -euo pipefail
nvsentry=$1 guest=$2 dir=$3 fake_pid=$4
out=$(mktemp)
kib() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }
fake_before=$(kib "$fake_pid" VmRSS)
"$nvsentry" run --backend=host "--host-dev-dir=$dir" -- "$guest" hold 8 256 3 >"$out" 2>&1 &
sentry=$!
for _ in $(seq 600); do grep -q holding "$out" && break; sleep 0.05; done
echo "  guest: $(grep holding "$out")"
echo "  sentry: VmRSS $(kib "$sentry" VmRSS) kB, VmHWM $(kib "$sentry" VmHWM) kB"
echo "  host (the fake): VmRSS $(kib "$fake_pid" VmRSS) kB (before the guest: $fake_before kB)"
wait "$sentry"
rm -f "$out"
