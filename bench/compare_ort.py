#!/usr/bin/python3
"""Side-by-side latency of Switchyard engines and ONNX Runtime 1.30 CPU (npm
onnxruntime-node, all graph optimizations) on the same model, inputs and thread count,
interleaved round by round in one run (the order rotated each round). Prints a ratio table (ORT p50 / Switchyard p50)
and, with --markdown, appends it with the machine and the exact command to a file.

  bench/compare_ort.py MODEL[:INPUTS_DIR] ... [--route STR ...] [--threads N]
                       [--rounds R] [--iterations K] [--min-round-ms MS] [--markdown docs/benchmarks.md]
                       [--tune fp32,bf16 [--tune-budget 2m] [--tune-extra '...']]
                       [--ort node|python] [--switchyard PATH]
INPUTS_DIR defaults to MODEL without .onnx plus .inputs (as models/make_zoo.py writes).
A --route naming a knob that a model's route space lacks (fuse.conv_pool on a model without
SiLU) is skipped for that model, with a line saying so; the other routes and models go on.
--min-round-ms: each contender (ORT too) times at least K runs per round and, from a
3-run calibration before the rounds, enough runs that its round lasts MS milliseconds (0:
K runs). With K = 10 a 3 ms model's round lasted 30 ms, and bursts of a noisy machine moved
one contender's p50 by 20-28% (identical engines in one run: MobileNetV2 b1 4.20 against
3.39 ms, PP-OCRv4 rec 7.21 against 9.25; session 37).
--tune adds, per model and gate, the engine `switchyard tune` selects on INPUTS_DIR at that
accuracy gate (fp32: relative L2 <= 1e-4, bf16: <= 1e-2, or a number) as one more
contender in the same interleaved rounds; its row names the gate, the selected route (a
route with many precision@NODE overrides counted per knob and value), the plain
reduced-precision routes the gate rejected (with their error) and what the repair kept.
Besides ORT p50 / Switchyard p50 (each the median of the rounds' p50s) each row gives the
paired ratio: the median over rounds of ORT's p50 over the contender's in the same round,
which the machine's slow stretches move less (they fall on both sides of a round; on the
2-core Xeon of session 38 one run put identical engines at 1.29 and 1.17 of ORT).
--ort: which binding runs ONNX Runtime: node (bench/ort_bench.js, npm onnxruntime-node, the
default where third_party/node has it) or python (bench/ort_bench.py, the `onnxruntime`
wheel, for machines without Node); the table names the binding and its ORT version."""
import argparse
import glob
import shlex
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SY = os.path.join(ROOT, "build", "bin", "switchyard")


def machine():
    model = "unknown"
    flags = []
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name") and model == "unknown":
                model = line.split(":", 1)[1].strip()
            if line.startswith("flags") and not flags:
                flags = [x for x in line.split(":", 1)[1].split() if x.startswith(("avx", "amx", "fma"))]
    return f"{model}, {os.cpu_count()} logical CPUs, {platform.system()} {platform.release()}, flags: {' '.join(flags)}"


def run_json(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: {r.stderr.strip()}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def compact_route(route):
    """A route with many scoped overrides (the repair's precision@NODE=fp32) shortened to its
    plain settings plus one count per knob and value: 'precision=bf16 precision@<27 nodes>=fp32'."""
    plain, scoped = [], {}
    for tok in route.split():
        key, _, val = tok.partition("=")
        if "@" in key:
            scoped.setdefault((key.split("@", 1)[0], val), []).append(key.split("@", 1)[1])
        else:
            plain.append(tok)
    if sum(len(v) for v in scoped.values()) <= 3:
        return route
    return " ".join(plain + [f"{k}@<{len(n)} nodes>={v}" for (k, v), n in scoped.items()])


def tune_note(out_dir):
    """What the tuner's record says about the reduced-precision routes it rejected and about
    its mixed-precision repair, for the row's label ('' when there is nothing to say)."""
    try:
        with open(os.path.join(out_dir, "record.json")) as f:
            rec = json.load(f)
    except (OSError, ValueError):
        return ""
    notes = []
    for c in rec.get("candidates", []):
        route = c.get("route", "")
        if c.get("status") == "rejected_accuracy" and "precision=" in route and "@" not in route:
            err = c.get("error", "")
            notes.append(f"{route} rejected ({err.split(': ', 1)[-1].split(' > ')[0] if err else 'gate'})")
    rep = rec.get("repair") or {}
    if rep.get("result"):
        kept = rep.get("kept_fp32")
        kept_n = len(kept) if isinstance(kept, list) else kept
        if kept_n is not None:
            notes.append(f"repair: {kept_n} of {rep.get('nodes')} kept fp32, {rep.get('evaluations', '?')} accuracy builds")
        elif rep["result"].startswith("skipped"):
            notes.append(f"repair skipped: the rejected route ran {rep.get('unrepaired_speedup', 0):.2f}x the default")
        else:
            notes.append(f"repair: {rep['result']}, {rep.get('evaluations', '?')} accuracy builds")
    return "; ".join(notes)


def order_of(contenders):
    """The round's order before rotation: the Switchyard contenders, then ORT (None)."""
    return list(contenders) + [None]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("models", nargs="+")
    ap.add_argument("--route", action="append", default=None, help="routes to measure (default: the default route)")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--iterations", type=int, default=10)
    ap.add_argument("--min-round-ms", type=float, default=0.0,
                    help="raise each contender's runs per round so a round lasts this long (0: --iterations)")
    ap.add_argument("--markdown")
    ap.add_argument("--tune", default="", help="gates: fp32 (l2 1e-4), bf16 (l2 1e-2) or a threshold, comma-separated")
    ap.add_argument("--tune-budget", default="2m")
    ap.add_argument("--tune-extra", default="", help="more `switchyard tune` arguments")
    have_node = os.path.isdir(os.path.join(ROOT, "third_party", "node", "node_modules", "onnxruntime-node"))
    ap.add_argument("--ort", choices=["node", "python"], default="node" if have_node else "python")
    ap.add_argument("--switchyard", default=SY, help="the switchyard binary (default build/bin/switchyard)")
    a = ap.parse_args()
    sy_bin = a.switchyard
    if a.ort == "node":
        ort_cmd = ["node", os.path.join(ROOT, "bench", "ort_bench.js")]
        peer = "ONNX Runtime (npm onnxruntime-node)"
    else:
        ort_cmd = [sys.executable, os.path.join(ROOT, "bench", "ort_bench.py")]
        try:
            import onnxruntime
        except ImportError:
            sys.exit("compare_ort.py: --ort python needs the onnxruntime Python package, and --ort node "
                     "needs third_party/node/node_modules/onnxruntime-node (scripts/setup.sh installs it)")
        peer = f"ONNX Runtime {onnxruntime.__version__} (Python onnxruntime, CPUExecutionProvider)"
    routes = a.route or [""]
    if a.markdown:
        # The header first and each model's rows as soon as they are measured, so a run cut
        # short (a time limit, a model that fails) keeps the models it finished.
        with open(a.markdown, "a") as md:
            runs = f"{a.iterations}" + (f" or more (at least {a.min_round_ms:g} ms per round)" if a.min_round_ms > 0 else "")
            md.write(f"\n### {machine()}\n\nThreads: {a.threads} (both). Rounds: {a.rounds} x {runs} "
                     f"timed runs each, interleaved (order rotated each round); p50 = median of the rounds' p50.\n\n"
                     f"Peer: {peer}. Command: `bench/compare_ort.py {shlex.join(sys.argv[1:])}`\n\n"
                     "| model | route | Switchyard p50 (ms) | ORT p50 (ms) | ORT / Switchyard | paired | build (s) |\n"
                     "| --- | --- | --- | --- | --- | --- | --- |\n")
    with tempfile.TemporaryDirectory() as tmp:
        for spec in a.models:
            model, _, inputs = spec.partition(":")
            inputs = inputs or model[:-5] + ".inputs"
            in_args = []
            for f in sorted(glob.glob(os.path.join(inputs, "*.npy"))):
                in_args += ["--input", f"{os.path.basename(f)[:-4]}={f}"]
            shapes = []
            import numpy as np
            for f in sorted(glob.glob(os.path.join(inputs, "*.npy"))):
                shp = np.load(f, mmap_mode="r").shape
                shapes += ["--shapes", f"{os.path.basename(f)[:-4]}=" + "x".join(str(d) for d in shp)]
            engines = {}
            for i, r in enumerate(routes):
                path = os.path.join(tmp, f"e{i}.engine")
                # A route that sets its own threads (a tuned one) keeps them.
                threads_route = r if "threads=" in r else (r + f" threads={a.threads}").strip()
                try:
                    rep = run_json([sy_bin, "build", model, "--route", threads_route, *shapes, "-o", path, "--json"])
                except RuntimeError as e:
                    # A knob this model's route space lacks (fuse.conv_pool on a model without
                    # SiLU): that route has no row for this model; the others go on.
                    if "unknown knob" not in str(e):
                        raise
                    print(f"{os.path.basename(model)}: route '{r}' skipped: {str(e).split('error: ')[-1]}", flush=True)
                    continue
                engines[r] = (path, rep["build_seconds"])
            contenders = [r for r in routes if r in engines]
            for gate in filter(None, a.tune.split(",")):
                thr = {"fp32": "1e-4", "bf16": "1e-2"}.get(gate, gate)
                d = os.path.join(tmp, f"tune_{os.path.basename(model)}_{gate}")
                t = run_json([sy_bin, "tune", model, "--out", d, "--budget", a.tune_budget, "--metric", "l2",
                              "--threshold", thr, "--data", inputs, *shapes, "--json", *shlex.split(a.tune_extra)])
                route = (t.get("selected") or {}).get("route", "")
                note = tune_note(d)
                label = (f"tuned@{gate} ({t.get('candidates', '?')} candidates{'; ' + note if note else ''}): "
                         f"{compact_route(route) or '(default)'}")
                engine = os.path.join(d, "selected.engine")
                engines[label] = (engine if os.path.exists(engine) else os.path.join(d, "baseline.engine"), None)
                contenders.append(label)
                print(f"{os.path.basename(model)}: tune at l2 <= {thr} selected '{route}'", flush=True)
            sy = {r: [] for r in contenders}
            ort = []
            ort_run = lambda k: run_json([*ort_cmd, model, *in_args, "--threads", str(a.threads), "--warmup", "2",
                                          "--iterations", str(k)])
            sy_run = lambda r, k: run_json([sy_bin, "bench", engines[r][0], *in_args, "--warmup", "2",
                                            "--iterations", str(k), "--json"])
            iters = {r: a.iterations for r in order_of(contenders)}
            if a.min_round_ms > 0:
                for r in order_of(contenders):
                    p50 = (ort_run(3) if r is None else sy_run(r, 3))["p50_ms"]
                    iters[r] = max(a.iterations, int(-(-a.min_round_ms // max(p50, 1e-3))))
                print(f"{os.path.basename(model)}: runs per round " +
                      ", ".join(f"{'ORT' if r is None else (r or '(default)').split(' (')[0]} {k}"
                                for r, k in iters.items()),
                      flush=True)
            # Interleaved: every contender (and ORT) once per round, the order rotated by one
            # each round so that no contender always runs first or right after ORT (the first
            # process after another one's exit ran up to 50% slower at 16 threads, session 14).
            order = order_of(contenders)
            for i in range(a.rounds):
                for r in order[i % len(order):] + order[:i % len(order)]:
                    if r is None:
                        ort.append(ort_run(iters[r])["p50_ms"])
                    else:
                        sy[r].append(sy_run(r, iters[r])["p50_ms"])
            ort_p50 = statistics.median(ort)
            rows = []
            # A tuned engine's build happened inside `switchyard tune`: no build time of its own.
            build_s = lambda b: "-" if b is None else f"{b:.2f}"
            for r in contenders:
                p50 = statistics.median(sy[r])
                paired = statistics.median(o / s for o, s in zip(ort, sy[r]))
                rows.append((os.path.basename(model), r or "(default)", p50, ort_p50, ort_p50 / p50, paired, engines[r][1]))
                print(f"{os.path.basename(model):28s} {r or '(default)':30s} switchyard p50 {p50:8.2f} ms  "
                      f"ORT p50 {ort_p50:8.2f} ms  ratio {ort_p50 / p50:5.2f}  paired {paired:5.2f}  "
                      f"build {build_s(engines[r][1])} s")
            if a.markdown:
                with open(a.markdown, "a") as md:
                    for m, r, p, o, ratio, paired, b in rows:
                        md.write(f"| {m} | {r} | {p:.2f} | {o:.2f} | {ratio:.2f} | {paired:.2f} | {build_s(b)} |\n")


if __name__ == "__main__":
    main()
