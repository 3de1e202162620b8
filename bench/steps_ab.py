#!/usr/bin/python3
"""Per-step times of several routes of one model (or of two builds of Switchyard) side by side,
from `switchyard bench --profile` (each step's median over 10 runs), the contenders alternated
REPS times; prints each step's median (or minimum) over the repetitions per contender and every
run's median time.

  bench/steps_ab.py SWITCHYARD MODEL NAME=FILE[,NAME=FILE...] THREADS ROUTE... [--grep REGEX] [--reps N]
                    [--versus SWITCHYARD2] [--stat median|min]
ROUTE "" is the default route; THREADS is added to every route. --grep keeps the steps whose
name matches. --versus adds a second binary: every route runs on both, alternated (a change's
steps against the build before it). --stat min takes each step's minimum over the
repetitions instead of the median: on a noisy VM, where slow stretches only ever add time."""
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
    ap.add_argument("--versus", default="")
    ap.add_argument("--stat", choices=["median", "min"], default="median")
    a = ap.parse_args()
    bins = [a.switchyard] + ([a.versus] if a.versus else [])
    # Contenders: (binary, route), labelled by the route, and by the binary too with --versus.
    contenders = [(b, r) for r in a.routes for b in bins]
    label = lambda b, r: (f"{b}: " if a.versus else "") + (r or "(default)")
    stat = min if a.stat == "min" else statistics.median
    inputs = sum([["-i", x] for x in a.inputs.split(",") if x], [])
    steps = collections.defaultdict(lambda: collections.defaultdict(list))
    shapes, runs = {}, collections.defaultdict(list)
    for _ in range(a.reps):
        for b, r in contenders:
            route = (r + " " if r else "") + f"threads={a.threads}"
            p = subprocess.run([b, "bench", a.model, "--route", route, *inputs, "--iterations", "10",
                                "--profile", "--profile-steps", "100000"], capture_output=True, text=True)
            if p.returncode != 0:
                raise SystemExit(f"steps_ab.py: {b} bench failed for route '{route}': {p.stderr.strip()}")
            for line in p.stdout.splitlines():
                m = re.match(r"\s+([\d.]+)\s+(\S+) \((\w+)\) (\S+) -> (\S+)", line)
                if m:
                    steps[m.group(2)][(b, r)].append(float(m.group(1)))
                    shapes[m.group(2)] = f"{m.group(4)}->{m.group(5)}"
                m = re.match(r"median run ([\d.]+) ms", line)
                if m:
                    runs[(b, r)].append(float(m.group(1)))
    print("median run (ms) per repetition:", {label(*k): v for k, v in runs.items()})
    sums = collections.Counter()
    for name, per in steps.items():
        if a.grep and not re.search(a.grep, name):
            continue
        vals = [stat(per[k]) if per[k] else float("nan") for k in contenders]
        for k, v in zip(contenders, vals):
            sums[k] += v
        print(f"{name[-45:]:45s} {shapes[name][:40]:40s} " + " ".join(f"{v:7.3f}" for v in vals))
    print(f"sum of the steps shown ({a.stat} over repetitions):", {label(*k): round(sums[k], 3) for k in contenders})

if __name__ == "__main__":
    main()
