#!/usr/bin/env bash
# Sets up, builds and runs the whole test suite (unit tests, ONNX conformance, CLI and
# ONNX Runtime cross-checks) under ctest; then the five libFuzzer targets under ASan and
# UBSan (clang, build-fuzz/, a unity build: the untrusted-input surfaces on their seed
# corpora and the inputs of fixed findings, then SY_FUZZ_SECONDS of fuzzing each, default
# 10; about 5 minutes on 2 cores from a clean tree); then the runtime's concurrency tests
# under TSan (scripts/sanitize.sh tsan: g++, build-tsan/, a unity build of only the test
# files that hold them; about 3 minutes from a clean tree). SY_SKIP_FUZZ=1 / SY_SKIP_TSAN=1 leave those steps out.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
ctest --test-dir build --output-on-failure -j"${JOBS:-2}" "$@"
if [ "${SY_SKIP_FUZZ:-0}" != 1 ]; then
  SY_FUZZ_BUILD=${SY_FUZZ_BUILD:-build-fuzz} bash scripts/fuzz.sh "${SY_FUZZ_SECONDS:-10}"
fi
if [ "${SY_SKIP_TSAN:-0}" != 1 ]; then
  bash scripts/sanitize.sh tsan
fi
