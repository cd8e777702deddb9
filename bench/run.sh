#!/usr/bin/env bash
# Builds what the benchmarks need and runs them; the report goes to standard output.
#   bench/run.sh [--rounds=N]        (build directory: ./build, or $BUILD_DIR)
#   bench/run.sh --list-targets      prints the targets it would build, and exits
# Takes some 75 s on 2 cores once built (docs/benchmarks.md).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
scripts/install-deps.sh --tests
# A build dir the demo made (scripts/demo.sh) has no benchmarks: configure them in.
if [ ! -f "$BUILD_DIR/CMakeCache.txt" ] || grep -q "^NVSENTRY_TESTS:BOOL=OFF" "$BUILD_DIR/CMakeCache.txt"; then
  generator=()  # a new build dir only: an existing one keeps its generator
  if [ ! -f "$BUILD_DIR/CMakeCache.txt" ] && command -v ninja >/dev/null; then generator=(-G Ninja); fi
  cmake -S . -B "$BUILD_DIR" "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNVSENTRY_TESTS=ON >/dev/null
fi
build_type=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$BUILD_DIR/CMakeCache.txt")
case "$build_type" in
  Release|RelWithDebInfo) ;;
  *) echo "bench/run.sh: warning: $BUILD_DIR is a '$build_type' build; figures are for optimised code" >&2 ;;
esac
targets=(nvsentry bench_guest nvsentry_bench gpu_guest_bench parked_guest parked_bench teardown_bench
  host_mirror_bench l4t_read_bench twin_guest_bench)
# gpu_bench is there only where Google Benchmark was found (bench/CMakeLists.txt): the build says,
# whatever its generator (Makefiles' bench/CMakeFiles/gpu_bench.dir/build.make is not Ninja's).
gpu_bench=0
build_targets=$(cmake --build "$BUILD_DIR" --target help)
if grep -qE '(^|[ /])gpu_bench(:|$)' <<<"$build_targets"; then
  targets+=(gpu_bench)
  gpu_bench=1
fi
if [ "${1:-}" = --list-targets ]; then
  printf '%s\n' "${targets[@]}"
  exit 0
fi
cmake --build "$BUILD_DIR" --target "${targets[@]}" -j"$(nproc)" >&2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$BUILD_DIR/bench/nvsentry_bench" "$BUILD_DIR/sentry/nvsentry" "$BUILD_DIR/bench/bench_guest" "$@" |
  tee "$out/driver"
echo
echo "## The simulated GPU, end to end (a guest under nvsentry run)"
"$BUILD_DIR/sentry/nvsentry" run -- "$BUILD_DIR/bench/gpu_guest_bench" | tee "$out/gpu"
if [ "$gpu_bench" = 1 ]; then
  echo
  echo "## The command processor in process (pushbuffer decode, DMA engine)"
  "$BUILD_DIR/bench/gpu_bench"
fi
echo
echo "## Parked waits (5,000 SYNCPT_WAITEX parked in the sentry)"
"$BUILD_DIR/bench/parked_bench" "$BUILD_DIR/sentry/nvsentry" "$BUILD_DIR/bench/parked_guest"
echo
echo "## Unmap and teardown at scale (in process)"
"$BUILD_DIR/bench/teardown_bench"
echo
echo "## The host backend's memory coherence (in process)"
"$BUILD_DIR/bench/host_mirror_bench"
echo
echo "## The host backend over the simulated Jetson inside the sentry (--simulated-jetson)"
echo "Submit to fence with N MiB mapped, 1% (then 20 KiB) written between submissions"
echo "(simulated, then host; host calls cost a function call, not a driver's system call):"
for mib in 2 128 1024; do
  for kib in "" 20; do
    # shellcheck disable=SC2086  # an empty $kib is no argument: 1% of the object
    "$BUILD_DIR/sentry/nvsentry" run -- "$BUILD_DIR/bench/twin_guest_bench" latency 1000 "$mib" $kib
    # shellcheck disable=SC2086
    "$BUILD_DIR/sentry/nvsentry" run --backend=host --simulated-jetson -- \
      "$BUILD_DIR/bench/twin_guest_bench" latency 1000 "$mib" $kib
  done
done
echo
echo "## The host backend over a simulated Jetson (nvsentry fake-l4t; root only)"
if [ "$(id -u)" = 0 ]; then
  jetson=$(mktemp -d /tmp/nvsentry-bench-jetson-XXXXXX)
  "$BUILD_DIR/sentry/nvsentry" fake-l4t "$jetson" >"$out/fake" 2>&1 &
  fake_pid=$!
  for _ in $(seq 200); do grep -q "fake-l4t: ready" "$out/fake" && break; sleep 0.05; done
  host=(--backend=host "--host-dev-dir=$jetson")
  echo "SYNCPT_READ, ns per call (5 blocks of 20,000):"
  echo "  the fake's node straight, no sandbox: $("$BUILD_DIR/bench/l4t_read_bench" "$jetson")"
  echo "  simulated backend:                  $("$BUILD_DIR/sentry/nvsentry" run -- \
    "$BUILD_DIR/bench/bench_guest" syncpt 1 20000 5)"
  echo "  host backend over the fake:         $("$BUILD_DIR/sentry/nvsentry" run "${host[@]}" -- \
    "$BUILD_DIR/bench/bench_guest" syncpt 1 20000 5)"
  echo "Submit to fence, 1 MiB DMA buffers (simulated, then host backend):"
  "$BUILD_DIR/sentry/nvsentry" run -- "$BUILD_DIR/bench/gpu_guest_bench" 10 1
  "$BUILD_DIR/sentry/nvsentry" run "${host[@]}" -- "$BUILD_DIR/bench/gpu_guest_bench" 10 1
  "$BUILD_DIR/bench/host_mirror_bench" --mib=16 "--host-dir=$jetson"
  echo "Submit to fence with N MiB mapped, 1% (then 20 KiB) written between submissions"
  echo "(simulated, then host):"
  for mib in 2 128 1024; do
    for kib in "" 20; do
      # shellcheck disable=SC2086  # an empty $kib is no argument: 1% of the object
      "$BUILD_DIR/sentry/nvsentry" run -- "$BUILD_DIR/bench/twin_guest_bench" latency 100 "$mib" $kib
      # shellcheck disable=SC2086
      "$BUILD_DIR/sentry/nvsentry" run "${host[@]}" -- "$BUILD_DIR/bench/twin_guest_bench" latency \
        100 "$mib" $kib
    done
  done
  echo "Eight 256 MiB objects over untouched guest memory, host backend:"
  "$(dirname "$0")/twin_memory.sh" "$BUILD_DIR/sentry/nvsentry" "$BUILD_DIR/bench/twin_guest_bench" \
    "$jetson" "$fake_pid"
  kill "$fake_pid"
  wait "$fake_pid" || true
  rmdir "$jetson"
else
  echo "(skipped: the fake's FUSE mount needs root)"
fi
echo
echo "## The performance table (docs/benchmarks.md): every row with its target, PASS or MISS"
sed -n '/^6 /,$p' "$out/driver" | tail -n +2
grep -E '^(per-entry|dma-64MiB) ' "$out/gpu" | sed 's/^/  /'
