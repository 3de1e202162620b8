"""The GPU benchmark's models: PyTorch modules with random weights at a fixed seed, one
ONNX file per (model, batch) exported from the same weights (opset 17, fixed shapes,
graph input "input", output "output").

  resnet50    torchvision resnet50, input float32 [B,3,224,224], output logits [B,1000]
  vit_b16     torchvision vit_b_16, same input and output
  bert_base   transformers BertModel (12 layers, hidden 768, 12 heads, no pooler),
              input int64 input_ids [B,128], output last_hidden_state [B,128,768]
  gpt2_small  transformers GPT2Model (12 layers, hidden 768, 12 heads, use_cache=False),
              input int64 input_ids [B,128], output last_hidden_state [B,128,768]

The transformer models are exported with attn_implementation="eager" (plain
MatMul/Softmax in the graph) and timed in PyTorch with "sdpa" (PyTorch's fastest
built-in attention); both hold the same weights (same seed, same init order).
"""
import inspect
import os
import time

import numpy as np
import torch
from torch import nn

MODELS = ("resnet50", "bert_base", "vit_b16", "gpt2_small")
SEED = 0


class _HF(nn.Module):
    """transformers model -> one tensor (last_hidden_state) from input_ids only."""

    def __init__(self, m, **kw):
        super().__init__()
        self.m, self.kw = m, kw

    def forward(self, ids):
        return self.m(input_ids=ids, **self.kw)[0]


def _hf(name, attn):
    import transformers as tf
    if name == "bert_base":
        cfg = tf.BertConfig(vocab_size=30522, hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
                            intermediate_size=3072, max_position_embeddings=512, attn_implementation=attn)
        ctor, kw = (lambda c: tf.BertModel(c, add_pooling_layer=False)), {}
    else:
        cfg = tf.GPT2Config(vocab_size=50257, n_positions=1024, n_embd=768, n_layer=12, n_head=12, use_cache=False,
                            attn_implementation=attn)
        ctor, kw = tf.GPT2Model, {"use_cache": False}
    try:
        cfg._attn_implementation = attn
    except Exception:  # read-only in some versions; the constructor argument then holds
        pass
    m = ctor(cfg)
    if hasattr(m, "set_attn_implementation"):
        try:
            m.set_attn_implementation(attn)
        except Exception:
            pass
    return _HF(m, **kw)


def build(name, batch, attn="sdpa"):
    """-> (module in eval mode on CPU, [input tensor]). Same weights and input for a
    given (name, batch) on every call."""
    torch.manual_seed(SEED)
    if name in ("resnet50", "vit_b16"):
        import torchvision
        m = torchvision.models.resnet50() if name == "resnet50" else torchvision.models.vit_b_16()
        x = torch.rand(batch, 3, 224, 224, generator=torch.Generator().manual_seed(1))
    elif name in ("bert_base", "gpt2_small"):
        m = _hf(name, attn)
        vocab = 30522 if name == "bert_base" else 50257
        x = torch.randint(0, vocab, (batch, 128), generator=torch.Generator().manual_seed(1), dtype=torch.int64)
    else:
        raise ValueError(f"unknown model {name!r}; known: {', '.join(MODELS)}")
    return m.eval(), [x]


def attn_impl(m):
    inner = getattr(m, "m", None)
    return getattr(getattr(inner, "config", None), "_attn_implementation", None)


def _export_once(m, x, path, dynamo, opset):
    params = inspect.signature(torch.onnx.export).parameters
    kw = dict(opset_version=opset, input_names=["input"], output_names=["output"], do_constant_folding=True)
    if "dynamo" in params:
        kw["dynamo"] = dynamo
    elif dynamo:
        raise RuntimeError("this torch has no dynamo exporter")
    if dynamo and "external_data" in params:
        kw["external_data"] = False  # one self-contained file
    # Not under no_grad: that switches nn.MultiheadAttention (ViT) to a fused fast path
    # the TorchScript exporter cannot handle.
    torch.onnx.export(m, (x,), path, **kw)


def export(name, batch, folder, check=True):
    """Writes folder/NAME_bB.onnx, folder/NAME_bB.inputs/input.npy and the fp32 PyTorch output
    folder/NAME_bB.reference/output.npy unless the model and input exist.
    Tries the TorchScript exporter (dynamo=False) at opset 17 first, then the dynamo
    exporter at 17 and 18. Returns an info dict (path, exporter, seconds, ORT check)."""
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, f"{name}_b{batch}.onnx")
    in_dir = path[:-5] + ".inputs"
    info_path = path + ".json"
    if os.path.exists(path) and os.path.exists(os.path.join(in_dir, "input.npy")):
        info = {"path": path, "cached": True}
        if os.path.exists(info_path):
            import json
            with open(info_path) as f:
                info.update(json.load(f), cached=True)
        return info
    t0 = time.time()
    m, (x,) = build(name, batch, attn="eager")
    errors = []
    tmp = path + ".tmp"
    for dynamo, opset in ((False, 17), (True, 17), (True, 18)):
        try:
            _export_once(m, x, tmp, dynamo, opset)
            os.replace(tmp, path)
            break
        except Exception as e:  # try the next exporter
            errors.append(f"dynamo={dynamo} opset={opset}: {type(e).__name__}: {str(e)[:300]}")
    else:
        raise RuntimeError("ONNX export failed: " + " | ".join(errors))
    os.makedirs(in_dir, exist_ok=True)
    np.save(os.path.join(in_dir, "input.npy"), x.numpy())
    # The fp32 PyTorch output on the CPU: the tuner's reference (`switchyard tune
    # --reference`), so that it need not run the reference executor on batch 32.
    ref_dir = path[:-5] + ".reference"
    os.makedirs(ref_dir, exist_ok=True)
    with torch.no_grad():
        np.save(os.path.join(ref_dir, "output.npy"), m(x).float().numpy())
    info = {"path": path, "exporter": "dynamo" if dynamo else "torchscript", "opset": opset,
            "attn_implementation": attn_impl(m), "export_errors": errors,
            "bytes": os.path.getsize(path), "export_s": round(time.time() - t0, 2)}
    if check:
        info["ort_check"] = ort_check(m, x, path)
    import json
    with open(info_path, "w") as f:
        json.dump(info, f, indent=1)
    return info


def ort_check(m, x, path):
    """Relative L2 of ONNX Runtime (CPU) against the PyTorch module on the export input."""
    try:
        import onnxruntime as ort
        t0 = time.time()
        with torch.no_grad():
            ref = m(x).float().numpy()
        so = ort.SessionOptions()
        got = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"]).run(None, {"input": x.numpy()})[0]
        rel = float(np.linalg.norm(got.astype(np.float64) - ref) / max(np.linalg.norm(ref), 1e-30))
        return {"rel_l2": rel, "seconds": round(time.time() - t0, 2)}
    except Exception as e:
        return {"error": f"{type(e).__name__}: {str(e)[:300]}"}


if __name__ == "__main__":
    import argparse
    ap = argparse.ArgumentParser(description="export the GPU benchmark's ONNX files")
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--batches", default="1,32")
    ap.add_argument("--out", default="out/gpu/onnx")
    ap.add_argument("--no-check", action="store_true", help="skip the ONNX Runtime check")
    a = ap.parse_args()
    for n in a.models.split(","):
        for b in (int(s) for s in a.batches.split(",")):
            print(n, b, export(n, b, a.out, check=not a.no_check), flush=True)
