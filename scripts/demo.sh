#!/usr/bin/env bash
# The main job on the example model shipped in the repo: set up, build Switchyard, then
# inspect the model, compute its outputs with the reference executor, list its route
# space, build an engine for the default route, run it (CLI and C++ API), measure it,
# and tune it: search the route space on two evaluation sets under an accuracy gate and
# show the release record of the winner.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
model=examples/tiny_cnn/model.onnx
input=examples/tiny_cnn/input.npy
sy=build/bin/switchyard
mkdir -p out
step() { echo; echo "== $*"; "$@"; }
step $sy inspect $model
step $sy run $model --input input=$input --outputs out/reference
step $sy routes $model
step $sy build $model --route "" --shapes input=1x3x32x32 -o out/tiny_cnn.engine
step $sy run out/tiny_cnn.engine --input input=$input --outputs out/engine
step build/bin/switchyard_example out/tiny_cnn.engine 4
step $sy bench out/tiny_cnn.engine --input input=$input --iterations 50
/usr/bin/python3 - <<'PY'
import numpy as np
a = np.load("out/engine/probabilities.npy").astype(np.float64)
b = np.load("out/reference/probabilities.npy").astype(np.float64)
print(f"\nengine vs reference executor: relative L2 error {np.linalg.norm(a - b) / np.linalg.norm(b):.2e}")
PY
rm -rf out/tune
step $sy tune $model --out out/tune --data examples/tiny_cnn/data --shapes 'input=[1..4]x3x32x32' \
  --metric l2 --threshold 1e-3 --budget 90s
echo
echo "== out/tune/record.md"
cat out/tune/record.md
