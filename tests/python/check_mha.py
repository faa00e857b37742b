"""clrt_multihead_attention against torch.nn.MultiheadAttention(8, 2,
batch_first=True) in float64: its initial state loads strictly into
PyTorch's module (state names), and with the causal mask and without, the
output and the gradients of x and of every parameter (clrt_backward of
sum(y * r)) agree within 1e-5 norm-wise. Run on the default paths and
with the GPU's forced (CLRT_GEMM=clblast CLRT_CONV_ALGO=im2col).
   python check_mha.py MHA_TOOL WORK_DIR
"""
import os
import subprocess
import sys

import numpy as np
import torch
from safetensors.torch import load_file

B, T, E, H = 2, 5, 8, 2
TOL = 1e-5
tool, work = sys.argv[1], sys.argv[2]


def load(d, name):
    a = np.fromfile(os.path.join(d, name + ".bin"), np.float32)
    return torch.from_numpy(a).double()


def rel(a, b):
    return (a - b).norm().item() / max(b.norm().item(), 1e-30)


def check(d, label):
    mha = torch.nn.MultiheadAttention(E, H, batch_first=True, dtype=torch.float64)
    state = load_file(os.path.join(d, "state.safetensors"))
    mha.load_state_dict({k: v.double() for k, v in state.items()}, strict=True)
    bias = mha.out_proj.bias.detach()
    assert torch.all(mha.in_proj_bias == 0) and torch.all(bias == 0), "biases not zero at init"
    r = load(d, "r").reshape(B, T, E)
    causal = torch.triu(torch.ones(T, T, dtype=torch.bool), 1)
    for run, mask in [("causal.", causal), ("full.", None)]:
        mha.zero_grad()
        x = load(d, "x").reshape(B, T, E).requires_grad_()
        y, _ = mha(x, x, x, attn_mask=mask, need_weights=False)
        (y * r).sum().backward()
        got = {"y": y.detach(), "x.grad": x.grad}
        got.update({k + ".grad": p.grad for k, p in mha.named_parameters()})
        for name, want in got.items():
            e = rel(load(d, run + name).reshape(want.shape), want)
            print(f"{label} {run}{name}: {e:.2e}")
            assert e <= TOL, f"{label} {run}{name}: off by {e:.3g} (bound {TOL})"


for label, env in [("default", {}), ("gpu-paths", {"CLRT_GEMM": "clblast", "CLRT_CONV_ALGO": "im2col"})]:
    d = os.path.join(work, label)
    os.makedirs(d, exist_ok=True)
    seed = int.from_bytes(os.urandom(3), "little")
    print(f"{label}: seed {seed}")
    subprocess.run([tool, d, str(seed)], check=True, env={**os.environ, **env})
    check(d, label)
print("MultiheadAttention matches PyTorch")
