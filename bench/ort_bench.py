#!/usr/bin/env python3
"""Times ONNX Runtime CPU from Python (the `onnxruntime` wheel) on a model, exactly as
bench/ort_bench.js does with npm onnxruntime-node: one session with all graph
optimizations, intra-op threads N, inter-op 1, sequential execution; warm-up, then timed
runs of session.run. Prints one JSON object: {"latencies_ms": [...], "p50_ms": ..., ...}.
For machines without Node (the GPU machine's 16-core host), the same ORT release.
  bench/ort_bench.py MODEL --input NAME=FILE.npy ... [--threads N] [--warmup N] [--iterations N]
                     [--profile]
--profile: then one more session with ORT's profiler on, the same runs, and the time per
operator type and the slowest nodes per run on stderr (bench/ort_profile.py's table; the
timed figures come from the session without the profiler)."""
import argparse
import json
import os
import sys
import tempfile
import time

import numpy as np
import onnxruntime as ort

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ort_profile  # noqa: E402


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
    ap.add_argument("--profile", action="store_true")
    a = ap.parse_args()
    feeds = {}
    for spec in a.input:
        name, _, path = spec.partition("=")
        feeds[name] = np.load(path)
    lat = timed_runs(a, feeds, profile=False)
    s = sorted(lat)
    if a.profile:
        timed_runs(a, feeds, profile=True)
    print(json.dumps({"latencies_ms": lat, "p50_ms": pct(s, 50), "p95_ms": pct(s, 95),
                      "mean_ms": sum(lat) / len(lat), "runs": len(lat), "threads": a.threads,
                      "ort_version": ort.__version__}))


def timed_runs(a, feeds, profile):
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.intra_op_num_threads = a.threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    if profile:
        so.enable_profiling = True
        so.profile_file_prefix = os.path.join(tempfile.mkdtemp(), "ort")
    sess = ort.InferenceSession(a.model, so, providers=["CPUExecutionProvider"])
    for _ in range(a.warmup):
        sess.run(None, feeds)
    lat = []
    for _ in range(a.iterations):
        t0 = time.perf_counter_ns()
        sess.run(None, feeds)
        lat.append((time.perf_counter_ns() - t0) / 1e6)
    if profile:
        # The warm-up runs are in the trace too.
        ort_profile.summarize(sess.end_profiling(), a.warmup + a.iterations, top=15, out=sys.stderr)
    return lat


if __name__ == "__main__":
    main()
