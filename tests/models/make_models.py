#!/usr/bin/python3
"""Generates the small real-world test models in tests/models/ with the PyTorch exporter
(Debian python3-torch 1.13), random weights at fixed seeds, with dynamic dimensions.
Each model gets NAME.onnx and NAME.inputs/<input>.npy (plus a second input set with other
dynamic sizes in NAME.inputs2/). Committed; rerun only to change them."""
import os
import shutil
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision

HERE = os.path.dirname(os.path.abspath(__file__))


class TinyResNet(nn.Module):
    def __init__(self):
        super().__init__()
        from torchvision.models.resnet import BasicBlock, Bottleneck
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 7, 2, 3, bias=False), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(3, 2, 1))
        self.l1 = BasicBlock(16, 16)
        self.l2 = Bottleneck(16, 8, stride=2, downsample=nn.Sequential(nn.Conv2d(16, 32, 1, 2, bias=False), nn.BatchNorm2d(32)))
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(32, 10)

    def forward(self, x):
        x = self.l2(self.l1(self.stem(x)))
        return self.fc(torch.flatten(self.pool(x), 1))


class TinyEfficientNet(nn.Module):
    """MBConv blocks with SiLU and squeeze-excitation, as EfficientNet exports."""
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, 2, 1, bias=False), nn.BatchNorm2d(16), nn.SiLU())
        self.dw = nn.Sequential(nn.Conv2d(16, 16, 3, 1, 1, groups=16, bias=False), nn.BatchNorm2d(16), nn.SiLU())
        self.se_reduce = nn.Conv2d(16, 4, 1)
        self.se_expand = nn.Conv2d(4, 16, 1)
        self.project = nn.Sequential(nn.Conv2d(16, 24, 1, bias=False), nn.BatchNorm2d(24))
        self.head = nn.Linear(24, 5)

    def forward(self, x):
        x = self.stem(x)
        y = self.dw(x)
        s = F.adaptive_avg_pool2d(y, 1)
        s = torch.sigmoid(self.se_expand(F.silu(self.se_reduce(s))))
        x = self.project(y * s)
        return self.head(x.mean((2, 3)))


class Encoder(nn.Module):
    """BERT-like: token + position embeddings, LayerNorm, post-norm encoder layers, GELU."""
    def __init__(self, vocab=100, d=32, heads=4, layers=2, max_len=64):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(max_len, d)
        self.norm = nn.LayerNorm(d)
        layer = nn.TransformerEncoderLayer(d, heads, 64, dropout=0.0, activation="gelu", batch_first=True)
        self.enc = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.pool = nn.Linear(d, d)

    def forward(self, ids, mask):
        pos = torch.arange(ids.shape[1], device=ids.device).unsqueeze(0)
        x = self.norm(self.tok(ids) + self.pos(pos))
        x = self.enc(x, src_key_padding_mask=mask == 0)
        return x, torch.tanh(self.pool(x[:, 0]))


class Gpt2Block(nn.Module):
    def __init__(self, d=32, heads=4):
        super().__init__()
        self.ln1 = nn.LayerNorm(d); self.ln2 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d); self.proj = nn.Linear(d, d)
        self.fc = nn.Linear(d, 4 * d); self.out = nn.Linear(4 * d, d)
        self.heads = heads

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q = q.view(b, t, self.heads, d // self.heads).transpose(1, 2)
        k = k.view(b, t, self.heads, d // self.heads).transpose(1, 2)
        v = v.view(b, t, self.heads, d // self.heads).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) / float(np.sqrt(d // self.heads))
        causal = torch.ones(t, t, dtype=torch.bool).tril()
        att = att.masked_fill(~causal, float("-inf")).softmax(-1)
        y = (att @ v).transpose(1, 2).reshape(b, t, d)
        x = x + self.proj(y)
        return x + self.out(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))


class Gpt2(nn.Module):
    def __init__(self, vocab=100, d=32, layers=2):
        super().__init__()
        self.wte = nn.Embedding(vocab, d); self.wpe = nn.Embedding(64, d)
        self.blocks = nn.ModuleList([Gpt2Block(d) for _ in range(layers)])
        self.ln = nn.LayerNorm(d)

    def forward(self, ids):
        pos = torch.arange(0, ids.shape[1]).unsqueeze(0)
        x = self.wte(ids) + self.wpe(pos)
        for blk in self.blocks:
            x = blk(x)
        return self.ln(x) @ self.wte.weight.t()


class TinyVit(nn.Module):
    def __init__(self, d=32, patch=8, img=32):
        super().__init__()
        self.patch = nn.Conv2d(3, d, patch, patch)
        self.cls = nn.Parameter(torch.randn(1, 1, d))
        self.pos = nn.Parameter(torch.randn(1, (img // patch) ** 2 + 1, d))
        layer = nn.TransformerEncoderLayer(d, 4, 64, dropout=0.0, activation="gelu", batch_first=True, norm_first=True)
        self.enc = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.head = nn.Sequential(nn.LayerNorm(d), nn.Linear(d, 10))

    def forward(self, x):
        x = self.patch(x).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], dim=1) + self.pos
        return self.head(self.enc(x)[:, 0])


class TextDetector(nn.Module):
    """DB-style: a conv backbone, FPN upsampling with Resize, ConvTranspose head, HardSwish."""
    def __init__(self):
        super().__init__()
        self.c1 = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.BatchNorm2d(8), nn.Hardswish())
        self.c2 = nn.Sequential(nn.Conv2d(8, 8, 3, 1, 1, groups=8), nn.Conv2d(8, 16, 1), nn.Hardswish())
        self.c3 = nn.Sequential(nn.Conv2d(16, 16, 3, 2, 1), nn.ReLU())
        self.lat = nn.Conv2d(16, 16, 1)
        self.up = nn.Sequential(nn.ConvTranspose2d(16, 8, 2, 2), nn.BatchNorm2d(8), nn.ReLU(), nn.ConvTranspose2d(8, 1, 2, 2))

    def forward(self, x):
        f2 = self.c2(self.c1(x))
        f3 = self.c3(f2)
        f = self.lat(f2) + F.interpolate(f3, scale_factor=2.0, mode="nearest")
        g = F.interpolate(f, scale_factor=0.5, mode="bilinear", align_corners=False)
        return torch.sigmoid(self.up(g))


class TextRecognizer(nn.Module):
    """CRNN-like without recurrence: conv features -> sequence -> per-step classes."""
    def __init__(self, classes=20):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(1, 16, 3, 1, 1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
                                  nn.Conv2d(16, 32, 3, 1, 1), nn.Hardswish(), nn.AvgPool2d((8, 1)))
        self.fc = nn.Linear(32, classes)

    def forward(self, x):
        f = self.body(x).squeeze(2).permute(0, 2, 1)
        return F.log_softmax(self.fc(f), dim=2)


def perturb_bn(m):
    for mod in m.modules():
        if isinstance(mod, (nn.BatchNorm2d,)):
            mod.running_mean.uniform_(-0.2, 0.2)
            mod.running_var.uniform_(0.5, 1.5)


def export(name, model, inputs, names, out_names, dyn, opset, second=None):
    model.eval()
    perturb_bn(model)
    path = os.path.join(HERE, name + ".onnx")
    torch.onnx.export(model, tuple(inputs), path, opset_version=opset, input_names=names,
                      output_names=out_names, dynamic_axes=dyn, do_constant_folding=True)
    for folder, tensors in ((name + ".inputs", inputs), (name + ".inputs2", second)):
        if tensors is None:
            continue
        d = os.path.join(HERE, folder)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        for n, t in zip(names, tensors):
            np.save(os.path.join(d, n + ".npy"), t.numpy())


def main():
    torch.manual_seed(0)
    img = lambda b, h=32, w=32, c=3: torch.rand(b, c, h, w)
    export("resnet_tiny", TinyResNet(), [img(1)], ["image"], ["logits"],
           {"image": {0: "batch"}, "logits": {0: "batch"}}, 13, [img(3)])
    mnv3 = torchvision.models.mobilenet_v3_small(width_mult=0.25, num_classes=10)
    export("mobilenetv3_tiny", mnv3, [img(1, 64, 64)], ["image"], ["logits"],
           {"image": {0: "batch"}, "logits": {0: "batch"}}, 13, [img(2, 64, 64)])
    mnv2 = torchvision.models.mobilenet_v2(width_mult=0.25, num_classes=10)
    export("mobilenetv2_tiny", mnv2, [img(1, 64, 64)], ["image"], ["logits"],
           {"image": {0: "batch"}, "logits": {0: "batch"}}, 11, [img(2, 64, 64)])
    export("efficientnet_tiny", TinyEfficientNet(), [img(1)], ["image"], ["logits"],
           {"image": {0: "batch"}, "logits": {0: "batch"}}, 14, [img(2)])
    ids = lambda b, t: torch.randint(0, 100, (b, t))
    mask = lambda b, t: torch.cat([torch.ones(b, t - 2, dtype=torch.int64), torch.zeros(b, 2, dtype=torch.int64)], 1)
    for opset in (13, 17):
        export(f"bert_tiny_op{opset}", Encoder(), [ids(1, 12), mask(1, 12)], ["input_ids", "attention_mask"],
               ["hidden", "pooled"], {"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"},
                                      "hidden": {0: "batch", 1: "seq"}, "pooled": {0: "batch"}}, opset,
               [ids(2, 7), mask(2, 7)])
    export("gpt2_tiny", Gpt2(), [ids(1, 10)], ["input_ids"], ["logits"],
           {"input_ids": {0: "batch", 1: "seq"}, "logits": {0: "batch", 1: "seq"}}, 14, [ids(2, 5)])
    export("vit_tiny", TinyVit(), [img(1)], ["pixels"], ["logits"],
           {"pixels": {0: "batch"}, "logits": {0: "batch"}}, 14, [img(2)])
    export("text_detector_tiny", TextDetector(), [img(1, 64, 96)], ["image"], ["prob_map"],
           {"image": {0: "batch", 2: "height", 3: "width"}, "prob_map": {0: "batch", 2: "h", 3: "w"}}, 11,
           [img(1, 32, 64)])
    export("text_recognizer_tiny", TextRecognizer(), [img(1, 16, 64, 1)], ["image"], ["log_probs"],
           {"image": {0: "batch", 3: "width"}, "log_probs": {0: "batch", 1: "steps"}}, 13, [img(2, 16, 40, 1)])


if __name__ == "__main__":
    main()
