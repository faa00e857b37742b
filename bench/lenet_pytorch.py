#!/usr/bin/env python3
"""PyTorch reference for clrt-cnn: the same LeNet (ReLU, max pooling), data,
batch size and optimizer on the host CPU. Prints one line per epoch with the
training-pass seconds, so bench/compare_lenet.sh can put it beside clrt.

Needs torch (Debian's python3-torch, or pip). Reads Fashion-MNIST from
Debian's dataset-fashion-mnist folder (IDX, gzipped), normalised to [0, 1]
like clrt's loader."""
import argparse
import gzip
import os
import struct
import time

import numpy as np
import torch
from torch import nn


def read_idx(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    magic, = struct.unpack(">I", data[:4])
    ndim = magic & 0xFF
    dims = struct.unpack(">" + "I" * ndim, data[4:4 + 4 * ndim])
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


def load(data_dir, split):
    prefix = "train" if split == "train" else "t10k"
    x = read_idx(os.path.join(data_dir, f"{prefix}-images-idx3-ubyte.gz"))
    y = read_idx(os.path.join(data_dir, f"{prefix}-labels-idx1-ubyte.gz"))
    x = torch.from_numpy(x.astype(np.float32) / 255.0).unsqueeze(1)
    return x, torch.from_numpy(y.astype(np.int64))


def lenet():
    return nn.Sequential(
        nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2, 2),
        nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2, 2),
        nn.Flatten(),
        nn.Linear(400, 120), nn.ReLU(),
        nn.Linear(120, 84), nn.ReLU(),
        nn.Linear(84, 10))


def accuracy(model, x, y, batch):
    model.eval()
    correct = 0
    with torch.no_grad():
        for i in range(0, len(x), batch):
            correct += (model(x[i:i + batch]).argmax(1) == y[i:i + batch]).sum().item()
    model.train()
    return correct / len(x)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--data-dir", default="/usr/share/datasets/fashion-mnist")
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--batch-size", type=int, default=256)
    ap.add_argument("--lr", type=float, default=0.05)  # clrt-cnn's default
    ap.add_argument("--momentum", type=float, default=0.9)
    ap.add_argument("--schedule", choices=["cosine", "constant"], default="cosine")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    # clrt-cnn's default seed (the two libraries' generators differ, so the
    # initial weights do not match).
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    xtr, ytr = load(args.data_dir, "train")
    xte, yte = load(args.data_dir, "test")
    model = lenet()
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum)
    sched = (torch.optim.lr_scheduler.CosineAnnealingLR(opt, args.epochs)
             if args.schedule == "cosine" else None)
    loss_fn = nn.CrossEntropyLoss()
    print(f"pytorch {torch.__version__}, {torch.get_num_threads()} threads, batch {args.batch_size}")
    for epoch in range(args.epochs):
        perm = torch.randperm(len(xtr))
        total, t0 = 0.0, time.perf_counter()
        for i in range(0, len(xtr), args.batch_size):
            idx = perm[i:i + args.batch_size]
            opt.zero_grad()
            loss = loss_fn(model(xtr[idx]), ytr[idx])
            loss.backward()
            opt.step()
            total += loss.detach() * len(idx)
        seconds = time.perf_counter() - t0
        if sched:
            sched.step()
        acc = accuracy(model, xte, yte, 1024)
        print(f"epoch {epoch + 1}: train_seconds {seconds:.3f} loss {total.item() / len(xtr):.4f} "
              f"test_acc {acc:.4f}", flush=True)


if __name__ == "__main__":
    main()
