#!/usr/bin/env python3
"""PyTorch side of clrt's comparisons (bench/compare.sh): the same work as
clrt-cnn and clrt-bench, timed the same way, on the host CPU or, with
--device cuda, on an NVIDIA GPU (FP32: TF32 off for matrix products and
cuDNN's convolutions; every timed sample ends with torch.cuda.synchronize).

  torch_ref.py [--device cpu|cuda|cuda:N] COMMAND
  torch_ref.py info                       version, threads, oneDNN, BLAS
  torch_ref.py train --model lenet|seed-cnn|resnet18 [options]
  torch_ref.py sgemm --sizes 128,1024      seconds per C = A B (torch.mm)
  torch_ref.py small-op                   seconds per torch.add on 1000 floats
  torch_ref.py logging                    the seed chapter's exercise 3

Every command prints the PyTorch version, thread count and whether oneDNN
is on first, then one `result NAME SECONDS` line per figure (`epoch ...`
lines for train), which compare.py parses.

train reproduces clrt-cnn's run as far as it can: the same model, data
files and normalisation, batch size, optimizer and learning-rate schedule;
with --init FILE (written by `clrt-bench weights`) the same initial
weights, and with --clrt-order the same shuffled batch order (clrt's
splitmix64 Fisher-Yates, seeded as clrt's trainer seeds each epoch), so
both libraries start from the same point and see the same batches. On a
GPU the data set stays in pinned host memory and each batch is gathered
there and copied to the device (as a DataLoader with pin_memory does, and
as clrt's batch stream does), not kept on the device."""
import argparse
import gzip
import os
import statistics
import struct
import time

import numpy as np
import torch
from torch import nn

MASK = (1 << 64) - 1


DEVICE = torch.device("cpu")


def sync():
    """Waits for the device's queued work (nothing to wait for on the CPU)."""
    if DEVICE.type == "cuda":
        torch.cuda.synchronize(DEVICE)


def info_line():
    if DEVICE.type == "cuda":
        return (f"pytorch {torch.__version__} on {torch.cuda.get_device_name(DEVICE)} (CUDA "
                f"{torch.version.cuda}, cuDNN {torch.backends.cudnn.version()}), FP32 with TF32 off, "
                f"{torch.get_num_threads()} host threads")
    return (f"pytorch {torch.__version__}, {torch.get_num_threads()} threads, "
            f"oneDNN {'on' if torch.backends.mkldnn.is_available() and torch.backends.mkldnn.enabled else 'off'}, "
            f"BLAS {'MKL' if torch.backends.mkl.is_available() else 'other'}")


# --- data -----------------------------------------------------------------

def read_idx(path):
    if not os.path.exists(path) and os.path.exists(path + ".gz"):
        path += ".gz"
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    magic, = struct.unpack(">I", data[:4])
    ndim = magic & 0xFF
    dims = struct.unpack(">" + "I" * ndim, data[4:4 + 4 * ndim])
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


def load_fashion(data_dir, train):
    prefix = "train" if train else "t10k"
    x = read_idx(os.path.join(data_dir, f"{prefix}-images-idx3-ubyte"))
    y = read_idx(os.path.join(data_dir, f"{prefix}-labels-idx1-ubyte"))
    # clrt: x / 255 in [0, 1]
    x = torch.from_numpy(x.astype(np.float32) / 255.0).unsqueeze(1)
    return x, torch.from_numpy(y.astype(np.int64))


def load_cifar(data_dir, train):
    names = [f"data_batch_{i}.bin" for i in range(1, 6)] if train else ["test_batch.bin"]
    recs = np.concatenate([np.fromfile(os.path.join(data_dir, n), dtype=np.uint8).reshape(-1, 3073)
                           for n in names])
    # clrt (and the seed notebook): (x / 255 - 0.5) / 0.5 in [-1, 1]
    x = (recs[:, 1:].astype(np.float32) / 255.0 - 0.5) / 0.5
    return torch.from_numpy(x.reshape(-1, 3, 32, 32)), torch.from_numpy(recs[:, 0].astype(np.int64))


# --- clrt's shuffles (runtime/data/shuffle.c, runtime/nn/module.c) ---------

def seed_mix(a, b):
    z = a ^ ((b + 0x9E3779B97F4A7C15 + ((a << 6) & MASK) + (a >> 2)) & MASK)
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def clrt_shuffle(n, seed):
    """clrt_shuffle_indices: Fisher-Yates driven by splitmix64, rejection-sampled."""
    idx = list(range(n))
    state = seed
    for i in range(n - 1, 0, -1):
        bound = i + 1
        threshold = ((1 << 64) - bound) % bound
        while True:
            state = (state + 0x9E3779B97F4A7C15) & MASK
            z = state
            z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
            z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
            z ^= z >> 31
            if z >= threshold:
                break
        j = z % bound
        idx[i], idx[j] = idx[j], idx[i]
    return torch.tensor(idx)


# --- models ---------------------------------------------------------------

def lenet():
    """d2l's LeNet with ReLU and max pooling (clrt_lenet)."""
    return nn.Sequential(
        nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2, 2),
        nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2, 2),
        nn.Flatten(),
        nn.Linear(400, 120), nn.ReLU(),
        nn.Linear(120, 84), nn.ReLU(),
        nn.Linear(84, 10))


def seed_cnn():
    """The seed notebook's CIFAR-10 CNN (clrt_seed_cnn), as one Sequential."""
    return nn.Sequential(
        nn.Conv2d(3, 6, 5), nn.ReLU(), nn.MaxPool2d(2, 2),
        nn.Conv2d(6, 16, 5, padding=3), nn.ReLU(),
        nn.Conv2d(16, 16, 5), nn.ReLU(), nn.MaxPool2d(2, 2),
        nn.Conv2d(16, 16, 3), nn.ReLU(), nn.MaxPool2d(2, 2),
        nn.Flatten(),
        nn.Linear(64, 120), nn.ReLU(),
        nn.Linear(120, 84), nn.ReLU(),
        nn.Linear(84, 10))


class BasicBlock(nn.Module):
    """torchvision's BasicBlock (same attribute names, so state_dicts match)."""

    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                            nn.BatchNorm2d(cout))

    def forward(self, x):
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + (self.downsample(x) if self.downsample is not None else x))


class ResNet18(nn.Module):
    """torchvision's resnet18(num_classes=10) with the small stem for 32x32
    inputs (a 3x3 stride-1 first convolution, no max pooling), under
    torchvision's parameter names; bench/flops.py counts its arithmetic."""

    def __init__(self, classes=10, in_channels=3):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, 64, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU(inplace=True)
        cin, layers = 64, []
        for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
            layers.append(nn.Sequential(BasicBlock(cin, cout, stride), BasicBlock(cout, cout, 1)))
            cin = cout
        self.layer1, self.layer2, self.layer3, self.layer4 = layers
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(512, classes)

    def forward(self, x):
        x = self.relu(self.bn1(self.conv1(x)))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


def load_init(model, path):
    """Parameters written by `clrt-bench weights`: a text header
    ("clrt-params 1 COUNT", then "NAME NDIM D0 D1 ..." per parameter), then
    the float32 values, little-endian, in the same order."""
    with open(path, "rb") as f:
        head = f.readline().split()
        if head[:2] != [b"clrt-params", b"1"]:
            raise SystemExit(f"torch_ref: {path}: not a clrt-params file")
        specs = [f.readline().split() for _ in range(int(head[2]))]
        params = list(model.parameters())
        if len(specs) != len(params):
            raise SystemExit(f"torch_ref: {path} has {len(specs)} parameters, the model {len(params)}")
        for spec, p in zip(specs, params):
            shape = tuple(int(d) for d in spec[2:])
            if shape != tuple(p.shape):
                raise SystemExit(f"torch_ref: {spec[0].decode()} is {shape} in {path}, "
                                 f"{tuple(p.shape)} in the model")
            data = np.frombuffer(f.read(4 * p.numel()), dtype="<f4").reshape(shape)
            with torch.no_grad():
                p.copy_(torch.from_numpy(data.copy()))


# --- commands -------------------------------------------------------------

def to_device(t):
    return t.to(DEVICE, non_blocking=True) if DEVICE.type != "cpu" else t


def accuracy(model, x, y, batch):
    model.eval()
    correct = torch.zeros((), dtype=torch.int64, device=DEVICE)
    with torch.no_grad():
        for i in range(0, len(x), batch):
            out = model(to_device(x[i:i + batch]))
            correct += (out.argmax(1) == to_device(y[i:i + batch])).sum()
    model.train()
    return correct.item() / len(x)


def cmd_train(args):
    torch.manual_seed(args.seed)
    cifar = args.model == "seed-cnn" or (args.model == "resnet18" and args.dataset == "cifar10")
    data_dir = args.data_dir or ("" if cifar else "/usr/share/datasets/fashion-mnist")
    if cifar and not data_dir:
        raise SystemExit(f"torch_ref: {args.model} needs --data-dir (CIFAR-10 binary files)")
    load = load_cifar if cifar else load_fashion
    xtr, ytr = load(data_dir, True)
    xte, yte = load(data_dir, False)
    if args.limit:
        xtr, ytr = xtr[:args.limit], ytr[:args.limit]
    if args.test_limit:
        xte, yte = xte[:args.test_limit], yte[:args.test_limit]
    model = {"lenet": lenet, "seed-cnn": seed_cnn,
             "resnet18": lambda: ResNet18(10, xtr.shape[1])}[args.model]()
    if args.init:
        load_init(model, args.init)
    model.to(DEVICE)
    if args.optimizer == "adam":
        opt = torch.optim.Adam(model.parameters(), lr=args.lr or 0.001,
                               weight_decay=args.weight_decay)
    else:
        opt = torch.optim.SGD(model.parameters(), lr=args.lr or 0.05, momentum=args.momentum,
                              weight_decay=args.weight_decay)
    sched = (torch.optim.lr_scheduler.CosineAnnealingLR(opt, args.epochs)
             if args.schedule == "cosine" else None)
    loss_fn = nn.CrossEntropyLoss()
    print(f"model {args.model}, {args.optimizer}, batch {args.batch_size}, "
          f"init {'from ' + args.init if args.init else 'torch'}, "
          f"order {'clrt' if args.clrt_order else 'torch'}", flush=True)
    for epoch in range(1, args.epochs + 1):
        perm = (clrt_shuffle(len(xtr), seed_mix(args.seed, epoch)) if args.clrt_order
                else torch.randperm(len(xtr)))
        sync()
        total, t0 = torch.zeros((), device=DEVICE), time.perf_counter()
        for i in range(0, len(xtr), args.batch_size):
            idx = perm[i:i + args.batch_size]
            xb, yb = xtr[idx], ytr[idx]
            if args.augment:
                xb = crop_flip(xb, args.augment)
            if DEVICE.type == "cuda":  # gathered on the host, copied from pinned memory
                xb, yb = to_device(xb.pin_memory()), to_device(yb.pin_memory())
            loss = loss_fn(model(xb), yb)
            loss.backward()
            opt.step()
            opt.zero_grad()
            total += loss.detach() * len(idx)
        sync()
        seconds = time.perf_counter() - t0
        if sched:
            sched.step()
        acc = accuracy(model, xte, yte, 1024)
        print(f"epoch {epoch}: train_seconds {seconds:.3f} loss {total.item() / len(xtr):.4f} "
              f"test_acc {acc:.4f}", flush=True)


def crop_flip(x, pad):
    """The usual CIFAR augmentation (torchvision's RandomCrop(size,
    padding=pad) and RandomHorizontalFlip() per image): a random crop of the
    zero-padded image, flipped with probability 1/2, drawn from torch's
    generator (so not clrt's draws: the same recipe, not the same images)."""
    n, _, h, w = x.shape
    padded = nn.functional.pad(x, (pad, pad, pad, pad))
    dy = torch.randint(0, 2 * pad + 1, (n,)).tolist()
    dx = torch.randint(0, 2 * pad + 1, (n,)).tolist()
    flip = torch.rand(n).lt(0.5).tolist()
    out = torch.stack([padded[i, :, dy[i]:dy[i] + h, dx[i]:dx[i] + w] for i in range(n)])
    return torch.where(torch.tensor(flip).view(n, 1, 1, 1), out.flip(3), out)


def timed(fn, calls, reps):
    """Median seconds per call over reps samples of `calls` calls each
    (each sample ends when the device has finished them)."""
    fn()
    sync()
    samples = []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        sync()
        samples.append((time.perf_counter() - t0) / calls)
    return statistics.median(samples)


def cmd_sgemm(args):
    for n in (int(s) for s in args.sizes.split(",")):
        a, b = torch.rand(n, n, device=DEVICE), torch.rand(n, n, device=DEVICE)
        c = torch.empty(n, n, device=DEVICE)
        # clrt-bench matmul's sample sizes: several calls per sample below 512
        calls = 1 if n >= 512 else int(1 + (256 / n) ** 3)
        reps = 30 if n <= 128 else 10 if n <= 512 else 5 if n <= 1024 else 3
        s = timed(lambda: torch.mm(a, b, out=c), calls, reps)
        print(f"result sgemm_{n} {s:.9f}  ({2 * n ** 3 / s * 1e-9:.1f} GFLOP/s)")


def cmd_small_op(args):
    a = torch.arange(args.n, dtype=torch.float32, device=DEVICE)
    s = timed(lambda: torch.add(a, a), args.iters, args.repeats)
    print(f"result add_{args.n} {s:.9f}  (torch.add, new output per call)")


def cmd_logging(args):
    """Exercise 3: `steps` products of n x n matrices, logging the Frobenius
    norm of each (a) read to the host per step, (b) kept as tensors and read
    once at the end."""
    x = torch.rand(args.n, args.n, device=DEVICE)

    def per_step():
        return [torch.linalg.norm(torch.mm(x, x)).item() for _ in range(args.steps)]

    def at_end():
        return torch.stack([torch.linalg.norm(torch.mm(x, x)) for _ in range(args.steps)]).tolist()

    a = timed(per_step, 1, args.repeats)
    b = timed(at_end, 1, args.repeats)
    print(f"result logging_per_step {a:.6f}")
    print(f"result logging_at_end {b:.6f}")
    print(f"per step / at end: {a / b:.2f}")


class GPT(nn.Module):
    """clrt_gpt's module (clrt/nn.h)."""

    def __init__(s, V, block, d, h, L, ff):
        super().__init__()
        s.tok_emb = nn.Embedding(V, d)
        s.pos_emb = nn.Embedding(block, d)
        layer = nn.TransformerEncoderLayer(d, h, ff, dropout=0.0, activation="gelu",
                                           batch_first=True, norm_first=True)
        s.encoder = nn.TransformerEncoder(layer, L, enable_nested_tensor=False)
        s.norm = nn.LayerNorm(d)
        s.head = nn.Linear(d, V, bias=False)

    def forward(s, idx):
        x = s.tok_emb(idx) + s.pos_emb(torch.arange(idx.shape[1], device=idx.device))
        m = nn.Transformer.generate_square_subsequent_mask(idx.shape[1], device=idx.device)
        return s.head(s.norm(s.encoder(x, mask=m, is_causal=True)))


def cmd_gpt(args):
    """clrt-bench gpt's steps: the same module, ids, loss and AdamW."""
    V, T, B = args.vocab, args.block, args.batch
    model = GPT(V, T, args.d_model, args.heads, args.layers, args.dim_ff).to(DEVICE)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, betas=(0.9, 0.95), eps=1e-8,
                            weight_decay=0.1)
    b = torch.arange(B).view(B, 1)
    x = ((131 * b + 31 * torch.arange(T) + 7) % V).to(DEVICE)
    y = ((131 * b + 31 * (torch.arange(T) + 1) + 7) % V).to(DEVICE)

    def step():
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x).reshape(-1, V), y.reshape(-1))
        loss.backward()
        opt.step()

    s = timed(step, args.steps, 1)
    print(f"result gpt_step {s:.6f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, default=2, help="torch.set_num_threads (default 2)")
    ap.add_argument("--device", default="cpu", help="cpu (default), cuda or cuda:N")
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("info")
    t = sub.add_parser("train")
    t.add_argument("--model", choices=["lenet", "seed-cnn", "resnet18"], default="lenet")
    t.add_argument("--data-dir")
    t.add_argument("--epochs", type=int, default=1)
    t.add_argument("--batch-size", type=int, default=256)
    t.add_argument("--optimizer", choices=["sgd", "adam"], default="sgd")
    t.add_argument("--lr", type=float, default=0.0, help="default 0.05 sgd, 0.001 adam (clrt-cnn's)")
    t.add_argument("--momentum", type=float, default=0.9)
    t.add_argument("--weight-decay", type=float, default=0.0)
    t.add_argument("--augment", type=int, default=0, metavar="PAD",
                   help="random crops from PAD-pixel zero padding and flips (clrt-cnn's 4)")
    t.add_argument("--dataset", choices=["cifar10", "fashion-mnist"], default="cifar10",
                   help="resnet18's data (lenet: Fashion-MNIST, seed-cnn: CIFAR-10)")
    t.add_argument("--test-limit", type=int, default=0, help="first N test images")
    t.add_argument("--schedule", choices=["cosine", "constant"], default="cosine")
    t.add_argument("--seed", type=int, default=1)
    t.add_argument("--limit", type=int, default=0, help="first N training images")
    t.add_argument("--init", help="initial parameters from `clrt-bench weights`")
    t.add_argument("--clrt-order", action="store_true", help="clrt's shuffled batch order")
    g = sub.add_parser("sgemm")
    g.add_argument("--sizes", default="128,1024")
    s = sub.add_parser("small-op")
    s.add_argument("--n", type=int, default=1000)
    s.add_argument("--iters", type=int, default=2000)
    s.add_argument("--repeats", type=int, default=9)
    lg = sub.add_parser("logging")
    lg.add_argument("--steps", type=int, default=1000)
    lg.add_argument("--n", type=int, default=100)
    lg.add_argument("--repeats", type=int, default=5)
    gp = sub.add_parser("gpt")
    for name, value in [("vocab", 96), ("block", 128), ("d-model", 128), ("heads", 4),
                        ("layers", 4), ("dim-ff", 512), ("batch", 16), ("steps", 10)]:
        gp.add_argument(f"--{name}", type=int, default=value)
    args = ap.parse_args()
    global DEVICE
    DEVICE = torch.device(args.device)
    if DEVICE.type == "cuda":  # FP32 throughout, as clrt computes
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    torch.set_num_threads(args.threads)
    print(info_line(), flush=True)
    {"info": lambda a: None, "train": cmd_train, "sgemm": cmd_sgemm,
     "small-op": cmd_small_op, "logging": cmd_logging, "gpt": cmd_gpt}[args.cmd](args)


if __name__ == "__main__":
    main()
