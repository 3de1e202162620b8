#!/usr/bin/env python3
"""GPU latency of Switchyard engines against PyTorch (eager, autocast fp16, torch.compile)
on the same models and batches, with a roofline floor per case. See bench/gpu/README.md.

  python3 bench/gpu/run.py --models resnet50,bert_base --batches 1,32 \
      --modes eager,eager_fp16,compile,compile_ro,compile_ro_fp16 \
      --switchyard build/bin/switchyard --out out/gpu --copy-to $OUT --time-limit 480

Resumable: OUT/results.json is rewritten after every measurement; a rerun with the same
--out skips what is already there (status ok; also error/timeout unless --retry).
"""
import argparse
import gc
import json
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import models  # noqa: E402

import torch  # noqa: E402

T0 = time.time()
COMPILE = {"compile": None, "compile_ro": "reduce-overhead", "max_autotune": "max-autotune"}
ORDER = [b + h for b in ["eager"] + list(COMPILE) for h in ("", "_fp16")]


def log(*a):
    print(f"[{time.time() - T0:6.1f}s]", *a, flush=True)


class Timeout(BaseException):  # BaseException: torch's own `except Exception` must not swallow it
    pass


def _alarm(sig, frame):
    raise Timeout()


class Runner:
    def __init__(self, a):
        self.a = a
        self.deadline = T0 + a.time_limit
        self.dev = torch.device(a.device)
        self.cuda = self.dev.type == "cuda"
        self.path = os.path.join(a.out, "results.json")
        self.res = {"cases": {}}
        if os.path.exists(self.path):
            with open(self.path) as f:
                self.res = json.load(f)
        signal.signal(signal.SIGALRM, _alarm)

    # ---- bookkeeping ----
    def left(self):
        return self.deadline - time.time()

    def save(self):
        os.makedirs(self.a.out, exist_ok=True)
        tmp = self.path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(self.res, f, indent=1, default=str)
        os.replace(tmp, self.path)
        md = markdown(self.res)
        with open(os.path.join(self.a.out, "benchmarks-gpu.md"), "w") as f:
            f.write(md)
        if self.a.copy_to:
            os.makedirs(self.a.copy_to, exist_ok=True)
            for n in ("results.json", "benchmarks-gpu.md"):
                shutil.copy(os.path.join(self.a.out, n), os.path.join(self.a.copy_to, n))

    def pending(self, rec):
        if rec is None or rec.get("status") in (None, "skipped"):
            return True
        return self.a.retry and rec.get("status") in ("error", "timeout")

    def guarded(self, store, key, fn, limit, need=10.0):
        """Runs fn() -> dict under min(limit, time left) seconds; any failure becomes a
        record in store[key]. Never raises (but Ctrl-C)."""
        if not self.pending(store.get(key)):
            return store[key]
        left = self.left()
        if left < need:
            store[key] = {"status": "skipped", "reason": f"global time limit ({left:.0f}s left)"}
            log(f"  {key}: skipped (time)")
            self.save()
            return store[key]
        t = max(1.0, min(limit, left - 2))
        t0 = time.time()
        signal.setitimer(signal.ITIMER_REAL, t)
        try:
            rec = dict(fn(), status="ok")
        except (Timeout, subprocess.TimeoutExpired):
            # cut by the global limit: "skipped" (the next run redoes it); by its own limit: "timeout"
            cut = time.time() >= self.deadline - 5
            rec = {"status": "skipped" if cut else "timeout",
                   "reason": f"global time limit after {time.time() - t0:.0f}s" if cut else f"over {t:.0f}s"}
        except KeyboardInterrupt:
            raise
        except BaseException as e:  # one failing mode never stops the rest
            rec = {"status": "error", "reason": f"{type(e).__name__}: {str(e)[:600]}"}
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        rec["wall_s"] = round(time.time() - t0, 2)
        store[key] = rec
        log(f"  {key}: " + (f"p50 {rec['p50_ms']:.3f} ms" if rec.get("p50_ms") is not None else rec["status"])
            + (f", host p50 {rec['host_p50_ms']:.3f} ms" if rec.get("host_p50_ms") is not None else "")
            + (f" ({rec['reason'][:200]})" if "reason" in rec else ""))
        self.save()
        return rec

    # ---- timing ----
    def sync(self):
        if self.cuda:
            torch.cuda.synchronize()

    def time_calls(self, call):
        """Per-call latency: each call starts on an idle GPU and is synchronised, so launch
        overhead counts (as in Switchyard's bench). CUDA events on the device, wall clock on CPU."""
        a, ms = self.a, []
        if self.cuda:
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        t_end = time.perf_counter() + a.min_seconds
        while len(ms) < a.min_runs or (time.perf_counter() < t_end and len(ms) < a.max_runs):
            if self.cuda:
                s.record()
                call()
                e.record()
                e.synchronize()
                ms.append(s.elapsed_time(e))
            else:
                t = time.perf_counter()
                call()
                ms.append((time.perf_counter() - t) * 1e3)
        ms.sort()
        return {"p50_ms": statistics.median(ms), "p90_ms": ms[min(len(ms) - 1, int(0.9 * len(ms)))],
                "min_ms": ms[0], "runs": len(ms)}

    # ---- environment and device rates ----
    def env(self):
        e = {"python": platform.python_version(), "torch": torch.__version__, "cuda": torch.version.cuda,
             "cudnn": torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None,
             "host": platform.node(), "cpu_count": os.cpu_count(), "device": str(self.dev),
             "tf32": self.a.tf32, "cudnn_benchmark": True, "argv": sys.argv}
        for mod in ("torchvision", "transformers", "onnx", "onnxruntime"):
            try:
                e[mod] = __import__(mod).__version__
            except Exception as ex:
                e[mod] = f"unavailable: {type(ex).__name__}"
        if self.cuda:
            e["gpu"] = torch.cuda.get_device_name()
            try:
                e["nvidia_smi"] = subprocess.run(
                    ["nvidia-smi", "--query-gpu=name,driver_version,memory.total,clocks.max.sm,power.limit",
                     "--format=csv,noheader"], capture_output=True, text=True, timeout=20).stdout.strip()
            except Exception as ex:
                e["nvidia_smi"] = f"unavailable: {ex}"
        return e

    def rates(self):
        """Dense matmul rate (TFLOP/s) per precision and copy bandwidths (GB/s), best of a few."""
        n = 8192 if self.cuda else 1024
        r = {"matmul_n": n}

        def best(fn, reps):
            fn()
            self.sync()
            ts = []
            for _ in range(reps):
                t = time.perf_counter()
                fn()
                self.sync()
                ts.append(time.perf_counter() - t)
            return min(ts)

        old = torch.get_float32_matmul_precision()
        for label, dt, tf32 in (("fp16", torch.float16, False), ("bf16", torch.bfloat16, False),
                                ("fp32", torch.float32, False), ("tf32", torch.float32, True)):
            if not self.cuda and label in ("fp16", "tf32"):
                continue
            torch.set_float32_matmul_precision("high" if tf32 else "highest")
            x = torch.randn(n, n, device=self.dev, dtype=dt)
            y = torch.randn(n, n, device=self.dev, dtype=dt)
            r[f"matmul_{label}_tflops"] = 2 * n ** 3 / best(lambda: torch.matmul(x, y), 10) / 1e12
            x = y = None
        torch.set_float32_matmul_precision(old)
        nb = (1 << 30) if self.cuda else (1 << 26)
        src = torch.empty(nb, dtype=torch.uint8, device=self.dev)
        dst = torch.empty_like(src)
        r["copy_gbps"] = 2 * nb / best(lambda: dst.copy_(src), 20) / 1e9  # read + write
        src = dst = None
        if self.cuda:
            nb = 1 << 28
            h = torch.empty(nb, dtype=torch.uint8, pin_memory=True)
            d = torch.empty(nb, dtype=torch.uint8, device=self.dev)
            r["h2d_gbps"] = nb / best(lambda: d.copy_(h, non_blocking=True), 10) / 1e9
            r["d2h_gbps"] = nb / best(lambda: h.copy_(d, non_blocking=True), 10) / 1e9
            h = d = None
            torch.cuda.empty_cache()
        return r

    # ---- one case ----
    def case(self, name, batch):
        key = f"{name}_b{batch}"
        c = self.res["cases"].setdefault(key, {"model": name, "batch": batch})
        c.setdefault("modes", {})
        c.setdefault("switchyard", {})
        modes = [m for m in self.a.modes if self.pending(c["modes"].get(m))]
        sy_jobs = self.sy_jobs()
        sy_todo = [k for k in sy_jobs if self.pending(c["switchyard"].get(k))]
        needs_flops = self.pending(c.get("roofline"))
        if not (modes or sy_todo or needs_flops):
            log(f"{key}: done already")
            return
        log(f"{key}: modes {modes}, switchyard {sy_todo}")
        st = {}
        if sy_todo:
            if not os.path.exists((c.get("onnx") or {}).get("path", "")):
                c.pop("onnx", None)  # a fresh machine: export again
            self.guarded(c, "onnx", lambda: models.export(name, batch, self.a.onnx_dir), self.a.mode_limit)
        ok = True
        if modes or needs_flops:
            def setup():
                m, xs = models.build(name, batch)
                st["m"], st["xs"] = m.to(self.dev), [x.to(self.dev) for x in xs]
                with torch.inference_mode():
                    st["ref"] = st["m"](*st["xs"]).float()  # eager fp32 output: accuracy check of every mode
                return {"attn_implementation": models.attn_impl(m), "input_shape": list(xs[0].shape),
                        "input_dtype": str(xs[0].dtype)}
            c.pop("setup", None)  # rebuilt each run
            setup_rec = self.guarded(c, "setup", setup, self.a.mode_limit)
            ok = setup_rec["status"] == "ok"
            if ok and needs_flops:
                self.guarded(c, "roofline", lambda: self.roofline(st["m"], st["xs"], c), self.a.mode_limit)
        # Order: eager modes, Switchyard benches, compile modes, tunes: the cheap and central
        # numbers first, so a global time limit cuts the expensive ones.
        sy_ok = "onnx" in c and c["onnx"].get("status") == "ok"
        steps = [("t", m) for m in modes if m.startswith("eager")] + \
                [("s", k) for k in sy_todo if not k.startswith("tune_")] + \
                [("t", m) for m in modes if not m.startswith("eager")] + \
                [("s", k) for k in sy_todo if k.startswith("tune_")]
        for kind, k in steps:
            if kind == "t" and not ok:
                c["modes"][k] = {"status": "skipped" if setup_rec["status"] == "skipped" else "error",
                                 "reason": "model setup: " + setup_rec.get("reason", "")}
            elif kind == "t":
                self.guarded(c["modes"], k, lambda: self.torch_mode(st, k), self.a.mode_limit,
                             need=5 if k.startswith("eager") else 30)
                self.cleanup()
            elif sy_ok:
                self.cleanup()
                limit = self.tune_budget_s() + 200 if k.startswith("tune_") else self.a.mode_limit + 60
                need = self.tune_budget_s() + 60 if k.startswith("tune_") else 15
                self.guarded(c["switchyard"], k, lambda: sy_jobs[k](c), limit, need=need)
            else:
                o = c.get("onnx", {})
                c["switchyard"][k] = {"status": "skipped" if o.get("status") == "skipped" else "error",
                                      "reason": "no ONNX file: " + o.get("reason", "")}
        st.clear()
        self.cleanup()
        self.save()

    def cleanup(self):
        try:
            torch._dynamo.reset()
        except Exception:
            pass
        gc.collect()
        if self.cuda:
            torch.cuda.empty_cache()

    def roofline(self, m, xs, c):
        """FLOPs of one forward (FlopCounterMode) and a byte lower bound: every parameter and
        buffer read once (embedding tables: only the rows gathered), inputs read once,
        output written once. floor = max(FLOPs / matmul rate, bytes / copy bandwidth)."""
        from torch.utils.flop_counter import FlopCounterMode
        rows = {}
        hooks = [mod.register_forward_hook(lambda mod, i, o: rows.__setitem__(mod, int(i[0].unique().numel())))
                 for mod in m.modules() if isinstance(mod, torch.nn.Embedding)]
        fc = FlopCounterMode(display=False)
        try:
            with fc:  # not under no_grad: keeps nn.MultiheadAttention off its fused path, which the counter misses
                out = m(*xs)
        finally:
            for h in hooks:
                h.remove()
        flops = int(fc.get_total_flops())
        n_param = 0
        for mod in m.modules():
            for p in list(mod.parameters(recurse=False)) + list(mod.buffers(recurse=False)):
                if p.is_floating_point():
                    n = p.numel()
                    if mod in rows and p is getattr(mod, "weight", None):
                        n = rows[mod] * p.shape[1]
                    n_param += n
        io = sum(x.numel() * x.element_size() for x in xs) + out.numel() * 4
        in_b = sum(x.numel() * x.element_size() for x in xs)
        r = self.res["rates"]
        rec = {"flops": flops, "param_elems_read": n_param, "io_bytes": io, "floor_ms": {}, "host_floor_ms": {}}
        for prec, psize in (("fp32", 4), ("tf32", 4), ("fp16", 2)):
            rate = r.get(f"matmul_{prec}_tflops")
            if not rate:
                continue
            byts = n_param * psize + io
            fl = max(flops / (rate * 1e12), byts / (r["copy_gbps"] * 1e9)) * 1e3
            rec["floor_ms"][prec] = fl
            if "h2d_gbps" in r:
                rec["host_floor_ms"][prec] = fl + (in_b / r["h2d_gbps"] + out.numel() * 4 / r["d2h_gbps"]) / 1e6
        return rec

    def torch_mode(self, st, mode):
        base, half = (mode[:-5], True) if mode.endswith("_fp16") else (mode, False)
        if base != "eager" and base not in COMPILE:
            raise ValueError(f"unknown mode {mode}")
        m, xs = st["m"], st["xs"]
        f = m if base == "eager" else torch.compile(m, mode=COMPILE[base], dynamic=False)
        mark = getattr(getattr(torch, "compiler", None), "cudagraph_mark_step_begin", None)
        mark = mark if base in ("compile_ro", "max_autotune") and self.cuda else None
        ac = dict(device_type=self.dev.type, dtype=torch.float16 if self.cuda else torch.bfloat16, enabled=half)

        def fwd(*inp):
            if mark:
                mark()
            with torch.inference_mode(), torch.autocast(**ac):
                return f(*inp)

        rec = {}
        t = time.perf_counter()
        y = fwd(*xs)
        self.sync()
        rec["first_call_s"] = round(time.perf_counter() - t, 3)  # compile time for the compile modes
        ref = st["ref"]
        rec["rel_l2_vs_eager"] = float((y.float() - ref).norm() / ref.norm().clamp_min(1e-30))
        del y
        for _ in range(self.a.warmup):
            fwd(*xs)
        self.sync()
        rec.update(self.time_calls(lambda: fwd(*xs)))
        if self.a.no_host:
            return rec
        # host round trip: pinned host input -> device, forward, output -> pinned host
        hx = [x.cpu().pin_memory() if self.cuda else x.clone() for x in xs]
        out = {}

        def rt():
            y = fwd(*[h.to(self.dev, non_blocking=True) for h in hx])
            if "h" not in out:
                out["h"] = torch.empty(y.shape, dtype=y.dtype, pin_memory=self.cuda)
            out["h"].copy_(y, non_blocking=True)

        for _ in range(3):
            rt()
        self.sync()
        h = self.time_calls(rt)
        rec.update({"host_" + k: v for k, v in h.items()})
        return rec

    # ---- Switchyard ----
    def sy_jobs(self):
        a = self.a
        if not a.switchyard:
            return {}
        jobs = {"default": lambda c, r="": self.sy_bench(c, route=r)}
        for item in filter(None, (s.strip() for s in a.routes.split(";"))):
            label, _, route = item.partition("=")
            jobs[label] = lambda c, r=route, l=label: self.sy_bench(c, route=r, label=l)
        for gate in filter(None, a.tune.split(",")):
            jobs["tune_" + gate] = lambda c, g=gate: self.sy_tune(c, g)
        return jobs

    def sy_run(self, args, timeout):
        t = time.time()
        p = subprocess.run([self.a.switchyard] + args, capture_output=True, text=True,
                           timeout=max(1.0, min(timeout, self.left() - 2)))
        lines = p.stdout.strip().splitlines()
        rec = {"cmd": " ".join([self.a.switchyard] + args), "rc": p.returncode, "seconds": round(time.time() - t, 2)}
        try:
            rec["raw"] = json.loads(lines[-1])
        except Exception:
            rec["stdout_tail"] = p.stdout[-1500:]
        if p.returncode != 0:
            raise RuntimeError(f"rc {p.returncode}: {p.stderr.strip()[-600:]}")
        return rec

    def sy_bench(self, c, route=None, engine=None, label="default"):
        """Builds the engine once (unless given), then `switchyard bench --io P` for each placement:
        pinned (p50_ms: the host round trip, pinned buffers as torch's), device (device_p50_ms:
        inputs already on the GPU, output left there) and host (run_p50_ms: Session::Run on the
        caller's tensors, one more host copy each way)."""
        a, onnx = self.a, c["onnx"]["path"]
        inp = f"input={onnx[:-5]}.inputs/input.npy"
        rec = {"route": route}
        if not engine:
            shape = "x".join(str(d) for d in c["setup"]["input_shape"]) if "input_shape" in c.get("setup", {}) \
                else ("%dx3x224x224" if c["model"] in ("resnet50", "vit_b16") else "%dx128") % c["batch"]
            engine = os.path.join(a.out, "engines", f"{c['model']}_b{c['batch']}_{label}.engine")
            os.makedirs(os.path.dirname(engine), exist_ok=True)
            args = ["build", onnx, "--shapes", "input=" + shape, "-o", engine, "--json"]
            args += (["--target", a.sy_target] if a.sy_target else []) + (["--route", route] if route else [])
            t = time.time()
            rec["build"] = self.sy_run(args, a.mode_limit + 30)
            rec["build_seconds"] = round(time.time() - t, 2)
        common = ["--input", inp, "--iterations", str(a.sy_iterations), "--warmup", str(a.sy_warmup), "--json"]
        for io, key in (("pinned", "p50_ms"), ("device", "device_p50_ms"), ("host", "run_p50_ms")):
            if io != "host" and not a.sy_target:
                continue
            r = self.sy_run(["bench", engine, "--io", io] + common, a.mode_limit + 30)
            rec["bench_" + io] = r
            raw = r.get("raw") or {}
            rec[key] = raw.get("p50_ms")
            if io == "pinned" or not a.sy_target:
                for k in ("p95_ms", "p99_ms", "min_ms"):
                    rec[k] = raw.get(k)
        if not a.sy_target:
            rec["p50_ms"] = rec.get("run_p50_ms")
        if a.profile and c["batch"] > 1 and label in a.profile.split(","):
            r = subprocess.run([a.switchyard, "bench", engine, "--input", inp, "--iterations", "20", "--warmup", "5",
                                "--profile", "--profile-steps", "25"], capture_output=True, text=True,
                               timeout=max(1.0, min(a.mode_limit, self.left() - 2)))
            rec["profile"] = r.stdout[-6000:]
            log(r.stdout[-3000:])
        return rec

    def tune_budget_s(self):
        b = self.a.tune_budget
        return float(b.rstrip("sm")) * (60 if b.endswith("m") else 1)

    def sy_tune(self, c, gate):
        a, onnx = self.a, c["onnx"]["path"]
        thr = {"fp32": "1e-4", "fp16": "1e-2"}.get(gate, gate)
        d = os.path.join(a.out, "tune", f"{c['model']}_b{c['batch']}_{gate}")
        args = ["tune", onnx] + (["--target", a.sy_target] if a.sy_target else []) + [
            "--out", d, "--budget", a.tune_budget, "--metric", "l2", "--threshold", thr, "--data", onnx[:-5] + ".inputs",
            "--json"]
        ref = onnx[:-5] + ".reference"
        if os.path.isdir(ref):  # PyTorch's fp32 output (models.py): no reference executor run
            args += ["--reference", ref]
        if os.path.exists(os.path.join(d, "record.json")):
            args.append("--continue")
        rec = {"tune": self.sy_run(args, self.tune_budget_s() + 120)}
        b = self.sy_bench(c, engine=os.path.join(d, "selected.engine"), label="tune_" + gate)
        rec.update({k: v for k, v in b.items()})
        rec["selected_route"] = (rec["tune"].get("raw") or {}).get("selected", {}).get("route")
        return rec

    def run(self):
        a = self.a
        if self.cuda:
            torch.backends.cudnn.benchmark = True
            torch.set_float32_matmul_precision("high" if a.tf32 else "highest")
            try:
                torch.backends.cudnn.allow_tf32 = a.tf32  # PyTorch's default is True for convolutions
            except Exception as e:
                log(f"cudnn.allow_tf32: {e}")
        self.res["env"] = self.env()
        log("env:", json.dumps({k: self.res["env"].get(k) for k in ("gpu", "nvidia_smi", "torch", "cuda", "cudnn")}))
        if self.res.get("rates", {}).get("device") != str(self.res["env"].get("gpu")):
            self.res["rates"] = dict(self.rates(), device=str(self.res["env"].get("gpu")))
        log("rates:", json.dumps(self.res["rates"]))
        self.save()
        for name in a.models:
            for batch in a.batches:
                try:
                    self.case(name, batch)
                except KeyboardInterrupt:
                    raise
                except BaseException as e:  # bookkeeping bug: keep going with the next case
                    log(f"{name}_b{batch}: {type(e).__name__}: {e}")
        self.save()
        log(f"done in {time.time() - T0:.0f}s; wrote {self.path}")
        print(markdown(self.res, short=True), flush=True)


# ---- report ----
def _ms(rec, key="p50_ms"):
    return rec.get(key) if rec and rec.get("status") == "ok" else None


def _f(v):
    return "—" if v is None else (f"{v:.2f}" if v >= 1 else f"{v:.3f}")


def _ratio(a, b):
    return f"{a / b:.2f}" if a and b else "—"


def _sy_class(label, rec):
    """fp32 | half | tf32 (tf32 routes are shown but kept out of the ratios: torch's fp32 modes run without TF32)."""
    rec = rec or {}
    text = f"{label} {rec.get('route') or ''} {rec.get('selected_route') or ''}"
    return "half" if ("fp16" in text or "bf16" in text) else "tf32" if "tf32" in text else "fp32"


def markdown(res, short=False):
    cases = res.get("cases", {})
    tmodes = sorted({m for c in cases.values() for m in c.get("modes", {})},
                    key=lambda m: ORDER.index(m) if m in ORDER else len(ORDER))
    sy = sorted({k for c in cases.values() for k in c.get("switchyard", {})}, key=lambda k: (k != "default", k))
    env = res.get("env", {})
    out = []
    if not short:
        r = res.get("rates", {})
        out += [f"GPU: {env.get('nvidia_smi') or env.get('gpu')}; torch {env.get('torch')}, CUDA {env.get('cuda')}, "
                f"cuDNN {env.get('cudnn')}, TF32 in torch fp32 modes: {env.get('tf32')}.",
                "Measured rates: " + ", ".join(f"{k} {v:.1f}" for k, v in r.items() if isinstance(v, float)) + ".", "",
                "Cells: p50 ms, device-resident / host round trip. torch: input already on the GPU and output "
                "left there / pinned host input -> GPU -> forward -> output to pinned host. Switchyard: `bench --io "
                "device` / `bench --io pinned` (the same two placements, runtime/session.h). floor: roofline lower "
                "bound, device-resident, fp32 / fp16 weights. Ratios: best Switchyard p50 of a precision (fp32: "
                "routes without fp16/bf16/tf32; fp16: fp16 or bf16 routes and tune_fp16; TF32 routes are kept out) "
                "/ best torch.compile p50 of that precision and placement; < 1: Switchyard is faster.", ""]
    head = ["case", "floor fp32/fp16"] + tmodes + [f"SY {k}" for k in sy] + [
        f"SY/compile {p} ({w})" for p in ("fp32", "fp16") for w in ("device", "host")]
    out += ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for key, c in cases.items():
        fl = (c.get("roofline") or {}).get("floor_ms", {})
        row = [key, f"{_f(fl.get('fp32'))} / {_f(fl.get('fp16'))}"]
        for m in tmodes:
            rec = c["modes"].get(m)
            if rec and rec.get("status") == "ok":
                row.append(f"{_f(_ms(rec))} / {_f(_ms(rec, 'host_p50_ms'))}")
            else:
                row.append(rec.get("status", "—") if rec else "—")
        syr = c.get("switchyard", {})
        for k in sy:
            rec = syr.get(k)
            if _ms(rec):
                dev = rec.get("device_p50_ms")
                row.append(f"{_f(dev)} / {_f(_ms(rec))}" if dev else _f(_ms(rec)))
            else:
                row.append((rec or {}).get("status", "—"))
        for half in (False, True):
            for tkey, skey in (("p50_ms", "device_p50_ms"), ("host_p50_ms", "p50_ms")):
                cm = [_ms(c["modes"].get(m), tkey) for m in tmodes
                      if not m.startswith("eager") and m.endswith("_fp16") == half]
                cm = [v for v in cm if v]
                sv = [_ms(syr.get(k), skey) for k in sy if _sy_class(k, syr.get(k)) == ("half" if half else "fp32")]
                sv = [v for v in sv if v]
                row.append(_ratio(min(sv) if sv else None, min(cm) if cm else None))
        out.append("| " + " | ".join(row) + " |")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default=",".join(models.MODELS))
    ap.add_argument("--batches", default="1,32")
    ap.add_argument("--modes", default="eager,eager_fp16,compile,compile_ro,compile_ro_fp16",
                    help="eager|compile|compile_ro|max_autotune, each optionally with _fp16 (autocast)")
    ap.add_argument("--max-autotune", action="store_true", help="add mode max_autotune")
    ap.add_argument("--switchyard", help="path to the switchyard binary (omit: PyTorch only)")
    ap.add_argument("--sy-target", default="cuda", help="switchyard --target ('' leaves it out)")
    ap.add_argument("--routes", default="", help="'label=route;label=route', e.g. 'fp16=precision=fp16'")
    ap.add_argument("--tune", nargs="?", const="fp32,fp16", default="",
                    help="switchyard tune gates: fp32 (l2 1e-4), fp16 (l2 1e-2) or a threshold")
    ap.add_argument("--tune-budget", default="120s")
    ap.add_argument("--sy-iterations", type=int, default=100)
    ap.add_argument("--sy-warmup", type=int, default=10)
    ap.add_argument("--out", required=True, help="results folder (keep it across runs to resume)")
    ap.add_argument("--copy-to", help="also copy results.json and benchmarks-gpu.md here after each step")
    ap.add_argument("--onnx-dir", help="ONNX cache (default OUT/onnx)")
    ap.add_argument("--time-limit", type=float, default=480, help="global wall seconds; later work is skipped")
    ap.add_argument("--mode-limit", type=float, default=180, help="seconds per mode (compile included)")
    ap.add_argument("--min-runs", type=int, default=50)
    ap.add_argument("--min-seconds", type=float, default=1.0)
    ap.add_argument("--max-runs", type=int, default=2000)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--no-host", action="store_true", help="skip the host round-trip timing")
    ap.add_argument("--profile", default="", help="switchyard labels (e.g. 'default,fp16') whose batch>1 engines "
                    "also get `bench --profile` (per-step device times) in the results")
    ap.add_argument("--tf32", action="store_true", help="allow TF32 in torch fp32 modes (default: off)")
    ap.add_argument("--retry", action="store_true", help="redo entries that ended in error or timeout")
    ap.add_argument("--device", default="cuda", help="cuda (default) or cpu for a smoke test")
    a = ap.parse_args()
    a.models = a.models.split(",")
    a.batches = [int(b) for b in a.batches.split(",")]
    a.modes = [m for m in a.modes.split(",") if m] + (["max_autotune"] if a.max_autotune else [])
    a.onnx_dir = a.onnx_dir or os.path.join(a.out, "onnx")
    if a.switchyard:
        a.switchyard = os.path.abspath(a.switchyard)
    Runner(a).run()


if __name__ == "__main__":
    main()
