#!/usr/bin/env python3
"""conv_stack.onnx: four 3x3 convolutions (64 channels, 40x40) with ReLU and a global
average pool, fixed seed. Compute-bound, so precision=bf16 is clearly faster than fp32 on
CPUs with AVX512_BF16 (the tuner tests' "one clearly faster route"). Needs python3-onnx
and python3-numpy (Debian). Usage: /usr/bin/python3 tests/models/make_conv_stack.py"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    rng = np.random.default_rng(7)
    c, hw, layers = 64, 40, 4
    nodes, inits = [], []
    prev = "image"
    in_c = 3
    for i in range(layers):
        w = (rng.standard_normal((c, in_c, 3, 3)) * np.sqrt(2.0 / (in_c * 9))).astype(np.float32)
        b = (rng.standard_normal(c) * 0.1).astype(np.float32)
        inits += [numpy_helper.from_array(w, f"w{i}"), numpy_helper.from_array(b, f"b{i}")]
        nodes.append(helper.make_node("Conv", [prev, f"w{i}", f"b{i}"], [f"conv{i}"], name=f"conv{i}",
                                      pads=[1, 1, 1, 1], kernel_shape=[3, 3]))
        nodes.append(helper.make_node("Relu", [f"conv{i}"], [f"relu{i}"], name=f"relu{i}"))
        prev, in_c = f"relu{i}", c
    nodes.append(helper.make_node("GlobalAveragePool", [prev], ["features"], name="pool"))
    graph = helper.make_graph(
        nodes, "conv_stack",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, ["batch", 3, hw, hw])],
        [helper.make_tensor_value_info("features", TensorProto.FLOAT, ["batch", c, 1, 1])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="switchyard-tests")
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(HERE, "conv_stack.onnx"))


if __name__ == "__main__":
    main()
