"""Writes tiny ONNX models (one to a few nodes each) as fuzz seeds for onnx_import and,
built into engines, for engine_load. Small seeds keep the fuzzer fast; each covers a
different part of the importer (initializers, symbolic dims, external data, attributes,
shape-valued inputs, opset-dependent ops). Usage: make_tiny_models.py OUT_DIR"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
F = TensorProto.FLOAT


def save(name, nodes, inputs, outputs, inits=(), opset=17):
    g = helper.make_graph(nodes, name, inputs, outputs, list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)],
                          producer_name="switchyard-fuzz-seed")
    m.ir_version = 8
    onnx.save(m, os.path.join(out, "tiny_%s.onnx" % name))


def vi(name, shape, t=F):
    return helper.make_tensor_value_info(name, t, shape)


w = lambda name, shape: numpy_helper.from_array(
    (np.arange(np.prod(shape), dtype=np.float32) % 7 - 3).reshape(shape) / 4, name)

save("relu", [helper.make_node("Relu", ["x"], ["y"])], [vi("x", ["N", 4])], [vi("y", ["N", 4])])
save("conv_relu",
     [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1], strides=[1, 1]),
      helper.make_node("Relu", ["c"], ["y"])],
     [vi("x", [1, 2, 5, 5])], [vi("y", [1, 3, 5, 5])], [w("w", [3, 2, 3, 3]), w("b", [3])])
save("matmul_add",
     [helper.make_node("MatMul", ["x", "w"], ["m"]), helper.make_node("Add", ["m", "b"], ["y"])],
     [vi("x", ["B", 3, 4])], [vi("y", ["B", 3, 2])], [w("w", [4, 2]), w("b", [2])])
save("gemm", [helper.make_node("Gemm", ["x", "w", "b"], ["y"], transB=1, alpha=0.5)],
     [vi("x", [2, 4])], [vi("y", [2, 3])], [w("w", [3, 4]), w("b", [3])], opset=13)
save("reshape_softmax",
     [helper.make_node("Reshape", ["x", "s"], ["r"]),
      helper.make_node("Softmax", ["r"], ["y"], axis=-1)],
     [vi("x", [2, 6])], [vi("y", [3, 4])],
     [numpy_helper.from_array(np.array([3, -1], dtype=np.int64), "s")])
save("slice_concat",
     [helper.make_node("Slice", ["x", "st", "en", "ax"], ["s"]),
      helper.make_node("Concat", ["s", "s"], ["y"], axis=1)],
     [vi("x", [2, 8])], [vi("y", [2, 6])],
     [numpy_helper.from_array(np.array([1], dtype=np.int64), "st"),
      numpy_helper.from_array(np.array([4], dtype=np.int64), "en"),
      numpy_helper.from_array(np.array([1], dtype=np.int64), "ax")])
save("layernorm",
     [helper.make_node("LayerNormalization", ["x", "g", "b"], ["y"], axis=-1, epsilon=1e-5)],
     [vi("x", [2, 4])], [vi("y", [2, 4])], [w("g", [4]), w("b", [4])])
save("pool_shape",
     [helper.make_node("MaxPool", ["x"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
      helper.make_node("GlobalAveragePool", ["p"], ["y"])],
     [vi("x", [1, 2, 4, "W"])], [vi("y", [1, 2, 1, 1])])
save("constant_of_shape",
     [helper.make_node("Shape", ["x"], ["s"]),
      helper.make_node("ConstantOfShape", ["s"], ["c"],
                       value=numpy_helper.from_array(np.array([1.5], dtype=np.float32))),
      helper.make_node("Mul", ["x", "c"], ["y"])],
     [vi("x", [2, 3])], [vi("y", [2, 3])])
# External data: 16 bytes at offset 0 of weights.bin (the fuzz targets' scratch folder
# holds a 64-byte weights.bin).
ext = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[4])
ext.data_location = TensorProto.EXTERNAL
for k, v in (("location", "weights.bin"), ("offset", "0"), ("length", "16")):
    e = ext.external_data.add()
    e.key, e.value = k, v
g = helper.make_graph([helper.make_node("Add", ["x", "w"], ["y"])], "external",
                      [vi("x", [4])], [vi("y", [4])], [ext])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
m.ir_version = 8
with open(os.path.join(out, "external_data.onnx"), "wb") as f:
    f.write(m.SerializeToString())
