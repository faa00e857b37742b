"""clrt-lm against the same recipe in PyTorch: the same text, vocabulary and
split, the same initial weights (clrt-lm --epochs 0 --save, loaded through
the state names), the same data order (the trainer's shuffle, reimplemented
below), AdamW with the same hyperparameters and per-epoch warm-up/cosine
rates, on the same number of threads. Prints each epoch's validation bits
per character on both sides, the final ratio, both wall times (each side's
training only, from its own clock), and writes a JSON record.
   python bench/lm_compare.py --clrt-lm build/clrt-lm [--epochs 5] [--threads 2]
          [--devices cpu:0,cpu:1] [clrt-lm options ...] [--json-out FILE] [--save CKPT]
Run it alone on the machine.
"""
import argparse
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from safetensors.torch import load_file

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_ref import GPT  # noqa: E402  clrt_gpt's PyTorch module

MASK64 = (1 << 64) - 1
LN2 = math.log(2)


def splitmix64(state):
    state = (state + 0x9E3779B97F4A7C15) & MASK64
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return state, z ^ (z >> 31)


def seed_mix(a, b):  # runtime/nn/module.c's clrt__seed_mix
    z = a ^ ((b + 0x9E3779B97F4A7C15 + ((a << 6) & MASK64) + (a >> 2)) & MASK64)
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return z ^ (z >> 31)


def shuffle(n, seed):  # runtime/data/shuffle.c's clrt_shuffle_indices
    idx, state = list(range(n)), seed
    for i in range(n - 1, 0, -1):
        bound = i + 1
        threshold = (-bound) % bound
        while True:
            state, r = splitmix64(state)
            if r >= threshold:
                break
        j = r % bound
        idx[i], idx[j] = idx[j], idx[i]
    return idx


def lr_at(e, warmup, total, peak, low):  # clrt_lr_warmup_cosine
    if e < warmup:
        return peak * (e + 1) / warmup
    if e < total:
        p = (e - warmup) / (total - warmup)
        return low + (peak - low) * (1 + math.cos(math.pi * p)) / 2
    return low


def windows(ids, block):
    n = (len(ids) - 1) // block
    x = torch.tensor([ids[i * block:(i + 1) * block] for i in range(n)])
    y = torch.tensor([ids[i * block + 1:(i + 1) * block + 1] for i in range(n)])
    return x, y


def read_text(path):
    """clrt-lm's text: a file, or a folder's regular files (no links, no
    fortune .dat indexes, no dot files) in name order."""
    if not os.path.isdir(path):
        return open(path, "rb").read()
    names = sorted(n for n in os.listdir(path) if not n.startswith(".") and not n.endswith(".dat"))
    files = [os.path.join(path, n) for n in names]
    return b"".join(open(f, "rb").read() for f in files
                    if os.path.isfile(f) and not os.path.islink(f))


def pytorch_run(a, state):
    text = read_text(a.text)
    if a.max_chars:
        text = text[:a.max_chars]
    chars = sorted(set(text))
    lookup = {c: i for i, c in enumerate(chars)}
    ids = [lookup[b] for b in text]
    n_val = int(a.val_fraction * len(ids))
    train_x, train_y = windows(ids[:len(ids) - n_val], a.block)
    val_x, val_y = windows(ids[len(ids) - n_val:], a.block)
    model = GPT(len(chars), a.block, a.d_model, a.heads, a.layers, a.dim_ff)
    model.load_state_dict(state, strict=True)
    opt = torch.optim.AdamW(model.parameters(), lr=a.lr, betas=(0.9, 0.95), eps=1e-8,
                            weight_decay=a.weight_decay)
    V, out, seconds = len(chars), [], 0.0
    for e in range(a.epochs):
        for g in opt.param_groups:
            g["lr"] = lr_at(e, min(a.warmup, a.epochs), a.epochs, a.lr, a.min_lr)
        order = shuffle(len(train_x), seed_mix(a.seed, e + 1))
        t0 = time.perf_counter()
        model.train()
        total = 0.0
        for b in range(0, len(order), a.batch_size):
            pick = order[b:b + a.batch_size]
            logits = model(train_x[pick])
            loss = F.cross_entropy(logits.reshape(-1, V), train_y[pick].reshape(-1))
            opt.zero_grad(set_to_none=False)
            loss.backward()
            opt.step()
            total += loss.item() * len(pick)
        seconds += time.perf_counter() - t0
        model.eval()
        with torch.no_grad():
            val = sum(F.cross_entropy(model(val_x[b:b + a.batch_size]).reshape(-1, V),
                                      val_y[b:b + a.batch_size].reshape(-1)).item()
                      * len(val_x[b:b + a.batch_size])
                      for b in range(0, len(val_x), a.batch_size)) / len(val_x)
        out.append((total / len(order) / LN2, val / LN2))
        print(f"pytorch epoch {e + 1:3d}  train {out[-1][0]:.4f}  validation {out[-1][1]:.4f} "
              f"bits/char  {seconds:7.1f} s", flush=True)
    return out, seconds


def clrt_run(a, extra, save=None, epochs=None):
    cmd = [a.clrt_lm, "--text", a.text, "--block", str(a.block), "--d-model", str(a.d_model),
           "--heads", str(a.heads), "--layers", str(a.layers), "--dim-ff", str(a.dim_ff),
           "--epochs", str(a.epochs if epochs is None else epochs),
           "--batch-size", str(a.batch_size), "--lr", repr(a.lr), "--min-lr", repr(a.min_lr),
           "--warmup", str(a.warmup), "--weight-decay", repr(a.weight_decay),
           "--val-fraction", repr(a.val_fraction), "--seed", str(a.seed)] + extra
    if a.max_chars:
        cmd += ["--max-chars", str(a.max_chars)]
    if save:
        cmd += ["--save", save]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    out, seconds = [], 0.0
    for line in p.stdout:
        print("clrt   " + line, end="", flush=True)
        m = re.search(r"train ([0-9.na]+) bits/char\s+validation ([0-9.na]+) bits/char\s+([0-9.]+) s",
                      line)
        if m:
            out.append((float(m.group(1)), float(m.group(2))))
            seconds += float(m.group(3))
    if p.wait() != 0:
        sys.exit(f"clrt-lm failed ({p.returncode}): {' '.join(cmd)}")
    return out, seconds


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--clrt-lm", default="build/clrt-lm")
    ap.add_argument("--text", default="/usr/share/games/fortunes")
    ap.add_argument("--max-chars", type=int, default=0)
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--block", type=int, default=64)
    ap.add_argument("--d-model", type=int, default=128)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--dim-ff", type=int, default=512)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--min-lr", type=float, default=3e-4)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--weight-decay", type=float, default=0.1)
    ap.add_argument("--val-fraction", type=float, default=0.1)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--devices", default="", help="clrt-lm --devices for a second clrt run")
    ap.add_argument("--json-out", default="")
    ap.add_argument("--save", default="", help="clrt's checkpoint of the run, then a sample from it")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    with tempfile.TemporaryDirectory() as tmp:
        init = os.path.join(tmp, "init.safetensors")
        clrt_run(a, [], save=init, epochs=0)
        state = load_file(init)
    ours, our_s = clrt_run(a, [], save=a.save or None)
    theirs, their_s = pytorch_run(a, state)
    result = {"cpu": open("/proc/cpuinfo").read().split("model name")[1].split("\n")[0].strip(": "),
              "threads": a.threads, "torch": torch.__version__, "args": vars(a),
              "clrt": {"epochs": ours, "train_seconds": our_s},
              "pytorch": {"epochs": theirs, "train_seconds": their_s}}
    if a.devices:
        two, two_s = clrt_run(a, ["--devices", a.devices])
        result["clrt_devices"] = {"devices": a.devices, "epochs": two, "train_seconds": two_s}
    ratio = ours[-1][1] / theirs[-1][1]
    print(f"\nvalidation bits/char after {a.epochs} epochs: clrt {ours[-1][1]:.4f}, "
          f"PyTorch {theirs[-1][1]:.4f}, ratio {ratio:.4f}")
    print(f"training wall time: clrt {our_s:.1f} s, PyTorch {their_s:.1f} s, ratio "
          f"{our_s / their_s:.3f}")
    if a.devices:
        two = result["clrt_devices"]
        print(f"clrt on {a.devices}: validation {two['epochs'][-1][1]:.4f} bits/char, "
              f"{two['train_seconds']:.1f} s")
    if a.save:
        sample = subprocess.run([a.clrt_lm, "--sample", "600", "--checkpoint", a.save,
                                 "--prompt", "The ", "--temperature", "0.8", "--seed", "1"],
                                stdout=subprocess.PIPE, text=True, errors="replace", check=True)
        print(f"\nclrt-lm --sample 600 --prompt 'The ' --temperature 0.8:\n{sample.stdout}")
        result["sample"] = sample.stdout
    if a.json_out:
        with open(a.json_out, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
