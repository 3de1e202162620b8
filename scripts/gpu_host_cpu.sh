#!/usr/bin/env bash
# CPU benchmarks on the GPU machine's host CPU (16 cores; docs/benchmarks.md, session 8),
# which has no Node and cannot install packages: builds the switchyard binary with
# scripts/gpu_session.sh (carry third_party/debs), generates b1 zoo models there with its
# torch (models/make_zoo.py) and times ONNX Runtime through its Python wheel.
#   scripts/gpu_host_cpu.sh compare "MODEL ..." [bench/compare_ort.py args...]
#   scripts/gpu_host_cpu.sh scaling MODEL ...   p50 at threads 1, 4, 16 (THREAD_LIST="..."
#                                               for others; Switchyard, ORT) and a
#                                               --profile at 1 and 16 threads into $OUT
#   scripts/gpu_host_cpu.sh profile MODEL ...   p50 and both profiles (Switchyard's
#                                               --profile, ORT's profiler by operator type)
#                                               at THREADS (16) into $OUT
# BATCH=8 takes the zoo's batch-8 models instead of batch 1 (not the restyled ones).
# ppocr_det, ppocr_rec, ppocr_cls (models/ppocr.py, which needs npm) cannot be made there:
# copy models/generated/ppocr_* into out/ppocr here and carry out/ppocr; they are taken
# from there.
set -uo pipefail
cd "$(dirname "$0")/.."
export SY_GPU_TARGETS=switchyard
[ -x build-gpu/bin/switchyard ] || { rm -rf /tmp/sy-deps; bash scripts/gpu_session.sh build 2>&1 | tail -3; }
export LD_LIBRARY_PATH=/tmp/sy-deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
M=models/generated
mkdir -p $M
B=${BATCH:-1}
SY=build-gpu/bin/switchyard
# NAME_paddle / NAME_tf: the zoo model NAME rewritten by models/restyle.py.
zoo() {
  local m
  for m in "$@"; do
    [ -f $M/${m}_b$B.onnx ] && continue
    case $m in
      ppocr_*) cp -r out/ppocr/${m}_b$B.* $M/ 2>/dev/null ||
                 echo "$m: not in out/ppocr (run models/ppocr.py and copy models/generated/ppocr_* there)" >&2 ;;
      *_paddle|*_tf) zoo "${m%_*}"
                     python3 models/restyle.py $M/${m%_*}_b1.onnx --style ${m##*_}2onnx > /dev/null ;;
      *) python3 models/make_zoo.py $m --batches $B > /dev/null 2>&1 ;;
    esac
  done
}
p50() { python3 -c 'import json,sys;print(json.loads(sys.stdin.read().splitlines()[-1])["p50_ms"])'; }
mode=${1:?compare, scaling or profile}; shift
case "$mode" in
  compare)
    models=$1; shift
    zoo $models
    files=(); for m in $models; do files+=($M/${m}_b$B.onnx); done
    PYTHONUNBUFFERED=1 python3 bench/compare_ort.py "${files[@]}" --switchyard $SY "$@" ;;
  scaling|profile)
    zoo "$@"
    for m in "$@"; do
      f=$M/${m}_b$B.onnx; d=$M/${m}_b$B.inputs; in=(); sh=()
      for x in $d/*.npy; do
        n=$(basename $x .npy); in+=(--input $n=$x)
        sh+=(--shapes $n=$(python3 -c "import numpy as np;print('x'.join(map(str,np.load('$x',mmap_mode='r').shape)))"))
      done
      [ "$mode" = scaling ] && list=${THREAD_LIST:-1 4 16} || list=${THREADS:-16}
      for t in $list; do
        $SY build $f --route "threads=$t" "${sh[@]}" -o /tmp/e$t.engine > /dev/null || { echo "$m: build at threads=$t failed"; continue; }
        echo "$m threads=$t switchyard $($SY bench /tmp/e$t.engine "${in[@]}" --warmup 2 --iterations 8 --json | p50) ms," \
             "ORT $(python3 bench/ort_bench.py $f "${in[@]}" --threads $t --warmup 2 --iterations 8 | p50) ms"
        if [ "$mode" = profile ] || [ "$t" = 1 ] || [ "$t" = 16 ]; then
          $SY bench /tmp/e$t.engine "${in[@]}" --warmup 2 --iterations 5 --profile --profile-steps 40 > ${OUT:-/tmp}/prof_${m}_t$t.txt 2>&1
        fi
        if [ "$mode" = profile ]; then
          python3 bench/ort_bench.py $f "${in[@]}" --threads $t --warmup 2 --iterations 5 --profile 2> ${OUT:-/tmp}/ortprof_${m}_t$t.txt > /dev/null
        fi
      done
    done ;;
  *) echo "unknown mode '$mode' (compare, scaling or profile)" >&2; exit 2 ;;
esac
