"""clrt's ResNet-18 against torchvision's own model.

1. clrt initialises a ResNet-18 and saves it; torchvision's resnet18 (the
   small stem: conv1 a 3x3 stride-1 convolution, maxpool nn.Identity())
   loads it with load_state_dict(strict=True).
2. One training step on a random batch: clrt's logits and the updated
   running statistics (and num_batches_tracked) against torchvision's in
   float64, from the same state; its input and parameter gradients held to
   what torchvision's float32 reaches against its float64 on that step.
3. The reverse: PyTorch saves its own initialisation (safetensors.torch),
   clrt loads it strictly and its evaluation-mode logits match PyTorch's.
4. The ImageNet stem (torchvision's resnet18 exactly) loads both ways, and
   its evaluation logits on a 64x64 batch match.
   python check_resnet.py RESNET_TOOL WORK_DIR
"""
import os
import subprocess
import sys

import numpy as np
import torch
import torchvision
from safetensors.torch import load_file, save_file

tool, work = sys.argv[1], sys.argv[2]
os.makedirs(work, exist_ok=True)
seed = int.from_bytes(os.urandom(6), "little")
print(f"seed {seed}")
torch.manual_seed(seed)
rng = np.random.default_rng(seed)


def p(name):
    return os.path.join(work, name)


def run(*args):
    subprocess.run([tool, *map(str, args)], check=True)


def model(stem):
    m = torchvision.models.resnet18(num_classes=10)
    if stem == "small":
        m.conv1 = torch.nn.Conv2d(3, 64, 3, 1, 1, bias=False)
        m.maxpool = torch.nn.Identity()
    return m


def rel(a, b):
    a, b = np.asarray(a, np.float64).ravel(), np.asarray(b, np.float64).ravel()
    assert a.shape == b.shape, (a.shape, b.shape)
    assert np.all(np.isfinite(a)), "clrt's values are not all finite"
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-30))


def check(what, got, want, bound):
    err = rel(got, want)
    print(f"{what}: rel err {err:.3g} (bound {bound})")
    assert err <= bound, f"{what}: rel err {err:.3g} > {bound}"


# 1. clrt -> torchvision, strictly
run("init", "small", seed % 1000000, p("a.safetensors"))
state = load_file(p("a.safetensors"))
ref = model("small")
ref.load_state_dict(state, strict=True)
assert state["bn1.num_batches_tracked"].dtype == torch.int64
assert state["layer2.0.downsample.1.running_var"].shape == (128,)

# 2. one training step in float64 from the same state. The gradients flow
# through ReLU kinks, where float32 and float64 now and then take different
# sides of zero, and BatchNorm's backward spreads such a flip over a whole
# channel: PyTorch's own float32 is off its float64 by up to a few percent
# norm-wise on some batches (seen here: 1e-6 usually, up to 0.033; clrt the
# same). So each gradient tensor is held to 0.1 norm-wise, which a wrong
# formula, a missing term or a miswired layer (errors near 1) still fails,
# and PyTorch float32's error is printed beside clrt's.
n, hw = 4, 32
x = rng.standard_normal((n, 3, hw, hw)).astype(np.float32)
g = rng.standard_normal((n, 10)).astype(np.float32)
x.tofile(p("x.bin"))
g.tofile(p("g.bin"))
run("step", "small", p("a.safetensors"), p("x.bin"), n, hw, p("g.bin"), p("out.bin"),
    p("grads.safetensors"), p("after.safetensors"))


def torch_step(dtype):
    m = model("small").to(dtype)
    m.load_state_dict(state, strict=True)
    m.train()
    xt = torch.from_numpy(x).to(dtype).requires_grad_(True)
    logits = m(xt)
    logits.backward(torch.from_numpy(g).to(dtype))
    return m, logits.detach().numpy(), xt.grad.numpy()


def norm_err(got, want):
    got, want = np.asarray(got, np.float64).ravel(), np.asarray(want, np.float64).ravel()
    assert np.all(np.isfinite(got)), "not all finite"
    return float(np.linalg.norm(got - want) / max(np.linalg.norm(want), 1e-30))


def check_like_torch(what, got, t32, t64, bound=0.1):
    mine, theirs = norm_err(got, t64), norm_err(t32, t64)
    print(f"{what}: norm-wise rel err {mine:.3g} (PyTorch float32's {theirs:.3g}, bound {bound})")
    assert mine <= bound, f"{what}: norm-wise rel err {mine:.3g} > {bound}"


ref64, logits64, gx64 = torch_step(torch.float64)
ref32, _, gx32 = torch_step(torch.float32)
out = np.fromfile(p("out.bin"), dtype=np.float32)
check("logits", out[: n * 10], logits64, 1e-4)
check_like_torch("input gradient", out[n * 10:], gx32, gx64)
grads = load_file(p("grads.safetensors"))
p32 = dict(ref32.named_parameters())
for k, prm in ref64.named_parameters():
    check_like_torch(f"grad {k}", grads[k].numpy(), p32[k].grad.numpy(), prm.grad.numpy())
after = load_file(p("after.safetensors"))
for k, buf in ref64.named_buffers():
    if k.endswith("num_batches_tracked"):
        assert int(after[k]) == int(buf) == 1, (k, int(after[k]))
worst = max(rel(after[k].numpy(), b.numpy()) for k, b in ref64.named_buffers()
            if not k.endswith("num_batches_tracked"))
print(f"running statistics: worst rel err {worst:.3g} (bound 5e-4)")
assert worst <= 5e-4

# 3. PyTorch -> clrt: its own initialisation, evaluation logits
mine = model("small")
save_file({k: v.contiguous() for k, v in mine.state_dict().items()}, p("b.safetensors"))
run("eval", "small", p("b.safetensors"), p("x.bin"), n, hw, p("eval.bin"))
with torch.no_grad():
    want = mine.double().eval()(torch.from_numpy(x).double())
check("evaluation logits (PyTorch's state)", np.fromfile(p("eval.bin"), np.float32),
      want.numpy(), 1e-4)

# 4. the ImageNet stem: torchvision's resnet18 exactly, both ways
run("init", "imagenet", 7, p("c.safetensors"))
big = model("imagenet")
big.load_state_dict(load_file(p("c.safetensors")), strict=True)
save_file({k: v.contiguous() for k, v in big.state_dict().items()}, p("d.safetensors"))
xi = rng.standard_normal((2, 3, 64, 64)).astype(np.float32)
xi.tofile(p("xi.bin"))
run("eval", "imagenet", p("d.safetensors"), p("xi.bin"), 2, 64, p("evali.bin"))
with torch.no_grad():
    want = big.double().eval()(torch.from_numpy(xi).double())
check("ImageNet stem evaluation logits", np.fromfile(p("evali.bin"), np.float32), want.numpy(),
      1e-4)
print("ok")
