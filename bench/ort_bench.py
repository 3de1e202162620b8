#!/usr/bin/env python3
"""Times ONNX Runtime CPU from Python (the `onnxruntime` wheel) on a model, exactly as
bench/ort_bench.js does with npm onnxruntime-node: one session with all graph
optimizations, intra-op threads N, inter-op 1, sequential execution; warm-up, then timed
runs of session.run. Prints one JSON object: {"latencies_ms": [...], "p50_ms": ..., ...}.
For machines without Node (the GPU machine's 16-core host), the same ORT release.
  bench/ort_bench.py MODEL --input NAME=FILE.npy ... [--threads N] [--warmup N] [--iterations N]"""
import argparse
import json
import time

import numpy as np
import onnxruntime as ort


def pct(s, p):
    r = p / 100 * (len(s) - 1)
    lo = int(r)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (r - lo)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--input", action="append", default=[])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--iterations", type=int, default=20)
    a = ap.parse_args()
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.intra_op_num_threads = a.threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    sess = ort.InferenceSession(a.model, so, providers=["CPUExecutionProvider"])
    feeds = {}
    for spec in a.input:
        name, _, path = spec.partition("=")
        feeds[name] = np.load(path)
    for _ in range(a.warmup):
        sess.run(None, feeds)
    lat = []
    for _ in range(a.iterations):
        t0 = time.perf_counter_ns()
        sess.run(None, feeds)
        lat.append((time.perf_counter_ns() - t0) / 1e6)
    s = sorted(lat)
    print(json.dumps({"latencies_ms": lat, "p50_ms": pct(s, 50), "p95_ms": pct(s, 95),
                      "mean_ms": sum(lat) / len(lat), "runs": len(lat), "threads": a.threads,
                      "ort_version": ort.__version__}))


if __name__ == "__main__":
    main()
