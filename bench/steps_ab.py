#!/usr/bin/python3
"""Per-step times of several routes of one model side by side, from `switchyard bench --profile`
(each step's median over 10 runs), the routes alternated REPS times; prints each step's median
over the repetitions per route and every run's median time.

  bench/steps_ab.py SWITCHYARD MODEL NAME=FILE[,NAME=FILE...] THREADS ROUTE... [--grep REGEX] [--reps N]
ROUTE "" is the default route; THREADS is added to every route. --grep keeps the steps whose
name matches."""
import argparse
import collections
import re
import statistics
import subprocess


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("switchyard")
    ap.add_argument("model")
    ap.add_argument("inputs", help="NAME=FILE[,NAME=FILE...]")
    ap.add_argument("threads", type=int)
    ap.add_argument("routes", nargs="+")
    ap.add_argument("--grep", default="")
    ap.add_argument("--reps", type=int, default=1)
    a = ap.parse_args()
    inputs = sum([["-i", x] for x in a.inputs.split(",") if x], [])
    steps = collections.defaultdict(lambda: collections.defaultdict(list))
    shapes, runs = {}, collections.defaultdict(list)
    for _ in range(a.reps):
        for r in a.routes:
            route = (r + " " if r else "") + f"threads={a.threads}"
            p = subprocess.run([a.switchyard, "bench", a.model, "--route", route, *inputs, "--iterations", "10",
                                "--profile", "--profile-steps", "100000"], capture_output=True, text=True)
            if p.returncode != 0:
                raise SystemExit(f"steps_ab.py: switchyard bench failed for route '{route}': {p.stderr.strip()}")
            for line in p.stdout.splitlines():
                m = re.match(r"\s+([\d.]+)\s+(\S+) \((\w+)\) (\S+) -> (\S+)", line)
                if m:
                    steps[m.group(2)][r].append(float(m.group(1)))
                    shapes[m.group(2)] = f"{m.group(4)}->{m.group(5)}"
                m = re.match(r"median run ([\d.]+) ms", line)
                if m:
                    runs[r].append(float(m.group(1)))
    print("median run (ms) per repetition:", {r or "(default)": v for r, v in runs.items()})
    sums = collections.Counter()
    for name, per_route in steps.items():
        if a.grep and not re.search(a.grep, name):
            continue
        vals = [statistics.median(per_route[r]) if per_route[r] else float("nan") for r in a.routes]
        for r, v in zip(a.routes, vals):
            sums[r] += v
        print(f"{name[-45:]:45s} {shapes[name][:40]:40s} " + " ".join(f"{v:7.3f}" for v in vals))
    print("sum of the steps shown:", {r or "(default)": round(sums[r], 2) for r in a.routes})


if __name__ == "__main__":
    main()
