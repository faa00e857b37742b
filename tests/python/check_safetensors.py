"""clrt checkpoints against PyTorch, through safetensors' own reader/writer.

1. clrt saves a LeNet (from cpu:1); PyTorch loads it with load_file +
   load_state_dict(strict=True); every parameter is bit-identical to the raw
   bytes clrt dumped.
2. PyTorch changes the parameters and saves them with save_file; clrt loads
   that file (on cpu), computes logits on a random batch and saves again.
   The logits match PyTorch's float64 forward pass, and the file clrt wrote
   back is bit-identical to PyTorch's parameters.
   python check_safetensors.py CKPT_TOOL WORK_DIR
"""
import os
import subprocess
import sys

import numpy as np
import torch
from safetensors.torch import load_file, save_file

tool, work = sys.argv[1], sys.argv[2]
os.makedirs(work, exist_ok=True)
seed = int.from_bytes(os.urandom(6), "little")
print(f"seed {seed}")
torch.manual_seed(seed)
path = {k: os.path.join(work, k) for k in ("a.safetensors", "a.raw", "b.safetensors",
                                            "x.bin", "logits.bin", "c.safetensors")}


def lenet():
    nn = torch.nn
    return nn.Sequential(nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                         nn.Linear(400, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(),
                         nn.Linear(84, 10))


def bits(t):
    return t.detach().contiguous().view(torch.int32)


def run(*args):
    subprocess.run([tool, *map(str, args)], check=True)


# 1. clrt -> PyTorch
run("save", "cpu:1", path["a.safetensors"], seed, path["a.raw"])
model = lenet()
state = load_file(path["a.safetensors"])
model.load_state_dict(state, strict=True)
raw = np.fromfile(path["a.raw"], dtype=np.int32)
at = 0
for name, p in model.state_dict().items():
    n = p.numel()
    assert torch.equal(bits(p).flatten(), torch.from_numpy(raw[at:at + n])), name
    at += n
assert at == raw.size, (at, raw.size)
print(f"clrt -> PyTorch: {len(state)} tensors, {at} parameters bit-identical")

# 2. PyTorch -> clrt
with torch.no_grad():
    for p in model.parameters():
        p.mul_(torch.empty_like(p).uniform_(0.5, 1.5))
save_file({k: v.contiguous() for k, v in model.state_dict().items()}, path["b.safetensors"],
          metadata={"format": "pt"})
n = 9
x = torch.randn(n, 1, 28, 28)
x.numpy().astype("<f4").tofile(path["x.bin"])
run("forward", "cpu", path["b.safetensors"], path["x.bin"], n, path["logits.bin"],
    path["c.safetensors"])
got = torch.from_numpy(np.fromfile(path["logits.bin"], dtype="<f4").reshape(n, 10)).double()
with torch.no_grad():
    ref = model.double()(x.double())
    model.float()
err = ((got - ref).abs().max() / ref.abs().max()).item()
print(f"PyTorch -> clrt: logits of {n} images, max error {err:.2e} relative to max |logit|")
assert err < 1e-5, err
back = load_file(path["c.safetensors"])
assert set(back) == set(model.state_dict()), sorted(back)
for name, p in model.state_dict().items():
    assert torch.equal(bits(back[name]), bits(p)), name
print(f"PyTorch -> clrt -> file: {len(back)} tensors bit-identical")
