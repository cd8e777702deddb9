#!/usr/bin/env bash
# Builds the libFuzzer targets with clang++-14 (ASan + UBSan) in their own build directory (reused
# when present), writes the seed corpora from the catalogue and runs every fuzzer for a fixed number
# of runs (the suite's setting) or a fixed time (for long runs), failing on any crash, leak,
# timeout or invariant violation. Exit 77 (ctest: skipped) without clang++-14. See docs/fuzzing.md.
#
# Environment:
#   NVSENTRY_FUZZ_BUILD    build directory         (default: <source>/build-fuzz-clang)
#   NVSENTRY_FUZZ_RUNS     runs per fuzzer         (default: engine 300000, decode and host1x 2000000,
#                                                   xlate 10000)
#   NVSENTRY_FUZZ_SECONDS  seconds per fuzzer instead of a number of runs (e.g. 3600)
#   NVSENTRY_FUZZ_JOBS     build jobs               (default: 2)
#   NVSENTRY_FUZZ_TARGETS  fuzzers to run           (default: "engine_fuzz decode_fuzz host1x_fuzz
#                                                   xlate_fuzz")
set -uo pipefail

src=${NVSENTRY_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${NVSENTRY_FUZZ_BUILD:-$src/build-fuzz-clang}
jobs=${NVSENTRY_FUZZ_JOBS:-2}
targets=${NVSENTRY_FUZZ_TARGETS:-engine_fuzz decode_fuzz host1x_fuzz xlate_fuzz}

if ! command -v clang++-14 >/dev/null 2>&1; then
  echo "run_fuzzers: clang++-14 not found; skipping"
  exit 77
fi

start=$(date +%s)
# Configured every time (quick once cached): a reused build directory must learn of targets added
# since it was made before one of them is asked for by name.
mkdir -p "$build"
compilers=()
[[ -f $build/CMakeCache.txt ]] ||
  compilers=(-DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14)
cmake -S "$src" -B "$build" -DNVSENTRY_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo "${compilers[@]}" \
  >"$build/configure.log" 2>&1 ||
  { cat "$build/configure.log"; echo "run_fuzzers: configure failed"; exit 1; }
# shellcheck disable=SC2086
if ! cmake --build "$build" -j"$jobs" --target fuzz_seeds $targets >"$build/build.log" 2>&1; then
  tail -50 "$build/build.log"
  echo "run_fuzzers: build failed"
  exit 1
fi
built=$(date +%s)
echo "run_fuzzers: build took $((built - start)) s"

# How long each fuzzer runs: a fixed number of runs (deterministic in amount of work; about a
# minute each on one core of the CI machine), or a fixed time when asked for.
limit_for() {
  if [[ -n ${NVSENTRY_FUZZ_SECONDS:-} ]]; then
    echo "-max_total_time=$NVSENTRY_FUZZ_SECONDS"
  elif [[ -n ${NVSENTRY_FUZZ_RUNS:-} ]]; then
    echo "-runs=$NVSENTRY_FUZZ_RUNS"
  elif [[ $1 == engine_fuzz ]]; then
    echo "-runs=300000"
  elif [[ $1 == xlate_fuzz ]]; then
    # A fresh fake Jetson and host driver per input (their threads start and stop with it): some
    # 400 inputs a second, so this is about 25 s.
    echo "-runs=10000"
  else
    echo "-runs=2000000"
  fi
}

work=$build/fuzz-run
mkdir -p "$work"
pids=()
for t in $targets; do
  name=${t%_fuzz}
  rm -rf "$work/seeds-$name"
  "$build/tests/fuzz/fuzz_seeds" "$name" "$work/seeds-$name" || exit 1
  # Inputs that long runs found (fixed since) stay in the seeds, so a regression shows at once.
  [ -d "$src/tests/fuzz/corpus/$name" ] && cp "$src/tests/fuzz/corpus/$name"/* "$work/seeds-$name/"
  # The corpus grows across runs in the build directory; the seeds are regenerated each time.
  mkdir -p "$work/corpus-$name" "$work/artifacts-$name"
  limit=$(limit_for "$t")
  echo "run_fuzzers: $t $limit"
  (cd "$work" && exec "$build/tests/fuzz/$t" "$limit" -timeout=10 \
     -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$work/artifacts-$name/" \
     "$work/corpus-$name" "$work/seeds-$name" >"$work/$name.log" 2>&1) &
  pids+=($!)
done

status=0
i=0
for t in $targets; do
  name=${t%_fuzz}
  if ! wait "${pids[$i]}"; then
    status=1
    echo "run_fuzzers: $t FAILED; last lines of $work/$name.log:"
    tail -60 "$work/$name.log"
    ls "$work/artifacts-$name/" 2>/dev/null | sed "s|^|  reproduce: $build/tests/fuzz/$t $work/artifacts-$name/|"
  fi
  i=$((i + 1))
done

echo "run_fuzzers: results ($((($(date +%s) - start))) s in all)"
for t in $targets; do
  name=${t%_fuzz}
  log=$work/$name.log
  final=$(grep -E "^#[0-9]+[[:space:]]+(DONE|pulse|NEW|REDUCE)" "$log" | tail -1)
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
  printf '  %-12s %s execs, %s exec/s; %s\n' "$t" "${execs:-?}" "${rate:-?}" "${final:-no final line}"
done
exit $status
