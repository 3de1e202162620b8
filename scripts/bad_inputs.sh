#!/usr/bin/env bash
# A new user's mistakes and hostile files, tried through the CLI (docs/reliability.md,
# section 6): missing and malformed models, external data that points outside the model's
# folder, truncated and corrupted engines, bad input tensors, bad routes and limits. Each
# must end with exit code 1 or 2 (not a signal, not 0) and a first stderr line starting
# "error:". Prints a markdown table; exits 1 if any case does not.
# Usage: scripts/bad_inputs.sh [SWITCHYARD]      (default build/bin/switchyard)
set -uo pipefail
cd "$(dirname "$0")/.."
SY=${1:-build/bin/switchyard}
[ -x "$SY" ] || { echo "no $SY (build first)"; exit 2; }
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
M=tests/models/resnet_tiny.onnx
IN=$(ls tests/models/resnet_tiny.inputs/*.npy | head -1)
NAME=$(basename "$IN" .npy)

# Fixtures.
echo "this is not a model" > "$W/text.onnx"
head -c 1000 "$M" > "$W/truncated.onnx"
mkdir -p "$W/m" "$W/outside"
echo secret > "$W/outside/weights.bin"
/usr/bin/python3 - "$W" <<'EOF'
import sys, onnx
from onnx import helper, TensorProto
w = sys.argv[1]
def model(location):
    t = helper.make_tensor("w", TensorProto.FLOAT, [4], [0.0] * 4)
    t.ClearField("float_data")
    t.data_location = TensorProto.EXTERNAL
    for k, v in (("location", location), ("length", "16")):
        e = t.external_data.add(); e.key, e.value = k, v
    g = helper.make_graph([helper.make_node("Add", ["x", "w"], ["y"])], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])], [t])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
onnx.save(model("../outside/weights.bin"), f"{w}/m/dotdot.onnx")
onnx.save(model("/etc/passwd"), f"{w}/m/absolute.onnx")
EOF
ln -s ../outside/weights.bin "$W/m/link.bin"
/usr/bin/python3 - "$W" <<'EOF'
import sys, onnx
m = onnx.load(f"{sys.argv[1]}/m/dotdot.onnx", load_external_data=False)
m.graph.initializer[0].external_data[0].value = "link.bin"
onnx.save(m, f"{sys.argv[1]}/m/symlink.onnx")
EOF
"$SY" build "$M" -o "$W/good.engine" >/dev/null 2>&1 || { echo "cannot build $M"; exit 2; }
head -c 3000 "$W/good.engine" > "$W/truncated.engine"
cp "$W/good.engine" "$W/flipped.engine"
size=$(stat -c %s "$W/flipped.engine")
printf '\xff' | dd of="$W/flipped.engine" bs=1 seek=$((size / 2)) conv=notrunc status=none
/usr/bin/python3 -c "import numpy as np; np.save('$W/wrong_shape.npy', np.zeros((2, 2), np.float32)); np.save('$W/wrong_dtype.npy', np.zeros(np.load('$IN').shape, np.int32))"
head -c 100 "$IN" > "$W/truncated.npy"

cases=(
  "a model that does not exist|inspect $W/missing.onnx"
  "a text file named .onnx|inspect $W/text.onnx"
  "a truncated model|build $W/truncated.onnx -o $W/x.engine"
  "external data with ../ out of the folder|inspect $W/m/dotdot.onnx"
  "external data at an absolute path|inspect $W/m/absolute.onnx"
  "external data through a symlink out of the folder|inspect $W/m/symlink.onnx"
  "a truncated engine|bench $W/truncated.engine --input $NAME=$IN --iterations 1"
  "an engine with one byte flipped|bench $W/flipped.engine --input $NAME=$IN --iterations 1"
  "a text file given to run|run $W/text.onnx --input $NAME=$IN --outputs $W/o"
  "an input of the wrong shape|run $W/good.engine --input $NAME=$W/wrong_shape.npy --outputs $W/o"
  "an input of the wrong dtype|run $W/good.engine --input $NAME=$W/wrong_dtype.npy --outputs $W/o"
  "a truncated .npy|run $W/good.engine --input $NAME=$W/truncated.npy --outputs $W/o"
  "an input name the model lacks|run $W/good.engine --input nosuch=$IN --outputs $W/o"
  "an unknown knob|build $M --route 'no.such=knob' -o $W/x.engine"
  "a knob value that does not exist|build $M --route 'memory.plan=best' -o $W/x.engine"
  "a tune without its data folder|tune $M --out $W/t --data $W/nodata --budget 5s"
  "a memory limit too small for the model|--max-memory 4K build $M -o $W/x.engine"
  "a malformed memory limit|--max-memory lots build $M -o $W/x.engine"
)
echo "| case | command | exit | first line of stderr |"
echo "| --- | --- | ---: | --- |"
bad=0
for c in "${cases[@]}"; do
  what=${c%%|*}
  args=${c#*|}
  eval "\"$SY\" $args" >"$W/out" 2>"$W/err"
  rc=$?
  first=$(head -1 "$W/err" | cut -c1-160 | sed "s|$W|W|g; s/|/\\\\|/g")
  shown=$(echo "$args" | sed "s|$W|W|g; s/|/\\\\|/g")
  ok=yes
  if ! { [ "$rc" -eq 1 ] && [[ "$first" == error:* ]]; } && ! { [ "$rc" -eq 2 ] && [[ "$first" == *--* ]]; }; then
    ok=no
    bad=1
  fi
  echo "| $what | \`switchyard $shown\` | $rc$([ $ok = no ] && echo ' **FAIL**') | $first |"
done
# Nothing outside the model folder was changed or read back into an output.
[ "$(cat "$W/outside/weights.bin")" = secret ] || { echo "outside file changed"; bad=1; }
exit $bad
