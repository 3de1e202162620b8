#!/usr/bin/env bash
# Sanitizer runs of the unit tests (docs/reliability.md):
#   asan: the whole switchyard_tests suite built with ASan+UBSan (g++; build-asan/);
#   tsan: the concurrency tests built with TSan (g++; build-tsan/): the public API's pooled
#         sessions, concurrent Run on native and oneDNN kernels, 64 sessions of one engine,
#         compare's load levels, a batch split on worker threads.
#         Only the test files that hold them are compiled (switchyard_concurrency_tests).
# A run is clean when the tests pass and no sanitizer report appears in the log; any
# AddressSanitizer/LeakSanitizer/ThreadSanitizer error or UBSan "runtime error" is a
# finding and the script exits non-zero.
# Usage: scripts/sanitize.sh [asan|tsan|all]   (default all)
# Env: SY_SAN_JOBS (build jobs, default 2), SY_ASAN_FILTER / SY_TSAN_FILTER (gtest filters).
set -uo pipefail
cd "$(dirname "$0")/.."
WHAT=${1:-all}
JOBS=${SY_SAN_JOBS:-2}
# Tests that run several threads at once. OpenMP parallel regions inside oneDNN are not
# the subject here (libgomp is not TSan-instrumented and its barriers look like races), so
# these tests run with OMP_NUM_THREADS=1 (and native::ParallelFor stays on the calling thread
# in TSan builds, since an engine's thread count overrides that variable): the threads
# under test are our own std::threads.
TSAN_FILTER=${SY_TSAN_FILTER:-'PublicApi.*:NativeKernels.SoftmaxRunIsThreadSafe:OnednnDynamic.*Concurrently*:LoadTest.*:CompareCli.AnEngineAgainstItselfIsPromotedWithEveryField:BatchSplitWorkers.OtherCountsRepeatedRunsAndSessionsAgree'}
ASAN_FILTER=${SY_ASAN_FILTER:-'*'}

build() {  # dir sanitizers test-target unity(ON|OFF)
  local dir=$1 san=$2 tests=$3 unity=$4
  if [ ! -f "$dir/CMakeCache.txt" ]; then
    # -O1: the level ASan recommends, and half the compile time of -O3 on 2 cores.
    # Without CUDA: nvcc takes no -fsanitize, and the GPU tests skip here anyway.
    # tsan: a unity build (CMake batches of 8 sources per compiler call), the core's headers
    # parsed once per batch instead of once per source (docs/reliability.md); asan: not, the
    # whole suite's test files share helper names (MakeNode, RunOp, ...) a batch cannot hold.
    cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O1 -DNDEBUG" \
      -DSWITCHYARD_SANITIZE="$san" -DSWITCHYARD_CUDA=OFF -DCMAKE_UNITY_BUILD="$unity" >/dev/null || return 1
  fi
  # The CLI too: cli_test and the database kill test run it.
  nice -n 10 cmake --build "$dir" -j"$JOBS" --target "$tests" switchyard \
    >"$dir/sanitize-build.log" 2>&1 || { tail -30 "$dir/sanitize-build.log"; return 1; }
}

findings() {  # log -> number of sanitizer reports
  grep -cE "ERROR: (AddressSanitizer|LeakSanitizer)|WARNING: ThreadSanitizer|runtime error:" "$1"
}

status=0
run() {  # name dir test-binary filter env...
  local name=$1 dir=$2 bin=$3 filter=$4; shift 4
  local log="$dir/sanitize-$name.log" start rc n
  start=$(date +%s)
  env "$@" "$dir/bin/$bin" --gtest_filter="$filter" >"$log" 2>&1
  rc=$?
  n=$(findings "$log")
  local passed failed
  passed=$(grep -o '\[  PASSED  \] [0-9]* test' "$log" | grep -o '[0-9]*')
  failed=$(grep -o '\[  FAILED  \] [0-9]* test' "$log" | grep -o '[0-9]*')
  echo "$name: rc=$rc passed=${passed:-0} failed=${failed:-0} sanitizer_reports=$n" \
       "seconds=$(( $(date +%s) - start )) (log: $log)"
  if [ "$rc" -ne 0 ] || [ "$n" -ne 0 ]; then
    status=1
    grep -E "ERROR: (AddressSanitizer|LeakSanitizer)|WARNING: ThreadSanitizer|runtime error:|SUMMARY:" "$log" |
      sort | uniq -c | sort -rn | head -20
    grep -E '^\[  FAILED  \] [A-Za-z]' "$log" | head -20
  fi
}

if [ "$WHAT" = asan ] || [ "$WHAT" = all ]; then
  build build-asan address,undefined switchyard_tests OFF || { echo "asan: build failed"; exit 2; }
  run asan build-asan switchyard_tests "$ASAN_FILTER" \
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:detect_stack_use_after_return=0 \
    UBSAN_OPTIONS=print_stacktrace=1
fi
if [ "$WHAT" = tsan ] || [ "$WHAT" = all ]; then
  build build-tsan thread switchyard_concurrency_tests ON || { echo "tsan: build failed"; exit 2; }
  run tsan build-tsan switchyard_concurrency_tests "$TSAN_FILTER" OMP_NUM_THREADS=1 \
    TSAN_OPTIONS="halt_on_error=0 second_deadlock_stack=1 suppressions=$PWD/fuzz/tsan.supp"
fi
[ $status -eq 0 ] && echo "sanitize: clean" || echo "sanitize: FINDINGS"
exit $status
