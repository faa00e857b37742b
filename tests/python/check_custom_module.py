"""A module written outside the library (tests/python/custom_tool.c) trains
with clrt_train, with the default cross-entropy and with a loss callback of
recorded ops, and its state loads into the PyTorch module with the same
attributes (load_state_dict(strict=True)), whose float64 forward gives the
trained net's outputs. Each way, the loss must fall to below half of the
first epoch's, and the trained state must differ from the initial one.
   python check_custom_module.py CUSTOM_TOOL WORK_DIR
"""
import os
import re
import subprocess
import sys

import numpy as np
import torch
from safetensors.torch import load_file

tool, work = sys.argv[1], sys.argv[2]
seed = int.from_bytes(os.urandom(4), "little")
print(f"seed {seed}")


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(4, 16)
        self.scale = torch.nn.Parameter(torch.ones(16))
        self.fc2 = torch.nn.Linear(16, 3)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x) * self.scale))


for way in ("default", "callback"):
    d = os.path.join(work, way)
    os.makedirs(d, exist_ok=True)
    out = subprocess.run([tool, "cpu", d, str(seed), way], check=True, capture_output=True,
                         text=True).stdout
    losses = [float(v) for v in re.findall(r"loss ([0-9.eE+-]+)", out)]
    assert len(losses) == 40, out
    assert losses[-1] < 0.5 * losses[0], f"{way}: loss {losses[0]} -> {losses[-1]}"
    net = Net().double()
    state = load_file(os.path.join(d, "trained.safetensors"))
    assert list(state) == list(net.state_dict()), (list(state), list(net.state_dict()))
    net.load_state_dict({k: v.double() for k, v in state.items()}, strict=True)
    init = load_file(os.path.join(d, "init.safetensors"))
    assert any(not torch.equal(init[k], state[k]) for k in state), "nothing trained"
    x = torch.from_numpy(np.fromfile(os.path.join(d, "x.bin"), np.float32).reshape(64, 4))
    y = np.fromfile(os.path.join(d, "y.bin"), np.float32).reshape(64, 3)
    with torch.no_grad():
        ref = net(x.double()).numpy()
    err = np.abs(y - ref).max() / np.abs(ref).max()
    assert err < 1e-5, f"{way}: outputs differ from PyTorch's by {err:.3g}"
    print(f"{way}: loss {losses[0]:.4f} -> {losses[-1]:.4f}, outputs within {err:.2g}")
print("custom module: ok")
