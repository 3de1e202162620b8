#!/usr/bin/python3
"""Search efficiency of the tuner's strategies against `full` (issue 6, item 4).

For one model and one --sweep, runs `switchyard tune --search S` for `full` and each other
strategy (fresh output folder and database each, so nothing is reused), then reports for
each strategy the search time until it first evaluated a route that is within TOL (2%) of
the exhaustive best, and that time as a share of full's whole search time.

"Within 2% of the best" is judged with full's own measurements: route R counts when
full_speedup(R) >= (1 - TOL) * max full_speedup, so measurement noise between the runs does
not decide it. Time = wall seconds from the run's start to the moment that candidate was
stored (the tuning database's `runs.started_at` and `candidates.created_at`, 1 s
resolution), so worker start-up and engine loads count; the search ends with its last
stored candidate (the long-tail validation of the winner, the same for all, is left out).
The sum of the candidates' own build, accuracy and measurement seconds is shown beside it.

  bench/search_efficiency.py MODEL --data DIR --sweep EXPR [--strategies mixed,halving,greedy]
                             [--threshold 1e-2] [--out DIR] [--markdown FILE] [--reuse]
"""
import argparse
import json
import os
import platform
import shlex
import sqlite3
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SY = os.path.join(ROOT, "build", "bin", "switchyard")


def tune(model, data, sweep, strategy, threshold, out, extra, reuse):
    d = os.path.join(out, strategy)
    cmd = [SY, "tune", model, "--data", data, "--sweep", sweep, "--search", strategy, "--out", d,
           "--metric", "l2", "--threshold", threshold, "--json"] + extra
    if reuse and os.path.exists(os.path.join(d, "record.json")):
        with open(os.path.join(d, "record.json")) as f:
            return cmd, json.load(f)
    subprocess.run(["rm", "-rf", d], check=True)
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(shlex.quote(c) for c in cmd)}: rc {r.returncode}: {r.stderr[-800:]}")
    with open(os.path.join(d, "record.json")) as f:
        return cmd, json.load(f)


def timeline(rec, db_path):
    """[(wall seconds since the run started, route, speedup or None, cumulative candidate
    seconds)] in evaluation order."""
    db = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    started = db.execute("select min(started_at) from runs").fetchone()[0]
    stored = dict(db.execute("select route, created_at from candidates"))
    db.close()
    cum, rows = 0.0, []
    for c in rec["candidates"]:
        cum += c.get("build_s", 0) + c.get("accuracy_s", 0) + c.get("measure_s", 0)
        speed = c.get("speedup") if c.get("status") == "passed" else None
        if c.get("baseline"):
            speed = 1.0 if c.get("status") == "passed" else None
        rows.append((stored.get(c["route"], started) - started, c["route"], speed, cum))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model")
    ap.add_argument("--data", required=True)
    ap.add_argument("--sweep", required=True)
    ap.add_argument("--strategies", default="mixed,halving,greedy")
    ap.add_argument("--threshold", default="1e-2", help="accuracy gate (l2)")
    ap.add_argument("--tol", type=float, default=0.02)
    ap.add_argument("--out", default="out/search-efficiency")
    ap.add_argument("--markdown", help="append the table here")
    ap.add_argument("--extra", default="", help="more tune flags, e.g. '--min-rounds 4'")
    ap.add_argument("--reuse", action="store_true", help="re-analyse finished runs in --out instead of tuning again")
    a = ap.parse_args()
    extra = shlex.split(a.extra)
    out = os.path.join(a.out, os.path.basename(a.model)[:-5])
    os.makedirs(out, exist_ok=True)
    runs = {}
    for s in ["full"] + [x for x in a.strategies.split(",") if x and x != "full"]:
        cmd, rec = tune(a.model, a.data, a.sweep, s, a.threshold, out, extra, a.reuse)
        runs[s] = {"cmd": cmd, "rec": rec, "rows": timeline(rec, os.path.join(out, s, "tuning.db"))}
        print(f"{s}: {len(rec['candidates'])} candidates, selected {rec['selected'] and rec['selected']['route']!r}",
              file=sys.stderr, flush=True)
    full_speed = {route: sp for _, route, sp, _ in runs["full"]["rows"] if sp is not None}
    best_route = max(full_speed, key=full_speed.get)
    bar = (1 - a.tol) * full_speed[best_route]
    full_total = max(t for t, _, _, _ in runs["full"]["rows"])
    lines = [f"Model `{os.path.basename(a.model)}`, sweep `{a.sweep}` "
             f"({runs['full']['rec']['search']['space_size']} routes), gate l2 <= {a.threshold}; "
             f"full's best `{best_route or '(default)'}` at {full_speed[best_route]:.3f}x over the default route; "
             f"a strategy reaches it when it evaluates a route within {a.tol:.0%} of that (by full's measurement).",
             "", "| strategy | candidates | search wall s (candidate s) | reached after wall s (candidate s) | "
             "share of full's wall | route found | its speedup in full |",
             "| --- | ---: | ---: | ---: | ---: | --- | ---: |"]
    summary = {}
    for s, r in runs.items():
        reached = next(((t, route, cum) for t, route, sp, cum in r["rows"]
                        if sp is not None and full_speed.get(route, 0) >= bar), None)
        total = max(t for t, _, _, _ in r["rows"])
        total_cum = r["rows"][-1][3]
        share = reached[0] / full_total if reached and full_total else None
        summary[s] = {"candidates": len(r["rows"]), "search_wall_s": total, "candidate_s": total_cum,
                      "reached_wall_s": reached and reached[0], "reached_candidate_s": reached and reached[2],
                      "share_of_full": share, "route": reached and reached[1]}
        lines.append(f"| {s} | {len(r['rows'])} | {total} ({total_cum:.0f}) | {reached[0]} ({reached[2]:.0f}) | "
                     f"{share:.0%} | `{reached[1] or '(default)'}` | {full_speed[reached[1]]:.3f}x |" if reached else
                     f"| {s} | {len(r['rows'])} | {total} ({total_cum:.0f}) | not reached | — | — | — |")
    table = "\n".join(lines) + "\n"
    print(table)
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump({"model": a.model, "sweep": a.sweep, "best": best_route, "runs": summary,
                   "commands": {s: r["cmd"] for s, r in runs.items()}}, f, indent=1)
    if a.markdown:
        with open(a.markdown, "a") as f:
            f.write(f"\nMachine: {platform.processor() or platform.machine()}, {os.cpu_count()} logical CPUs. "
                    f"Command: `bench/search_efficiency.py {' '.join(shlex.quote(x) for x in sys.argv[1:])}`\n\n"
                    + table)


if __name__ == "__main__":
    main()
