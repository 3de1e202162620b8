#!/usr/bin/env bash
# Regenerates the seed corpora in fuzz/corpus/<target>/ from real files: the small test
# models, engines built from them with `switchyard build`, the models' .npy inputs, ONNX
# test-data TensorProto .pb files, and tuning databases written by `switchyard db import`.
# Usage: fuzz/make_corpus.sh [SWITCHYARD_CLI]  (default: build/bin/switchyard)
# Kept small (well under 2 MB): small seeds make fast fuzzing, and libFuzzer finds the rest.
set -euo pipefail
cd "$(dirname "$0")/.."
CLI=${1:-build/bin/switchyard}
C=fuzz/corpus
rm -rf "$C"
mkdir -p "$C"/{onnx_import,engine_load,route_parse,tensor_read,db_open}
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT

# onnx_import: the smaller zoo models plus tiny hand-made graphs (python3-onnx).
for m in efficientnet_tiny text_detector_tiny text_recognizer_tiny resnet_tiny; do
  cp tests/models/$m.onnx "$C/onnx_import/$m.onnx"
done
/usr/bin/python3 fuzz/make_tiny_models.py "$C/onnx_import"

# engine_load: engines of tiny models, stored WITHOUT their trailing 32-byte SHA-256 (the
# fuzz target appends the right one; see fuzz/engine_load_fuzz.cc).
build_engine() {  # model route name
  "$CLI" build "$1" --route "$2" -o "$TMP/$3.engine" >/dev/null
  head -c -32 "$TMP/$3.engine" > "$C/engine_load/$3"
}
for f in "$C"/onnx_import/tiny_*.onnx; do
  n=$(basename "$f" .onnx)
  build_engine "$f" "" "$n" || echo "make_corpus: no engine for $n" >&2
done
build_engine tests/models/efficientnet_tiny.onnx "" efficientnet_default
build_engine tests/models/text_recognizer_tiny.onnx "" text_recognizer_default
build_engine tests/models/text_detector_tiny.onnx "layout.activations=nchw" text_detector_nchw

# route_parse: first byte picks the model (0 resnet_tiny, 1 bert_tiny_op17), then the text.
i=0
while IFS= read -r line; do
  printf '%s' "$line" > "$C/route_parse/r$i"; i=$((i + 1))
done <<'ROUTES'
0
0fuse.conv_act=off
0layout.activations=[nchw|nhwc|blocked] kernel.conv=[auto|onednn|im2col_gemm|direct|winograd]
0precision=bf16 precision@conv*=fp32
0memory.plan=linear_scan threads=2 fuse.conv_bn=off
0kernel.conv=winograd layout.activations=nchw
1fuse.attention=off fuse.layernorm=[on|off] fuse.gelu=[on|off]
1kernel.gemm=[auto|onednn|openblas|native] precision=[fp32|bf16]
1precision=bf16 precision@*attn*=fp32 quant.weights=int8
1fuse.gemm_epilogue=off   fuse.elementwise=off
ROUTES

# tensor_read: .npy inputs of the models (small ones) and TensorProto .pb test data.
for f in tests/models/bert_tiny_op17.inputs/*.npy tests/models/gpt2_tiny.inputs/*.npy \
         tests/models/text_recognizer_tiny.inputs/*.npy; do
  cp "$f" "$C/tensor_read/$(basename "$(dirname "$f")" .inputs)_$(basename "$f")"
done
D=/usr/share/libonnx-testdata/data/node
for t in test_abs test_cast_FLOAT_to_STRING test_gather_0 test_reshape_negative_dim \
         test_constantofshape_int_zeros test_range_int32_type_negative_delta; do
  [ -d "$D/$t" ] && for pb in "$D/$t"/test_data_set_0/*.pb; do
    cp "$pb" "$C/tensor_read/${t}_$(basename "$pb")"
  done
done
/usr/bin/python3 fuzz/make_tiny_tensors.py "$C/tensor_read"

# db_open: an empty database and one with candidates, runs excluded (db import).
: > "$TMP/empty.jsonl"
"$CLI" db import --db "$TMP/empty.sqlite" "$TMP/empty.jsonl" >/dev/null
cat > "$TMP/c.jsonl" <<'JSONL'
{"id":1,"run_id":0,"key":"a1b2c3|profile-1|cpu%7CX%7Cavx2|0.1.0|precision=bf16","model_sha256":"a1b2c3","input_profile":"profile-1","target_fingerprint":"cpu|X|avx2","tool_version":"0.1.0","route":"precision=bf16","engine_sha256":"9f86d0","status":"passed","error":"","accuracy":{"logits":{"l2":1.2e-6,"threshold":0.001}},"measurement":{"p50_ms":1.5,"p95_ms":1.8,"p99_ms":1.95,"mean_ms":1.57,"throughput_per_s":666.7,"peak_memory_bytes":123456789,"n":40},"build_s":0.75,"accuracy_s":0.125,"measure_s":2.5,"created_at":1700000000}
{"id":2,"run_id":0,"key":"a1b2c3|profile-1|cpu%7CX%7Cavx2|0.1.0|","model_sha256":"a1b2c3","input_profile":"profile-1","target_fingerprint":"cpu|X|avx2","tool_version":"0.1.0","route":"","engine_sha256":"","status":"build_failed","error":"no kernel","accuracy":{},"measurement":{},"build_s":0.1,"accuracy_s":0,"measure_s":0,"created_at":1700000001}
JSONL
"$CLI" db import --db "$TMP/full.sqlite" "$TMP/c.jsonl" >/dev/null
for db in empty full; do
  if [ -f "$TMP/$db.sqlite" ]; then
    # Fold the WAL into the main file so that the seed is one self-contained file.
    sqlite3 "$TMP/$db.sqlite" "PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode=DELETE;" >/dev/null
    cp "$TMP/$db.sqlite" "$C/db_open/$db.sqlite"
  fi
done
du -sh "$C"/* "$C"
