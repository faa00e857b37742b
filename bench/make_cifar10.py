#!/usr/bin/env python3
"""Writes CIFAR-10-shaped data in the real CIFAR-10 binary format, generated
from a seed, for benchmarks on a machine without the real files.

Files: data_batch_1.bin ... data_batch_5.bin (the training set) and
test_batch.bin, each record 1 label byte (0..9) then 3072 pixel bytes (the
R, G and B planes of a 32x32 image), as in the official
cifar-10-batches-bin release; batches.meta.txt names the classes. So
clrt-cnn (--dataset cifar10 --data-dir DIR) and bench/torch_ref.py read
them with the same readers as the real files.

The images are learnable, not noise: each class has a smooth colour
template of its own, and a sample is its class template, shifted by a few
pixels, with a random contrast and brightness and per-pixel noise. Same
seed, same bytes (numpy's PCG64).

  bench/make_cifar10.py --out DIR [--seed 1] [--train 50000] [--test 10000]
"""
import argparse
import os

import numpy as np

CLASSES = ["airplane", "automobile", "bird", "cat", "deer",
           "dog", "frog", "horse", "ship", "truck"]
TRAIN_FILES = 5


def templates(rng):
    """One smooth 3x32x32 template per class, values around 0..255."""
    shared = rng.uniform(0, 255, size=(1, 3, 8, 8))
    own = rng.uniform(0, 255, size=(len(CLASSES), 3, 8, 8))
    coarse = 0.75 * shared + 0.25 * own  # classes differ by a quarter
    fine = coarse.repeat(4, axis=2).repeat(4, axis=3)
    # a 5x5 box blur (wrapping) takes the blockiness off
    out = np.zeros_like(fine)
    for dy in range(-2, 3):
        for dx in range(-2, 3):
            out += np.roll(fine, (dy, dx), axis=(2, 3))
    return out / 25.0


def samples(rng, tmpl, count):
    """count records of 3073 bytes: label, then the image."""
    labels = rng.integers(0, len(CLASSES), size=count)
    images = np.empty((count, 3, 32, 32), dtype=np.uint8)
    chunk = 2000
    for s in range(0, count, chunk):
        lab = labels[s:s + chunk]
        n = len(lab)
        shifts = rng.integers(-4, 5, size=(n, 2))
        base = np.stack([np.roll(tmpl[c], (int(dy), int(dx)), axis=(1, 2))
                         for c, (dy, dx) in zip(lab, shifts)])
        contrast = rng.uniform(0.4, 1.0, size=(n, 1, 1, 1))
        brightness = rng.uniform(-40, 40, size=(n, 1, 1, 1))
        noise = rng.normal(0, 64, size=base.shape)
        pix = 128 + contrast * (base - 128) + brightness + noise
        images[s:s + n] = np.clip(np.rint(pix), 0, 255).astype(np.uint8)
    records = np.empty((count, 3073), dtype=np.uint8)
    records[:, 0] = labels
    records[:, 1:] = images.reshape(count, 3072)
    return records


def write(path, records):
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(records.tobytes())
    os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="folder to write (created if missing)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--train", type=int, default=50000, help="training images (split over 5 files)")
    ap.add_argument("--test", type=int, default=10000, help="test images")
    args = ap.parse_args()
    if args.train < TRAIN_FILES or args.test < 1:
        ap.error("need at least 5 training images and 1 test image")
    os.makedirs(args.out, exist_ok=True)
    rng = np.random.Generator(np.random.PCG64(args.seed))
    tmpl = templates(rng)
    per_file = [args.train // TRAIN_FILES + (i < args.train % TRAIN_FILES)
                for i in range(TRAIN_FILES)]
    for i, n in enumerate(per_file):
        write(os.path.join(args.out, f"data_batch_{i + 1}.bin"), samples(rng, tmpl, n))
    write(os.path.join(args.out, "test_batch.bin"), samples(rng, tmpl, args.test))
    with open(os.path.join(args.out, "batches.meta.txt"), "w") as f:
        f.write("\n".join(CLASSES) + "\n")
    print(f"make_cifar10: wrote {args.train} training and {args.test} test images "
          f"(seed {args.seed}) to {args.out}")


if __name__ == "__main__":
    main()
