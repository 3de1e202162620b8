#!/usr/bin/python3
"""Sums an ONNX Runtime profile (bench/ort_bench.js --profile PREFIX writes PREFIX_<date>.json)
per operator type, per run, to set beside `switchyard bench ENGINE --profile`.

  bench/ort_profile.py TRACE.json [--runs N] [--top K]
N: the timed runs the trace covers (ort_bench.js --warmup W --iterations N profiles W + N
runs; pass W + N). Prints ms per run and share per op type, then the K slowest nodes."""
import argparse
import collections
import json


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("--runs", type=int, required=True)
    ap.add_argument("--top", type=int, default=10)
    a = ap.parse_args()
    events = json.load(open(a.trace))
    per_op, per_node = collections.Counter(), collections.Counter()
    for e in events:
        if e.get("cat") != "Node" or not e.get("name", "").endswith("_kernel_time"):
            continue
        op = e.get("args", {}).get("op_name", "?")
        per_op[op] += e["dur"]
        per_node[(e["name"][: -len("_kernel_time")], op)] += e["dur"]
    total = sum(per_op.values())
    print(f"ONNX Runtime profile: {a.runs} runs, sum of kernel times {total / 1e3 / a.runs:.3f} ms/run")
    print("    ms/run      %  op")
    for op, us in per_op.most_common():
        print(f"  {us / 1e3 / a.runs:8.3f} {100 * us / total:6.1f}  {op}")
    print("slowest nodes:")
    for (name, op), us in per_node.most_common(a.top):
        print(f"  {us / 1e3 / a.runs:8.3f}  {name} ({op})")


if __name__ == "__main__":
    main()
