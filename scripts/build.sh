#!/usr/bin/env bash
# Installs dependencies (scripts/setup.sh), configures and builds Switchyard into build/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"${JOBS:-2}"
