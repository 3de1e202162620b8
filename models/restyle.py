#!/usr/bin/python3
"""Rewrites a zoo model (models/make_zoo.py, PyTorch's exporter) into the idioms of another
exporter, computing the same function, so that the benchmarks also cover graphs as
paddle2onnx and tf2onnx write them (no trained model from those exporters can be downloaded
here). Writes NAME_STYLE_bN.onnx and its inputs folder next to the source model.

  paddle2onnx: every Conv with a bias becomes a bias-free Conv followed by a
    BatchNormalization (PaddlePaddle keeps BN as a layer of its own; the statistics are
    random and the BN's bias compensates, so the values are unchanged); HardSwish becomes
    HardSigmoid(alpha=1/6, beta=1/2) * x (paddle2onnx below opset 14); Resize takes `sizes`
    computed at run time from the input's Shape (Shape -> Slice -> Cast -> Mul -> Cast ->
    Concat) instead of constant scales; Gemm becomes MatMul + Add.
  tf2onnx: the image input is NHWC and goes through a Transpose (TensorFlow's layout); a
    4-D output is transposed back to NHWC; a Conv's padding becomes a Pad node in front of
    it (explicit/SAME padding) when the Conv has a stride; HardSwish becomes
    x * Clip(x + 3, 0, 6) * (1/6) (Keras' hard_swish as tf2onnx writes it).

Usage: models/restyle.py MODEL.onnx --style paddle2onnx|tf2onnx
The rewritten model must give the original's outputs (up to fp32 rounding):
`switchyard check` or ONNX Runtime can compare them (docs/benchmarks.md)."""
import argparse
import os
import shutil
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto


class Rewriter:
    def __init__(self, model):
        self.model = model
        self.g = model.graph
        self.inits = {i.name: i for i in self.g.initializer}
        self.n = 0
        self.rng = np.random.default_rng(0)

    def name(self, base):
        self.n += 1
        return f"{base}__rs{self.n}"

    def const(self, base, array):
        t = numpy_helper.from_array(np.asarray(array), self.name(base))
        self.g.initializer.append(t)
        self.inits[t.name] = t
        return t.name

    def array(self, name):
        if name in self.inits:
            return numpy_helper.to_array(self.inits[name])
        for node in self.g.node:
            if node.op_type == "Constant" and node.output[0] == name:
                return numpy_helper.to_array(node.attribute[0].t)
        return None

    def rebuild(self, fn):
        """fn(node) returns the nodes replacing it (or None to keep it)."""
        out = []
        for node in list(self.g.node):
            repl = fn(node)
            out.extend([node] if repl is None else repl)
        del self.g.node[:]
        self.g.node.extend(out)


def attr(node, key, default=None):
    for a in node.attribute:
        if a.name == key:
            return helper.get_attribute_value(a)
    return default


def paddle2onnx(rw):
    def conv_bn(node):
        if node.op_type != "Conv" or len(node.input) < 3:
            return None
        bias = rw.array(node.input[2])
        if bias is None:
            return None
        c = bias.shape[0]
        mean = rw.rng.normal(0, 0.5, c).astype(np.float32)
        var = rw.rng.uniform(0.5, 2.0, c).astype(np.float32)
        eps = 1e-5
        # BN(y) = scale * (y - mean) / sqrt(var + eps) + b = y - mean + b with scale = sqrt(var + eps):
        # b = bias + mean gives the original conv's output y + bias.
        scale = np.sqrt(var + eps).astype(np.float32)
        conv_out = rw.name(node.output[0] + "_conv")
        conv = helper.make_node("Conv", list(node.input[:2]), [conv_out], name=node.name, domain=node.domain)
        conv.attribute.extend(node.attribute)
        bn = helper.make_node("BatchNormalization",
                              [conv_out, rw.const("bn_scale", scale), rw.const("bn_bias", bias + mean),
                               rw.const("bn_mean", mean), rw.const("bn_var", var)],
                              list(node.output), name=node.name + "_bn", epsilon=eps)
        return [conv, bn]

    def hardswish(node):
        if node.op_type != "HardSwish":
            return None
        hs = rw.name(node.output[0] + "_hsig")
        return [helper.make_node("HardSigmoid", [node.input[0]], [hs], alpha=1.0 / 6, beta=0.5),
                helper.make_node("Mul", [node.input[0], hs], list(node.output), name=node.name)]

    def resize_sizes(node):
        if node.op_type != "Resize" or len(node.input) < 3 or not node.input[2]:
            return None
        scales = rw.array(node.input[2])
        if scales is None or scales.size != 4 or np.any(scales[:2] != 1):
            return None
        x = node.input[0]
        shape, nc, hw, hwf, hws, hwi, sizes = (rw.name(x + s) for s in
                                               ("_shape", "_nc", "_hw", "_hwf", "_hws", "_hwi", "_sizes"))
        i64 = lambda v: rw.const("i", np.array(v, np.int64))  # noqa: E731
        nodes = [
            helper.make_node("Shape", [x], [shape]),
            helper.make_node("Slice", [shape, i64([0]), i64([2])], [nc]),  # N, C as the input's
            helper.make_node("Slice", [shape, i64([2]), i64([4])], [hw]),
            helper.make_node("Cast", [hw], [hwf], to=TensorProto.FLOAT),
            helper.make_node("Mul", [hwf, rw.const("scale", scales[2:].astype(np.float32))], [hws]),
            helper.make_node("Cast", [hws], [hwi], to=TensorProto.INT64),
            helper.make_node("Concat", [nc, hwi], [sizes], axis=0),
        ]
        r = helper.make_node("Resize", [x, "", "", sizes], list(node.output), name=node.name)
        r.attribute.extend(node.attribute)
        return nodes + [r]

    def gemm(node):
        if node.op_type != "Gemm" or attr(node, "transA", 0) or attr(node, "alpha", 1.0) != 1.0 \
                or attr(node, "beta", 1.0) != 1.0 or len(node.input) < 3:
            return None
        b = rw.array(node.input[1])
        if b is None:
            return None
        w = b.T.copy() if attr(node, "transB", 0) else b
        mm = rw.name(node.output[0] + "_mm")
        return [helper.make_node("MatMul", [node.input[0], rw.const("w", w)], [mm], name=node.name),
                helper.make_node("Add", [mm, node.input[2]], list(node.output))]

    for fn in (conv_bn, hardswish, resize_sizes, gemm):
        rw.rebuild(fn)


def tf2onnx(rw, input_name):
    g = rw.g
    inp = next(i for i in g.input if i.name == input_name)
    dims = [d.dim_value for d in inp.type.tensor_type.shape.dim]
    if len(dims) != 4:
        sys.exit(f"restyle.py: tf2onnx style needs a 4-D image input; '{input_name}' has {dims}")
    n, c, h, w = dims
    nchw = rw.name(input_name + "_nchw")
    for node in g.node:
        for i, x in enumerate(node.input):
            if x == input_name:
                node.input[i] = nchw
    g.node.insert(0, helper.make_node("Transpose", [input_name], [nchw], perm=[0, 3, 1, 2]))
    del inp.type.tensor_type.shape.dim[:]
    for d in (n, h, w, c):
        inp.type.tensor_type.shape.dim.add().dim_value = d

    def explicit_pad(node):
        if node.op_type != "Conv":
            return None
        pads = attr(node, "pads")
        strides = attr(node, "strides", [1, 1])
        if not pads or not any(pads) or all(s == 1 for s in strides):
            return None
        padded = rw.name(node.input[0] + "_pad")
        p = np.array([0, 0, pads[0], pads[1], 0, 0, pads[2], pads[3]], np.int64)
        pad = helper.make_node("Pad", [node.input[0], rw.const("pads", p)], [padded], mode="constant")
        conv = helper.make_node("Conv", [padded] + list(node.input[1:]), list(node.output), name=node.name)
        conv.attribute.extend([a for a in node.attribute if a.name != "pads"])
        return [pad, conv]

    def hardswish(node):
        if node.op_type != "HardSwish":
            return None
        x = node.input[0]
        a, r, m = (rw.name(x + s) for s in ("_p3", "_relu6", "_mul"))
        return [helper.make_node("Add", [x, rw.const("three", np.array(3, np.float32))], [a]),
                helper.make_node("Clip", [a, rw.const("zero", np.array(0, np.float32)),
                                          rw.const("six", np.array(6, np.float32))], [r]),
                helper.make_node("Mul", [x, r], [m]),
                helper.make_node("Mul", [m, rw.const("sixth", np.array(1 / 6, np.float32))], list(node.output),
                                 name=node.name)]

    for fn in (explicit_pad, hardswish):
        rw.rebuild(fn)
    for out in g.output:
        od = out.type.tensor_type.shape.dim
        if len(od) != 4:
            continue
        inner = rw.name(out.name + "_nchw")
        for node in g.node:
            for i, x in enumerate(node.output):
                if x == out.name:
                    node.output[i] = inner
        g.node.append(helper.make_node("Transpose", [inner], [out.name], perm=[0, 2, 3, 1]))
        d = [x.dim_value for x in od]
        del od[:]
        for v in (d[0], d[2], d[3], d[1]):
            od.add().dim_value = v


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model")
    ap.add_argument("--style", required=True, choices=["paddle2onnx", "tf2onnx"])
    a = ap.parse_args()
    base, ext = os.path.splitext(a.model)
    stem, _, batch = base.rpartition("_b")
    if not stem or not batch.isdigit():
        sys.exit(f"restyle.py: expected a zoo model NAME_bN.onnx, got {a.model}")
    out = f"{stem}_{a.style.replace('2onnx', '')}_b{batch}{ext}"
    model = onnx.load(a.model)
    rw = Rewriter(model)
    in_dir, out_dir = base + ".inputs", out[:-len(ext)] + ".inputs"
    if a.style == "paddle2onnx":
        paddle2onnx(rw)
        if os.path.isdir(in_dir):
            shutil.rmtree(out_dir, ignore_errors=True)
            shutil.copytree(in_dir, out_dir)
    else:
        image = model.graph.input[0].name
        tf2onnx(rw, image)
        os.makedirs(out_dir, exist_ok=True)
        x = np.load(os.path.join(in_dir, image + ".npy"))
        np.save(os.path.join(out_dir, image + ".npy"), np.ascontiguousarray(x.transpose(0, 2, 3, 1)))
    model.producer_name = a.style + "-style (models/restyle.py)"
    onnx.checker.check_model(model)
    onnx.save(model, out)
    print(f"{out}: {os.path.getsize(out) / 1e6:.1f} MB, {len(model.graph.node)} nodes")


if __name__ == "__main__":
    main()
