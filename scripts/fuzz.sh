#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan+UBSan; build-fuzz/) if needed and runs each for
# SECONDS (default 60) on its seed corpus in fuzz/corpus/<target>/. Prints executions per
# target and any crash; exits non-zero when a target crashed, leaked, hung or ran out of
# memory. New inputs the fuzzer finds go to build-fuzz/fuzz-corpus/<target>/ (kept between
# runs, not committed); crash inputs to build-fuzz/fuzz-artifacts/<target>/.
# Usage: scripts/fuzz.sh [SECONDS] [TARGET...]
# Env: SY_FUZZ_BUILD (default build-fuzz), SY_FUZZ_JOBS (build jobs, default 2).
set -uo pipefail
cd "$(dirname "$0")/.."
SECS=${1:-60}
[ $# -gt 0 ] && shift
TARGETS=(onnx_import engine_load route_parse tensor_read db_open)
[ $# -gt 0 ] && TARGETS=("$@")
B=${SY_FUZZ_BUILD:-build-fuzz}
JOBS=${SY_FUZZ_JOBS:-2}

if [ ! -f "$B/CMakeCache.txt" ]; then
  cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=clang++ \
    -DCMAKE_C_COMPILER=clang -DSWITCHYARD_FUZZ=ON -DSWITCHYARD_TESTS=OFF -DSWITCHYARD_CUDA=OFF \
    ${SY_FUZZ_CMAKE_ARGS:-} >/dev/null || exit 2
fi
nice -n 10 cmake --build "$B" -j"$JOBS" --target fuzz_all >"$B/fuzz-build.log" 2>&1 || {
  tail -30 "$B/fuzz-build.log"; echo "fuzz: build failed (log: $B/fuzz-build.log)"; exit 2; }

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

failed=0
printf '%-12s %8s %12s %10s  %s\n' target seconds executions exec/s result > "$B/fuzz-summary.txt"
for t in "${TARGETS[@]}"; do
  bin="$B/bin/fuzz_$t"
  [ -x "$bin" ] || { echo "fuzz: no $bin"; failed=1; continue; }
  work="$B/fuzz-corpus/$t"; art="$B/fuzz-artifacts/$t/"
  mkdir -p "$work" "$art"
  log="$B/fuzz-$t.log"
  start=$(date +%s)
  # shellcheck disable=SC2046
  "$bin" -max_total_time="$SECS" -timeout=25 -rss_limit_mb=2560 -malloc_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$art" $(extra_args "$t") \
    "$work" "fuzz/corpus/$t" >"$log" 2>&1
  rc=$?
  took=$(( $(date +%s) - start ))
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
  rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
  if [ $rc -eq 0 ]; then
    result=ok
  else
    failed=1
    crash=$(grep -o "Test unit written to .*" "$log" | tail -1 | sed 's/Test unit written to //')
    why=$(grep -m1 -E "ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:|SUMMARY:" "$log" | cut -c1-160)
    result="CRASH rc=$rc ${crash:-} :: ${why:-see $log}"
  fi
  printf '%-12s %8s %12s %10s  %s\n' "$t" "$took" "${execs:-?}" "${rate:-?}" "$result" >> "$B/fuzz-summary.txt"
  tail -1 "$B/fuzz-summary.txt"
done
echo "---"
cat "$B/fuzz-summary.txt"
if [ $failed -ne 0 ]; then
  echo "fuzz: FINDINGS (logs: $B/fuzz-<target>.log; reproduce: $B/bin/fuzz_<target> <crash file>)"
  exit 1
fi
echo "fuzz: no crash"
