"""The causal self-attention block of tests/install/consumer/attention.c (a
program written against clrt's public names only), one autograd step,
against PyTorch in float64: the loss within 1e-5 and every leaf's gradient
within 1e-4 (norm-wise relative), and a second forward and backward
accumulating to twice the gradients. Run twice: on the default paths, and
with the GPU's paths forced (CLRT_GEMM=clblast CLRT_CONV_ALGO=im2col).
   python check_attention.py ATTENTION WORK_DIR
"""
import math
import os
import subprocess
import sys

import numpy as np
import torch
import torch.nn.functional as F

B, T, D, V = 2, 5, 8, 11
tool, work = sys.argv[1], sys.argv[2]
SHAPES = {"emb": (V, D), "ln_w": (D,), "ln_b": (D,), "qk.weight": (2 * D, D), "qk.bias": (2 * D,),
          "v.weight": (D, D), "v.bias": (D,), "mix.weight": (D, 2 * D), "mix.bias": (D,),
          "ff.weight": (D, D), "ff.bias": (D,), "head.weight": (V, D), "head.bias": (V,)}


def load(d, name, dtype=np.float32, shape=None):
    a = np.fromfile(os.path.join(d, name + ".bin"), dtype)
    return torch.from_numpy(a.reshape(shape) if shape else a)


def reference(d):
    p = {k: load(d, k, shape=s).double().requires_grad_() for k, s in SHAPES.items()}
    ids = load(d, "ids", np.int32, (B, T)).long()
    targets = load(d, "targets", np.int32, (B, T)).long()
    lin = lambda x, n: F.linear(x, p[n + ".weight"], p[n + ".bias"])
    x = F.embedding(ids, p["emb"])
    h = F.layer_norm(x, (D,), p["ln_w"], p["ln_b"], 1e-5)
    qk = lin(h, "qk")
    q, k = qk.narrow(-1, 0, D), qk.narrow(-1, D, D)
    v = lin(h, "v")
    future = torch.triu(torch.ones(T, T, dtype=torch.bool), 1)
    s = (q @ k.transpose(-2, -1)) / math.sqrt(D)
    a = torch.softmax(s.masked_fill(future, float("-inf")), -1)
    o = torch.cat([a @ v, x], -1)
    z = lin(F.gelu(lin(lin(o, "mix"), "ff")), "ff")
    logits = lin(z, "head")
    loss = F.cross_entropy(logits.reshape(B * T, V), targets.reshape(-1)) \
        - 0.1 * F.log_softmax(logits, -1).mean()
    loss.backward()
    return loss.item(), {k: t.grad for k, t in p.items()}


def rel(a, b):
    return (a - b).norm().item() / max(b.norm().item(), 1e-30)


for name, env in [("default", {}), ("gpu-paths", {"CLRT_GEMM": "clblast", "CLRT_CONV_ALGO": "im2col"})]:
    d = os.path.join(work, name)
    os.makedirs(d, exist_ok=True)
    seed = int.from_bytes(os.urandom(3), "little")
    subprocess.run([tool, d, str(seed)], check=True, env={**os.environ, **env})
    loss, grads = reference(d)
    got = load(d, "loss").double().item()
    assert abs(got - loss) <= 1e-5 * max(1.0, abs(loss)), f"{name}: loss {got} vs {loss}"
    worst = 0.0
    for k, s in SHAPES.items():
        g1 = load(d, k + ".grad", shape=s).double()
        g2 = load(d, k + ".grad2", shape=s).double()
        e = rel(g1, grads[k])
        assert e <= 1e-4, f"{name} (seed {seed}): {k}'s gradient off by {e:.3g}"
        e2 = rel(g2, 2 * grads[k])
        assert e2 <= 1e-4, f"{name}: {k} after a second backward off by {e2:.3g} (not accumulated)"
        worst = max(worst, e, e2)
    print(f"{name} (seed {seed}): loss {got:.6f} vs {loss:.6f}, gradients within {worst:.2g}")
print("attention: ok")
