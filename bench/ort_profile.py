#!/usr/bin/python3
"""Sums an ONNX Runtime profile (bench/ort_bench.js --profile PREFIX writes PREFIX_<date>.json)
per operator type, per run, to set beside `switchyard bench ENGINE --profile`.

  bench/ort_profile.py TRACE.json [--runs N] [--top K]
N: the timed runs the trace covers (ort_bench.js --warmup W --iterations N profiles W + N
runs; pass W + N). bench/ort_bench.py --profile calls summarize() itself. Prints ms per run and share per op type, then the K slowest nodes."""
import argparse
import collections
import json
import sys


def summarize(trace, runs, top=10, out=sys.stdout):
    """Prints the per-op-type and slowest-node table of one trace file to `out`."""
    events = json.load(open(trace))
    per_op, per_node = collections.Counter(), collections.Counter()
    for e in events:
        if e.get("cat") != "Node" or not e.get("name", "").endswith("_kernel_time"):
            continue
        op = e.get("args", {}).get("op_name", "?")
        per_op[op] += e["dur"]
        per_node[(e["name"][: -len("_kernel_time")], op)] += e["dur"]
    total = sum(per_op.values())
    print(f"ONNX Runtime profile: {runs} runs, sum of kernel times {total / 1e3 / runs:.3f} ms/run", file=out)
    print("    ms/run      %  op", file=out)
    for op, us in per_op.most_common():
        print(f"  {us / 1e3 / runs:8.3f} {100 * us / max(total, 1):6.1f}  {op}", file=out)
    print("slowest nodes:", file=out)
    for (name, op), us in per_node.most_common(top):
        print(f"  {us / 1e3 / runs:8.3f}  {name} ({op})", file=out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("--runs", type=int, required=True)
    ap.add_argument("--top", type=int, default=10)
    a = ap.parse_args()
    summarize(a.trace, a.runs, a.top)


if __name__ == "__main__":
    main()
