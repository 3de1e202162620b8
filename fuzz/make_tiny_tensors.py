"""Writes small .npy (several dtypes, ranks, format versions) and TensorProto .pb seeds for
the tensor_read fuzz target. Usage: make_tiny_tensors.py OUT_DIR"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
arrays = {
    "f32_2x3": np.arange(6, dtype=np.float32).reshape(2, 3),
    "f64_scalar": np.array(3.5),
    "i64_4": np.array([1, -2, 3, -4], dtype=np.int64),
    "bool_3": np.array([True, False, True]),
    "f16_2x2": np.ones((2, 2), dtype=np.float16),
    "u8_empty": np.zeros((0, 3), dtype=np.uint8),
    "i32_fortran": np.asfortranarray(np.arange(6, dtype=np.int32).reshape(2, 3)),
}
for name, a in arrays.items():
    np.save(os.path.join(out, name + ".npy"), a)
    with open(os.path.join(out, name + ".pb"), "wb") as f:
        f.write(numpy_helper.from_array(a, name).SerializeToString())
# Version 2.0 and 3.0 headers.
with open(os.path.join(out, "v2.npy"), "wb") as f:
    np.lib.format.write_array(f, np.arange(3, dtype=np.float32), version=(2, 0))
with open(os.path.join(out, "v3.npy"), "wb") as f:
    np.lib.format.write_array(f, np.arange(3, dtype=np.float32), version=(3, 0))
# A TensorProto with typed (not raw) data, and one with external data (weights.bin exists
# in the fuzz target's scratch folder).
t = helper.make_tensor("typed", TensorProto.FLOAT, [2, 2], [1.0, 2.0, 3.0, 4.0])
with open(os.path.join(out, "typed.pb"), "wb") as f:
    f.write(t.SerializeToString())
e = TensorProto(name="ext", data_type=TensorProto.FLOAT, dims=[4])
e.data_location = TensorProto.EXTERNAL
for k, v in (("location", "weights.bin"), ("offset", "16"), ("length", "16")):
    kv = e.external_data.add()
    kv.key, kv.value = k, v
with open(os.path.join(out, "external.pb"), "wb") as f:
    f.write(e.SerializeToString())
