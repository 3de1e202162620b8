#!/usr/bin/env bash
# The main job on the example model shipped in the repo: set up, build, inspect the model
# and run it on the example input.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
model=examples/tiny_cnn/model.onnx
echo "== switchyard inspect $model"
build/bin/switchyard inspect "$model"
echo "== switchyard run $model --input input=examples/tiny_cnn/input.npy --outputs out/tiny_cnn"
build/bin/switchyard run "$model" --input input=examples/tiny_cnn/input.npy --outputs out/tiny_cnn
