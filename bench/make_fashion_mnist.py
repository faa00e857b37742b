#!/usr/bin/env python3
"""Writes Fashion-MNIST-shaped data in the real IDX format, generated from a
seed, for benchmarks on a machine without Debian's dataset-fashion-mnist
(a GPU machine without a package registry, say).

Files: train-images-idx3-ubyte, train-labels-idx1-ubyte (60000 images),
t10k-images-idx3-ubyte, t10k-labels-idx1-ubyte (10000), uncompressed, so
clrt-cnn (--data-dir DIR) and bench/torch_ref.py read them with the same
readers as the real files. Like bench/make_cifar10.py's images, these are
learnable, not noise: each class has a smooth 28x28 template of its own,
and a sample is its class template shifted by a pixel or two, with a
random contrast and per-pixel noise. Same seed, same bytes.

  bench/make_fashion_mnist.py --out DIR [--seed 1] [--train 60000] [--test 10000]
"""
import argparse
import os
import struct

import numpy as np

CLASSES = 10


def templates(rng):
    """One smooth 28x28 template per class, values 0..255: a shape that all
    classes share (a garment's outline, say) plus a third of one of its own."""
    shared = rng.uniform(0, 200, size=(1, 7, 7)) * (rng.uniform(size=(1, 7, 7)) > 0.5)
    own = rng.uniform(0, 200, size=(CLASSES, 7, 7)) * (rng.uniform(size=(CLASSES, 7, 7)) > 0.5)
    fine = (0.7 * shared + 0.3 * own).repeat(4, axis=1).repeat(4, axis=2)
    out = np.zeros_like(fine)
    for dy in range(-1, 2):  # a 3x3 box blur takes the blockiness off
        for dx in range(-1, 2):
            out += np.roll(fine, (dy, dx), axis=(1, 2))
    return out / 9.0


def samples(rng, tmpl, count):
    labels = rng.integers(0, CLASSES, size=count)
    shifts = rng.integers(-2, 3, size=(count, 2))
    base = np.stack([np.roll(tmpl[c], (int(dy), int(dx)), axis=(0, 1))
                     for c, (dy, dx) in zip(labels, shifts)])
    contrast = rng.uniform(0.4, 1.0, size=(count, 1, 1))
    pix = contrast * base + rng.normal(0, 50, size=base.shape)
    return np.clip(np.rint(pix), 0, 255).astype(np.uint8), labels.astype(np.uint8)


def write_idx(path, data):
    """IDX: magic (0, 0, type 0x08 = unsigned byte, ndim), big-endian dims, bytes."""
    with open(path, "wb") as f:
        f.write(struct.pack(">I", 0x0800 | data.ndim))
        f.write(struct.pack(">" + "I" * data.ndim, *data.shape))
        f.write(data.tobytes())


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--train", type=int, default=60000)
    ap.add_argument("--test", type=int, default=10000)
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    tmpl = templates(rng)
    os.makedirs(a.out, exist_ok=True)
    for split, count in (("train", a.train), ("t10k", a.test)):
        images, labels = samples(rng, tmpl, count)
        write_idx(os.path.join(a.out, f"{split}-images-idx3-ubyte"), images)
        write_idx(os.path.join(a.out, f"{split}-labels-idx1-ubyte"), labels)
    print(f"make_fashion_mnist: {a.train} + {a.test} images from seed {a.seed} in {a.out}")


if __name__ == "__main__":
    main()
