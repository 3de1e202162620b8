#!/usr/bin/python3
"""Generates the benchmark model zoo into models/generated/ (ignored by git) with Debian's
python3-torch / python3-torchvision, random weights at fixed seeds:
  resnet50, mobilenet_v2, efficientnet_b0, bert_base (12 layers, hidden 768, seq 128),
  vit_b16 (ViT-B/16-like), gpt2_small (12-layer decoder stack, seq 128),
  dbnet_mbv3 (text detection, DBNet-like, 640x640), textrec_svtr (text recognition,
  PP-OCR SVTR-LCNet-like, 48x320)
each at batch 1 and 8 (static shapes: NAME_b1.onnx, NAME_b8.onnx) plus one input set per
model in NAME_bN.inputs/<input>.npy.
Usage: models/make_zoo.py [NAME ...] [--batches 1,8]   (default: all, batches 1 and 8)"""
import inspect
import os
import sys
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "generated")


class Bert(nn.Module):
    def __init__(self, vocab=30522, d=768, heads=12, layers=12, ff=3072, max_len=512):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(max_len, d)
        self.typ = nn.Embedding(2, d)
        self.norm = nn.LayerNorm(d, eps=1e-12)
        layer = nn.TransformerEncoderLayer(d, heads, ff, dropout=0.0, activation="gelu", batch_first=True)
        self.enc = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)

    def forward(self, ids, mask):
        pos = torch.arange(ids.shape[1]).unsqueeze(0)
        x = self.norm(self.tok(ids) + self.pos(pos) + self.typ(torch.zeros_like(ids)))
        return self.enc(x, src_key_padding_mask=mask == 0)


class Vit(nn.Module):
    def __init__(self, d=768, heads=12, layers=12, patch=16, img=224, classes=1000):
        super().__init__()
        self.patch = nn.Conv2d(3, d, patch, patch)
        n = (img // patch) ** 2
        self.cls = nn.Parameter(torch.randn(1, 1, d) * 0.02)
        self.pos = nn.Parameter(torch.randn(1, n + 1, d) * 0.02)
        layer = nn.TransformerEncoderLayer(d, heads, 4 * d, dropout=0.0, activation="gelu", batch_first=True,
                                           norm_first=True)
        self.enc = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = nn.Sequential(nn.LayerNorm(d), nn.Linear(d, classes))

    def forward(self, x):
        x = self.patch(x).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], 1) + self.pos
        return self.head(self.enc(x)[:, 0])


class Gpt2Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc, self.out = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
        self.heads = heads

    def forward(self, x):
        b, t, d = x.shape
        h = self.heads
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q, k, v = (z.view(b, t, h, d // h).transpose(1, 2) for z in (q, k, v))
        att = (q @ k.transpose(-2, -1)) * (1.0 / float(np.sqrt(d // h)))
        causal = torch.ones(t, t, dtype=torch.bool).tril()
        att = att.masked_fill(~causal, float("-inf")).softmax(-1)
        x = x + self.proj((att @ v).transpose(1, 2).reshape(b, t, d))
        return x + self.out(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))


class Gpt2(nn.Module):
    def __init__(self, vocab=50257, d=768, heads=12, layers=12):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(vocab, d), nn.Embedding(1024, d)
        self.blocks = nn.ModuleList([Gpt2Block(d, heads) for _ in range(layers)])
        self.ln = nn.LayerNorm(d)

    def forward(self, ids):
        x = self.wte(ids) + self.wpe(torch.arange(ids.shape[1]).unsqueeze(0))
        for b in self.blocks:
            x = b(x)
        return self.ln(x)  # hidden states (the 50257-way LM head is left out to keep it small)


class DbNet(nn.Module):
    """Text detection in the shape of DBNet as PaddleOCR and MMOCR ship it: a MobileNetV3-large
    backbone (HardSwish, HardSigmoid squeeze-excite, depthwise convolutions), an FPN neck whose
    top-down path and output merge upsample by Resize (nearest), and a probability head of two
    stride-2 ConvTranspose upsamplings and a Sigmoid."""

    def __init__(self, inner=96):
        super().__init__()
        feats = torchvision.models.mobilenet_v3_large().features
        self.stages = nn.ModuleList([feats[:4], feats[4:7], feats[7:13], feats[13:]])  # strides 4..32
        chans = [24, 40, 112, 960]
        self.lat = nn.ModuleList([nn.Conv2d(c, inner, 1, bias=False) for c in chans])
        self.smooth = nn.ModuleList([nn.Conv2d(inner, inner // 4, 3, padding=1, bias=False) for _ in chans])
        q = inner // 4
        self.head = nn.Sequential(
            nn.Conv2d(inner, q, 3, padding=1, bias=False), nn.BatchNorm2d(q), nn.ReLU(),
            nn.ConvTranspose2d(q, q, 2, 2), nn.BatchNorm2d(q), nn.ReLU(),
            nn.ConvTranspose2d(q, 1, 2, 2), nn.Sigmoid())

    def forward(self, x):
        feats = []
        for s in self.stages:
            x = s(x)
            feats.append(x)
        p = [lat(f) for lat, f in zip(self.lat, feats)]
        for i in (2, 1, 0):
            p[i] = p[i] + F.interpolate(p[i + 1], scale_factor=2.0, mode="nearest")
        outs = [F.interpolate(s(q), scale_factor=float(2 ** i), mode="nearest") if i else s(q)
                for i, (s, q) in enumerate(zip(self.smooth, p))]
        return self.head(torch.cat(outs[::-1], 1))


def dw_block(cin, cout, stride):
    """Depthwise-separable block of PP-LCNet: 3x3 depthwise, 1x1 pointwise, HardSwish."""
    return nn.Sequential(
        nn.Conv2d(cin, cin, 3, stride, 1, groups=cin, bias=False), nn.BatchNorm2d(cin), nn.Hardswish(),
        nn.Conv2d(cin, cout, 1, bias=False), nn.BatchNorm2d(cout), nn.Hardswish())


class TextRec(nn.Module):
    """Text recognition in the shape of PaddleOCR's PP-OCRv3 recogniser (SVTR-LCNet): a PP-LCNet
    backbone of depthwise-separable blocks with HardSwish that keeps the width (strides (2,1)),
    pooled to one row, two SVTR mixing blocks (pre-norm transformer layers, d=120) over the
    columns, and a CTC head (Linear to 6625 classes, Softmax)."""

    def __init__(self, d=120, classes=6625):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, 2, 1, bias=False), nn.BatchNorm2d(16), nn.Hardswish())
        cfg = [(16, 32, 1), (32, 64, (2, 1)), (64, 64, 1), (64, 128, (2, 1)), (128, 128, 1),
               (128, 256, (2, 1)), (256, 256, 1), (256, 256, 1)]
        self.body = nn.Sequential(*[dw_block(a, b, s) for a, b, s in cfg])
        self.pool = nn.AvgPool2d((3, 2), (3, 2))
        self.proj = nn.Sequential(nn.Conv2d(256, d, 1), nn.Hardswish())
        layer = nn.TransformerEncoderLayer(d, 8, 2 * d, dropout=0.0, activation="gelu", batch_first=True,
                                           norm_first=True)
        self.mix = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, classes)

    def forward(self, x):
        x = self.proj(self.pool(self.body(self.stem(x))))  # [B, d, 1, W/4]
        x = x.flatten(2).transpose(1, 2)
        return self.head(self.norm(self.mix(x))).softmax(-1)


def distinct_weights(model):
    """nn.TransformerEncoder deep-copies one layer, so every layer starts with the same
    weights (and the exporter then stores them once). Re-initialise each submodule so
    the layers differ, as in a trained model."""
    for m in model.modules():
        if m is not model and hasattr(m, "reset_parameters"):
            m.reset_parameters()
        if isinstance(m, nn.MultiheadAttention):
            m._reset_parameters()
    return model


def calibrate_batchnorm(model, size):
    """BatchNorm running statistics measured on a fixed random batch, as training would
    leave them. Left at their defaults (mean 0, variance 1), every BatchNorm passes its input
    through unscaled, and in MobileNetV2 and EfficientNet-B0 the activations shrink layer
    by layer until the logits are the classifier's bias alone (their input-dependent part
    3e-9 and 0 relative to it, torch 1.13): an accuracy gate on such outputs passes any
    engine, bf16 included. Calibrated, each BatchNorm normalises its input and the logits
    depend on the image as in a trained network."""
    bns = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    if not bns:
        return model
    model.eval()
    for b in bns:
        b.reset_running_stats()
        b.momentum = None  # a cumulative average over the calibration pass
        b.train()
    g = torch.Generator().manual_seed(1)
    with torch.no_grad():
        model(torch.rand(8, 3, *size, generator=g))
    return model.eval()


def vision(name, ctor, size=(224, 224), output="logits", opset=13):
    def make(batch):
        torch.manual_seed(0)
        m = calibrate_batchnorm(distinct_weights(ctor()), size)
        return m, [torch.rand(batch, 3, *size)], ["image"], [output], opset
    return make


def text(name, ctor, inputs):
    def make(batch):
        torch.manual_seed(0)
        m = distinct_weights(ctor()).eval()
        return m, inputs(batch), (["input_ids", "attention_mask"] if len(inputs(1)) == 2 else ["input_ids"]), \
            ["hidden"], 14
    return make


MODELS = {
    "resnet50": vision("resnet50", lambda: torchvision.models.resnet50()),
    "mobilenet_v2": vision("mobilenet_v2", lambda: torchvision.models.mobilenet_v2()),
    "efficientnet_b0": vision("efficientnet_b0", lambda: torchvision.models.efficientnet_b0()),
    "vit_b16": vision("vit_b16", Vit),
    "bert_base": text("bert_base", Bert, lambda b: [torch.randint(0, 30522, (b, 128)),
                                                   torch.ones(b, 128, dtype=torch.int64)]),
    "gpt2_small": text("gpt2_small", Gpt2, lambda b: [torch.randint(0, 50257, (b, 128))]),
    "dbnet_mbv3": vision("dbnet_mbv3", DbNet, (640, 640), "probability", 14),
    "textrec_svtr": vision("textrec_svtr", TextRec, (48, 320), "probs", 14),
}


def main():
    args = sys.argv[1:]
    batches = (1, 8)
    if "--batches" in args:  # --batches 1 or 1,8
        i = args.index("--batches")
        batches = tuple(int(b) for b in args[i + 1].split(","))
        del args[i:i + 2]
    names = args or list(MODELS)
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        sys.exit(f"make_zoo.py: unknown model(s) {', '.join(unknown)}; known: {', '.join(MODELS)}")
    os.makedirs(OUT, exist_ok=True)
    # torch >= 2.5 defaults to the dynamo exporter; the zoo is the TorchScript export.
    kw = {"dynamo": False} if "dynamo" in inspect.signature(torch.onnx.export).parameters else {}
    for name in names:
        for batch in batches:
            model, inputs, in_names, out_names, opset = MODELS[name](batch)
            path = os.path.join(OUT, f"{name}_b{batch}.onnx")
            # Not under no_grad: that switches nn.TransformerEncoderLayer to a fused fast
            # path the exporter cannot handle.
            try:
                torch.onnx.export(model, tuple(inputs), path, opset_version=opset, input_names=in_names,
                                  output_names=out_names, do_constant_folding=True, **kw)
            except torch.onnx.errors.UnsupportedOperatorError as e:
                # torch 2.x routes nn.MultiheadAttention through scaled_dot_product_attention,
                # which the TorchScript exporter writes (as MatMul/Softmax) from opset 14 on.
                print(f"{name}: opset {opset} refused ({str(e).splitlines()[0]}); exporting at opset 14")
                torch.onnx.export(model, tuple(inputs), path, opset_version=14, input_names=in_names,
                                  output_names=out_names, do_constant_folding=True, **kw)
            d = os.path.join(OUT, f"{name}_b{batch}.inputs")
            os.makedirs(d, exist_ok=True)
            for n, t in zip(in_names, inputs):
                np.save(os.path.join(d, n + ".npy"), t.numpy())
            print(f"{path}: {os.path.getsize(path) / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
