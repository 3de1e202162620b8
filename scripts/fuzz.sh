#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan+UBSan; build-fuzz/) if needed and runs each for
# SECONDS (default 60) on its seed corpus in fuzz/corpus/<target>/. Prints executions per
# target and any crash; exits non-zero when a target crashed, leaked, hung or ran out of
# memory. New inputs the fuzzer finds go to build-fuzz/fuzz-corpus/<target>/ (kept between
# runs, not committed); crash inputs to build-fuzz/fuzz-artifacts/<target>/.
# Usage: scripts/fuzz.sh [SECONDS] [TARGET...]
# Env: SY_FUZZ_BUILD (default build-fuzz), SY_FUZZ_JOBS (build jobs, default 2),
#      SY_FUZZ_CMAKE_ARGS (extra configure arguments),
#      SY_FUZZ_BIN (a folder of prebuilt fuzz_<target> binaries: no build),
#      SY_FUZZ_WORKERS ("N" or "target=N,target=N": fuzzing processes per target, sharing
#      the target's corpus folder; default 1), SY_FUZZ_PARALLEL=1 (all targets at once).
# Executions are summed over a target's workers.
set -uo pipefail
cd "$(dirname "$0")/.."
SECS=${1:-60}
[ $# -gt 0 ] && shift
TARGETS=(onnx_import engine_load route_parse tensor_read db_open)
[ $# -gt 0 ] && TARGETS=("$@")
B=${SY_FUZZ_BUILD:-build-fuzz}
JOBS=${SY_FUZZ_JOBS:-2}

BIN=${SY_FUZZ_BIN:-$B/bin}
mkdir -p "$B"
if [ -n "${SY_FUZZ_BIN:-}" ]; then
  :  # prebuilt binaries
elif [ ! -f "$B/CMakeCache.txt" ]; then
  # -O1, as OSS-Fuzz builds its targets: the instrumentation, not the optimiser, finds the
  # bugs, and CI compiles the core a second time here (8.4 min at -O1 on the 2-core box;
  # as a unity build, 8 sources per compiler call, the headers are parsed once per batch).
  cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O1 -DNDEBUG" -DCMAKE_UNITY_BUILD=ON \
    -DCMAKE_C_FLAGS_RELEASE="-O1 -DNDEBUG" -DCMAKE_CXX_COMPILER=clang++ \
    -DCMAKE_C_COMPILER=clang -DSWITCHYARD_FUZZ=ON -DSWITCHYARD_TESTS=OFF -DSWITCHYARD_CUDA=OFF \
    ${SY_FUZZ_CMAKE_ARGS:-} >/dev/null || exit 2
fi
if [ -z "${SY_FUZZ_BIN:-}" ]; then
  nice -n 10 cmake --build "$B" -j"$JOBS" --target fuzz_all >"$B/fuzz-build.log" 2>&1 || {
    tail -30 "$B/fuzz-build.log"; echo "fuzz: build failed (log: $B/fuzz-build.log)"; exit 2; }
fi

# Leaks are findings too; UBSan already aborts (-fno-sanitize-recover).
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
# One OpenMP thread: the targets build kernels but never need parallel work, and fewer
# threads leave the shared cores to the fuzzer.
export OMP_NUM_THREADS=1

extra_args() {
  case $1 in
    route_parse) echo "-max_len=512 -dict=fuzz/route_parse.dict" ;;
    tensor_read) echo "-max_len=4096" ;;
    *) echo "" ;;
  esac
}

workers_for() {
  local spec=${SY_FUZZ_WORKERS:-1} item
  case $spec in *=*) ;; *) echo "$spec"; return ;; esac
  for item in ${spec//,/ }; do
    [ "${item%%=*}" = "$1" ] && { echo "${item#*=}"; return; }
  done
  echo 1
}

# Runs target $1's workers for SECS and appends its summary line.
run_target() {
  local t=$1 bin="$BIN/fuzz_$1" n w pids=() rc=0 execs=0 start took why crash result
  [ -x "$bin" ] || { printf '%-12s %8s %12s %10s  %s\n' "$t" 0 0 0 "no $bin" >> "$B/fuzz-summary.txt"; return 1; }
  n=$(workers_for "$t")
  local work="$B/fuzz-corpus/$t" art="$B/fuzz-artifacts/$t/"
  mkdir -p "$work" "$art"
  # The inputs of fixed findings (tests/fuzz_regressions/) join the corpus, so every run
  # executes them again under ASan and UBSan.
  case $t in
    engine_load) cp tests/fuzz_regressions/engine_*.bin "$work/" 2>/dev/null ;;
    onnx_import) cp tests/fuzz_regressions/*.onnx "$work/" 2>/dev/null ;;
  esac
  start=$(date +%s)
  for w in $(seq 1 "$n"); do
    # shellcheck disable=SC2046
    "$bin" -max_total_time="$SECS" -timeout=25 -rss_limit_mb=2560 -malloc_limit_mb=2048 -seed="$w" \
      -print_final_stats=1 -artifact_prefix="$art" $(extra_args "$t") \
      "$work" "fuzz/corpus/$t" >"$B/fuzz-$t.$w.log" 2>&1 &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || rc=$?; done
  took=$(( $(date +%s) - start ))
  for w in $(seq 1 "$n"); do
    e=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$B/fuzz-$t.$w.log" | grep -o '[0-9]*$' | tail -1)
    execs=$((execs + ${e:-0}))
  done
  if [ $rc -eq 0 ]; then
    result=ok
  else
    crash=$(grep -ho "Test unit written to .*" "$B"/fuzz-"$t".*.log | tail -1 | sed 's/Test unit written to //')
    why=$(grep -h -m1 -E "ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:|SUMMARY:" "$B"/fuzz-"$t".*.log | head -1 | cut -c1-160)
    result="CRASH rc=$rc ${crash:-} :: ${why:-see $B/fuzz-$t.*.log}"
  fi
  printf '%-12s %8s %12s %10s  %s\n' "$t" "$took" "$execs" "$((execs / (took > 0 ? took : 1)))" \
    "$result ($n worker(s))" >> "$B/fuzz-summary.txt"
  [ $rc -eq 0 ]
}

printf '%-12s %8s %12s %10s  %s\n' target seconds executions exec/s result > "$B/fuzz-summary.txt"
failed=0
if [ "${SY_FUZZ_PARALLEL:-0}" = 1 ]; then
  tpids=()
  for t in "${TARGETS[@]}"; do run_target "$t" & tpids+=($!); done
  for p in "${tpids[@]}"; do wait "$p" || failed=1; done
else
  for t in "${TARGETS[@]}"; do
    run_target "$t" || failed=1
    tail -1 "$B/fuzz-summary.txt"
  done
fi
echo "---"
cat "$B/fuzz-summary.txt"
if [ $failed -ne 0 ]; then
  echo "fuzz: FINDINGS (logs: $B/fuzz-<target>.<worker>.log; reproduce: $BIN/fuzz_<target> <crash file>)"
  exit 1
fi
echo "fuzz: no crash"
