#!/bin/bash
# Submit-to-fence of the host backend against the simulated one, the backends alternated run by
# run (the VM's noise moves whole runs, so a ratio of one run each says little): twin_guest_bench
# under the simulated backend, the host backend over the simulated Jetson inside the sentry
# (--simulated-jetson) and, as root, the host backend over `nvsentry fake-l4t` (FUSE). Prints each
# run's medians, then the median of the RUNS medians per backend and its ratio to the simulated.
#   bench/twin_ratio.sh BUILD_DIR RUNS MODE ROUNDS MIB [KIB]   (MODE: latency or copy)
set -euo pipefail
build=$1 runs=$2 mode=$3 rounds=$4 mib=$5 kib=${6:-}
nvsentry="$build/sentry/nvsentry" guest="$build/bench/twin_guest_bench"
fake_dir="" fake_pid=""
if [ "$(id -u)" = 0 ]; then
  fake_dir=$(mktemp -d /tmp/nvsentry-ratio-jetson-XXXXXX)
  "$nvsentry" fake-l4t "$fake_dir" >"$fake_dir.log" 2>&1 &
  fake_pid=$!
  for _ in $(seq 200); do grep -q "fake-l4t: ready" "$fake_dir.log" && break; sleep 0.05; done
fi
cleanup() {
  if [ -n "$fake_pid" ]; then
    kill "$fake_pid" 2>/dev/null || true
    wait "$fake_pid" 2>/dev/null || true
    rmdir "$fake_dir"
    rm -f "$fake_dir.log"
  fi
}
trap cleanup EXIT
median_of() { sed 's/.*median \([0-9.]*\) us.*/\1/'; }
# shellcheck disable=SC2086  # an empty $kib is no argument: 1% of the object
one() { "$nvsentry" run "$@" -- "$guest" "$mode" "$rounds" "$mib" $kib | median_of; }
table=""
for _ in $(seq "$runs"); do
  row="$(one) $(one --backend=host --simulated-jetson)"
  [ -n "$fake_pid" ] && row="$row $(one --backend=host "--host-dev-dir=$fake_dir")"
  echo "run: simulated, in-process host${fake_pid:+, FUSE host} (us): $row"
  table="$table$row"$'\n'
done
mid=$(( (runs + 1) / 2 ))
col() { printf '%s' "$table" | awk -v c="$1" 'NF { print $c }' | sort -g | sed -n "${mid}p"; }
sim=$(col 1)
written="1%"
[ -n "$kib" ] && written="$kib KiB"
line="$mode, $mib MiB mapped, $written written: simulated $sim us"
line="$line; in-process host $(col 2) us ($(awk -v a="$(col 2)" -v b="$sim" 'BEGIN{printf "%.2f", a/b}')x)"
if [ -n "$fake_pid" ]; then
  line="$line; FUSE host $(col 3) us ($(awk -v a="$(col 3)" -v b="$sim" 'BEGIN{printf "%.2f", a/b}')x)"
fi
echo "$line"
