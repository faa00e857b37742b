"""clrt_multihead_attention and clrt_transformer_encoder_layer (post-norm
with ReLU, pre-norm with GELU) against torch.nn.MultiheadAttention(8, 2,
batch_first=True) and nn.TransformerEncoderLayer(8, 2, 12, dropout=0,
batch_first=True) in float64: each initial state loads strictly into
PyTorch's module (state names), and with the causal mask and without, the
output and the gradients of x and of every parameter (clrt_backward of
sum(y * r)) agree within 1e-5 norm-wise. Run on the default paths (the fused
attention), with the GPU's forced (CLRT_GEMM=clblast CLRT_KERNEL_STYLE=gpu)
and with the attention composed of ops (CLRT_ATTENTION=composed).
   python check_transformer.py TRANSFORMER_TOOL WORK_DIR
"""
import os
import subprocess
import sys

import numpy as np
import torch
import torch.nn as nn
from safetensors.torch import load_file

B, T, E, H, FF = 2, 5, 8, 2, 12
TOL = 1e-5
tool, work = sys.argv[1], sys.argv[2]


def load(d, name):
    a = np.fromfile(os.path.join(d, name + ".bin"), np.float32)
    return torch.from_numpy(a).double()


def rel(a, b):
    return (a - b).norm().item() / max(b.norm().item(), 1e-30)


def modules():
    mha = nn.MultiheadAttention(E, H, batch_first=True, dtype=torch.float64)
    yield "mha", mha, lambda x, mask: mha(x, x, x, attn_mask=mask, need_weights=False)[0]
    for label, act, first in [("post_relu", "relu", False), ("pre_gelu", "gelu", True)]:
        layer = nn.TransformerEncoderLayer(E, H, FF, dropout=0.0, activation=act,
                                           batch_first=True, norm_first=first,
                                           dtype=torch.float64)
        yield label, layer, lambda x, mask, layer=layer: layer(x, src_mask=mask,
                                                               is_causal=mask is not None)


def check(d, label):
    r = load(d, "r").reshape(B, T, E)
    causal = torch.triu(torch.ones(T, T, dtype=torch.bool), 1)
    for name, module, call in modules():
        state = load_file(os.path.join(d, name + ".state.safetensors"))
        module.load_state_dict({k: v.double() for k, v in state.items()}, strict=True)
        for run, mask in [("causal.", causal), ("full.", None)]:
            module.zero_grad()
            x = load(d, "x").reshape(B, T, E).requires_grad_()
            y = call(x, mask)
            (y * r).sum().backward()
            got = {"y": y.detach(), "x.grad": x.grad}
            got.update({k + ".grad": p.grad for k, p in module.named_parameters()})
            for what, want in got.items():
                e = rel(load(d, f"{name}.{run}{what}").reshape(want.shape), want)
                print(f"{label} {name}.{run}{what}: {e:.2e}")
                assert e <= TOL, f"{label} {name}.{run}{what}: off by {e:.3g} (bound {TOL})"


RUNS = [("default", {}), ("gpu-paths", {"CLRT_GEMM": "clblast", "CLRT_KERNEL_STYLE": "gpu"}),
        ("composed-attention", {"CLRT_ATTENTION": "composed"})]
for label, env in RUNS:
    d = os.path.join(work, label)
    os.makedirs(d, exist_ok=True)
    seed = int.from_bytes(os.urandom(3), "little")
    print(f"{label}: seed {seed}")
    subprocess.run([tool, d, str(seed)], check=True, env={**os.environ, **env})
    check(d, label)
print("MultiheadAttention and TransformerEncoderLayer match PyTorch")
