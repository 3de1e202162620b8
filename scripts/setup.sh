#!/usr/bin/env bash
# Installs every system dependency Switchyard needs, from Debian packages and npm.
# Idempotent: when everything is present it only checks and returns in seconds.
set -euo pipefail
cd "$(dirname "$0")/.."

PKGS=(
  build-essential cmake pkg-config git
  libprotobuf-dev protobuf-compiler libonnx-dev libonnx-testdata libssl-dev
  libsqlite3-dev sqlite3 nlohmann-json3-dev libcli11-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libdnnl-dev libopenblas-dev
  python3 python3-numpy python3-onnx
  clang libclang-rt-dev libomp-dev  # scripts/fuzz.sh: libFuzzer, ASan/UBSan, OpenMP for clang
  chromium  # tests/report_test.cc renders `switchyard report` pages headless
)

missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "setup: system packages present"
fi

if ! command -v npm >/dev/null 2>&1; then
  echo "setup: installing nodejs and npm"
  DEBIAN_FRONTEND=noninteractive ${SUDO:-} apt-get install -y -qq --no-install-recommends nodejs npm
fi

# ONNX Runtime's CPU library (the peer for cross-checks and benchmarks). --ignore-scripts:
# its install script would try to download extras, which fails offline.
if [ ! -f third_party/node/node_modules/onnxruntime-node/package.json ]; then
  echo "setup: installing onnxruntime-node 1.30.0 (npm)"
  mkdir -p third_party/node
  (cd third_party/node && { [ -f package.json ] || echo '{"name":"switchyard-peer","private":true}' > package.json; } &&
   npm install --silent --no-audit --no-fund --ignore-scripts onnxruntime-node@1.30.0) ||
   echo "setup: warning: onnxruntime-node could not be installed; ORT cross-checks will skip" >&2
fi
# Chart libraries `switchyard report` compiles in and inlines into its pages (docs/report.md).
if [ ! -f third_party/node/node_modules/vega-embed/build/vega-embed.min.js ] ||
   [ ! -f third_party/node/node_modules/vega-lite/build/vega-lite.min.js ] ||
   [ ! -f third_party/node/node_modules/vega/build/vega.min.js ]; then
  echo "setup: installing vega 6.4.0, vega-lite 6.4.3, vega-embed 7.3.0 (npm)"
  mkdir -p third_party/node
  (cd third_party/node && { [ -f package.json ] || echo '{"name":"switchyard-peer","private":true}' > package.json; } &&
   npm install --silent --no-audit --no-fund --ignore-scripts vega@6.4.0 vega-lite@6.4.3 vega-embed@7.3.0) ||
   echo "setup: warning: vega libraries could not be installed; switchyard report will be unavailable" >&2
fi
echo "setup: done"
