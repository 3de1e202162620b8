#!/usr/bin/env bash
# Builds and checks Switchyard on a GPU machine that cannot install packages (the lent
# H200 of docs/benchmarks-gpu.md): Debian packages of the libraries it lacks (libonnx,
# oneDNN, SQLite and OpenSSL headers, fetched beforehand with
#   apt-get download libonnx-dev libonnx1 libonnxifi libdnnl-dev libdnnl2 libsqlite3-dev libssl-dev
# into third_party/debs) are unpacked into a private prefix, then
#   scripts/gpu_session.sh build            configure + build (Ninja, all cores)
#   scripts/gpu_session.sh test             GPU tests (CUDA harness + engine tests)
#   scripts/gpu_session.sh bench ARGS...    bench/gpu/run.py with ARGS
#   scripts/gpu_session.sh fuzz SECONDS [TARGET...]   libFuzzer targets, all at once, built elsewhere
#       (clang here may lack libFuzzer): out/fuzzpack/bins.tar.xz holds fuzz_<target> and
#       libomp.so.5; workers per target from SY_FUZZ_WORKERS (scripts/fuzz.sh); summary,
#       logs and crash inputs go to $OUT/fuzz.tar.gz
# Steps can be chained: scripts/gpu_session.sh build test. Logs go to $OUT when set.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
DEPS=/tmp/sy-deps
LOG=${OUT:-/tmp}
BUILD=${SY_GPU_BUILD:-build-gpu}
LIBDIR=$DEPS/usr/lib/x86_64-linux-gnu
export LD_LIBRARY_PATH=$LIBDIR:${LD_LIBRARY_PATH:-}

unpack() {
  [ -d "$DEPS/usr" ] && return 0
  mkdir -p "$DEPS"
  for f in third_party/debs/*.deb; do dpkg -x "$f" "$DEPS"; done
  # Development symlinks whose targets live in runtime packages the machine already has.
  for l in "$LIBDIR"/*.so; do
    [ -e "$l" ] && continue
    local target; target=$(readlink "$l")
    for sys in /usr/lib/x86_64-linux-gnu /lib/x86_64-linux-gnu; do
      if [ -e "$sys/$(basename "$target")" ]; then ln -sf "$sys/$(basename "$target")" "$l"; break; fi
    done
  done
}

build() {
  unpack
  # System OpenSSL headers when present; else the carried ones.
  local ssl=()
  [ -f /usr/include/openssl/sha.h ] || ssl=(-DOPENSSL_ROOT_DIR=$DEPS/usr -DOPENSSL_INCLUDE_DIR=$DEPS/usr/include)
  cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$DEPS/usr" \
    -DCMAKE_INCLUDE_PATH="$DEPS/usr/include" -DCMAKE_LIBRARY_PATH="$LIBDIR" "${ssl[@]}" ${SY_GPU_CMAKE_ARGS:-} \
    > "$LOG/configure.log" 2>&1 || { tail -40 "$LOG/configure.log"; return 1; }
  grep -i "cuda target" "$LOG/configure.log"
  local t0=$SECONDS
  # SY_GPU_TARGETS: build only these targets (e.g. "switchyard" when no tests will run);
  # SY_GPU_CMAKE_ARGS: more configure arguments (e.g. "-DSWITCHYARD_CUDA=OFF" for CPU-only runs
  # on the host: no nvcc in the build).
  cmake --build "$BUILD" -j "$(nproc)" ${SY_GPU_TARGETS:+--target $SY_GPU_TARGETS} > "$LOG/build.log" 2>&1 || { grep -B2 -A12 "error" "$LOG/build.log" | head -120; return 1; }
  echo "build: $((SECONDS - t0)) s"
}

gtest() {
  export LD_LIBRARY_PATH=$LIBDIR:${LD_LIBRARY_PATH:-}
  "$BUILD/bin/switchyard_tests" --gtest_filter='KernelHarness.EveryCudaImpl*:Cuda*' > "$LOG/gpu_tests.log" 2>&1
  local rc=$?
  grep -E "FAIL|\[  PASSED|\[  FAILED|SKIPPED|runs," "$LOG/gpu_tests.log" | head -150
  echo "gpu tests rc=$rc"
}

fuzz() {
  unpack
  local bins=/tmp/sy-fuzz-bin work=/tmp/sy-fuzz
  mkdir -p "$bins" "$work"
  tar -xJf out/fuzzpack/bins.tar.xz -C "$bins" || return 1
  export LD_LIBRARY_PATH=$bins:$LIBDIR:${LD_LIBRARY_PATH:-}
  SY_FUZZ_BIN=$bins SY_FUZZ_BUILD=$work SY_FUZZ_PARALLEL=1 bash scripts/fuzz.sh "$@"
  local rc=$?
  (cd "$work" && for f in fuzz-*.log; do tail -n 400 "$f" > "$f.tail"; done &&
    tar -czf "$LOG/fuzz.tar.gz" fuzz-summary.txt fuzz-*.log.tail fuzz-artifacts)
  return $rc
}

for step in "$@"; do
  case "$step" in
    build) build || exit 1 ;;
    fuzz) shift; fuzz "${1:?fuzz SECONDS}" "${@:2}"; exit $? ;;
    test) gtest ;;
    bench) shift_args=true ;;
  esac
  [ "${shift_args:-}" = true ] && break
done
if [ "${shift_args:-}" = true ]; then
  while [ "$1" != bench ]; do shift; done
  shift
  export LD_LIBRARY_PATH=$LIBDIR:${LD_LIBRARY_PATH:-}
  PYTHONUNBUFFERED=1 python3 bench/gpu/run.py --switchyard "$BUILD/bin/switchyard" "$@"
fi
