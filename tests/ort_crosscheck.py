#!/usr/bin/python3
"""Cross-check: every model in tests/models (PyTorch-exported, dynamic dimensions) is run by
`switchyard run` and by ONNX Runtime 1.30 CPU (npm onnxruntime-node) on each of its input
sets; every output must agree within relative L2 <= 1e-4 (and exactly in dtype and shape).
Exit 77 (skip) when onnxruntime-node is not installed."""
import glob
import os
import subprocess
import sys
import tempfile
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SWITCHYARD = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "bin", "switchyard")
ORT = os.path.join(ROOT, "third_party", "node", "node_modules", "onnxruntime-node")
TOL = 1e-4


def rel_l2(a, b):
    a = a.astype(np.float64); b = b.astype(np.float64)
    den = np.linalg.norm(b)
    return np.linalg.norm(a - b) / (den if den > 0 else 1.0)


def main():
    if not os.path.isdir(ORT):
        print("SKIP: onnxruntime-node is not installed (run scripts/setup.sh)")
        return 77
    models = sorted(glob.glob(os.path.join(ROOT, "tests", "models", "*.onnx")))
    passed = failed = 0
    for model in models:
        name = os.path.basename(model)[:-5]
        for sets in ("inputs", "inputs2"):
            folder = os.path.join(ROOT, "tests", "models", f"{name}.{sets}")
            if not os.path.isdir(folder):
                continue
            args = []
            for f in sorted(glob.glob(os.path.join(folder, "*.npy"))):
                args += ["--input", f"{os.path.basename(f)[:-4]}={f}"]
            with tempfile.TemporaryDirectory() as tmp:
                sy, ort = os.path.join(tmp, "sy"), os.path.join(tmp, "ort")
                r1 = subprocess.run([SWITCHYARD, "run", model, *args, "--outputs", sy], capture_output=True, text=True)
                r2 = subprocess.run(["node", os.path.join(ROOT, "bench", "ort_run.js"), model, *args, "--outputs", ort],
                                    capture_output=True, text=True)
                problems = []
                if r1.returncode != 0:
                    problems.append("switchyard: " + r1.stderr.strip())
                if r2.returncode != 0:
                    problems.append("onnxruntime: " + r2.stderr.strip())
                if not problems:
                    for f in sorted(os.listdir(ort)):
                        a, b = np.load(os.path.join(sy, f)), np.load(os.path.join(ort, f))
                        if a.dtype != b.dtype or a.shape != b.shape:
                            problems.append(f"{f}: {a.dtype}{a.shape} vs onnxruntime {b.dtype}{b.shape}")
                            continue
                        err = rel_l2(a, b)
                        print(f"  {name} [{sets}] {f}: shape {a.shape} rel_l2 {err:.2e}")
                        if not err <= TOL:
                            problems.append(f"{f}: rel_l2 {err:.3e} > {TOL}")
            if problems:
                failed += 1
                print(f"FAIL {name} [{sets}]: " + "; ".join(problems))
            else:
                passed += 1
    print(f"{passed} passed, {failed} failed")
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())
