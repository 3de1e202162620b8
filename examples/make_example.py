#!/usr/bin/python3
"""Generates examples/tiny_cnn/{model.onnx,input.npy}: a small residual CNN exported by
the PyTorch exporter with a dynamic batch dimension (random weights, fixed seed)."""
import os
import numpy as np
import torch
import torch.nn as nn

class TinyCnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU())
        self.block = nn.Sequential(nn.Conv2d(16, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU(),
                                   nn.Conv2d(16, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16))
        self.down = nn.Sequential(nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.ReLU(), nn.MaxPool2d(2))
        self.head = nn.Linear(32, 10)

    def forward(self, x):
        x = self.stem(x)
        x = torch.relu(x + self.block(x))
        x = self.down(x)
        x = x.mean(dim=(2, 3))
        return torch.softmax(self.head(x), dim=1)

def main():
    torch.manual_seed(0)
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tiny_cnn")
    os.makedirs(here, exist_ok=True)
    m = TinyCnn().eval()
    for mod in m.modules():  # non-trivial BN statistics
        if isinstance(mod, nn.BatchNorm2d):
            mod.running_mean.uniform_(-0.2, 0.2); mod.running_var.uniform_(0.5, 1.5)
    x = torch.rand(1, 3, 32, 32)
    torch.onnx.export(m, x, os.path.join(here, "model.onnx"), opset_version=13,
                      input_names=["input"], output_names=["probabilities"],
                      dynamic_axes={"input": {0: "batch"}, "probabilities": {0: "batch"}})
    np.save(os.path.join(here, "input.npy"), x.numpy())
    np.save(os.path.join(here, "expected_probabilities.npy"), m(x).detach().numpy())
    write_tuning_data(here)


def write_tuning_data(here):
    """Two evaluation sets for `switchyard tune --data examples/tiny_cnn/data` (one
    subfolder per set; batch 1 and batch 2), fixed seed."""
    rng = np.random.default_rng(11)
    for name, batch in (("set1", 1), ("set2", 2)):
        d = os.path.join(here, "data", name)
        os.makedirs(d, exist_ok=True)
        np.save(os.path.join(d, "input.npy"), rng.random((batch, 3, 32, 32), dtype=np.float32))

if __name__ == "__main__":
    main()
