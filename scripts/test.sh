#!/usr/bin/env bash
# Sets up, builds and runs the whole test suite (unit tests, ONNX conformance, CLI and
# ONNX Runtime cross-checks) under ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
ctest --test-dir build --output-on-failure -j"${JOBS:-2}" "$@"
