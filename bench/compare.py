#!/usr/bin/env python3
"""clrt against PyTorch, alternately, in rounds: on this machine's CPU (run
through bench/compare.sh, which sets up PyTorch first), or with --device
gpu:0 --torch-device cuda on an NVIDIA GPU (scripts/gpu_report.sh).

Each round runs every item once in clrt and once in PyTorch, clrt first in
odd rounds and PyTorch first in even ones, so a load that drifts over the
run hits both alike. The table gives each item's medians and the ratio
clrt / PyTorch per round (below 1: clrt faster) as min, median and max.

Items (the same work on both sides, timed the same way):
  lenet       LeNet on Fashion-MNIST, SGD (the demo's recipe): s per epoch
  seed-cnn    the seed notebook's CNN on CIFAR-10, Adam, batch 256: s per epoch
  resnet18    ResNet-18 (small stem) on CIFAR-10, SGD with momentum 0.9 and
              weight decay 5e-4, batch 128, tested on 1024 images: s per
              epoch (only when asked for with --only: minutes per round)
  sgemm128    C = A B, n = 128: s per product (clrt's default GEMM path)
  sgemm1024   the same at n = 1024
  add         one small op: a + b on 1000 floats, new output per call
  log-step    exercise 3: 1000 products of 100x100 with each norm read at once
  log-end     the same with the norms kept on the device and read once
  gpt         one training step of clrt_gpt(96, 128, 128, 4, 4, 512) at batch 16
              against the PyTorch module of clrt/nn.h (forward, cross-entropy,
              backward, AdamW) on the same ids: s per step, and the step's
              GFLOP/s as a share of the device's FMA peak (clrt-bench peak)
Training items time the training pass of epochs 2.. (epoch 1 when --epochs
is 1); both start from clrt's initial weights (clrt-bench weights) and see
the batches in clrt's order."""
import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(ROOT, "build")
ITEMS = ["lenet", "seed-cnn", "sgemm128", "sgemm1024", "add", "log-step", "log-end", "gpt"]
MODELS = ["lenet", "seed-cnn", "resnet18"]
UNIT = {"lenet": "s/epoch", "seed-cnn": "s/epoch", "resnet18": "s/epoch", "sgemm128": "us",
        "sgemm1024": "ms", "add": "us", "log-step": "ms", "log-end": "ms", "gpt": "ms"}
SCALE = {"s/epoch": 1.0, "ms": 1e3, "us": 1e6}


def run(cmd, env=None):
    """Runs cmd; returns its stdout, or exits with its output on failure."""
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        sys.exit(f"compare: {' '.join(cmd)} failed ({p.returncode}):\n{p.stdout[-3000:]}")
    return p.stdout


def steady(epochs):
    """Mean seconds of epochs 2.. (the first carries start-up work)."""
    return statistics.mean(epochs[1:] if len(epochs) > 1 else epochs)


class Runner:
    def __init__(self, args, py):
        self.a, self.py = args, py
        self.env = dict(os.environ, OPENBLAS_NUM_THREADS=str(args.threads),
                        POCL_MAX_PTHREAD_COUNT=str(args.threads), OMP_NUM_THREADS=str(args.threads))
        self.tmp = tempfile.mkdtemp(prefix="clrt-compare-")
        self.acc = {}  # (item, side) -> last test accuracy
        self.init = {}  # model -> clrt's initial weights, or None: PyTorch's own
        for model in MODELS:
            if model in args.items:
                self.init[model] = self.weights(model)

    def weights(self, model):
        """clrt's initial weights for the PyTorch side (clrt-bench weights)."""
        path = os.path.join(self.tmp, f"{model}.params")
        p = subprocess.run([os.path.join(BUILD, "clrt-bench"), "weights", "--model", model,
                            "--seed", "1", "--out", path], env=self.env, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        if p.returncode == 0:
            return path
        if model in ("lenet", "seed-cnn"):
            sys.exit(f"compare: clrt-bench weights --model {model} failed:\n{p.stdout}")
        print(f"compare: no clrt weights for {model} (clrt-bench weights: "
              f"{p.stdout.strip().splitlines()[-1] if p.stdout.strip() else p.returncode}); "
              f"PyTorch starts from its own", flush=True)
        return None

    def torch(self, *argv):
        return run([self.py, os.path.join(ROOT, "bench", "torch_ref.py"),
                    "--threads", str(self.a.threads), "--device", self.a.torch_device, *argv],
                   self.env)

    def clrt_bench(self, *argv):
        return json.loads(run([os.path.join(BUILD, "clrt-bench"), *argv, "--json"], self.env))

    # --- training items: seconds per epoch ---
    def train_args(self, item):
        """Options both clrt-cnn and torch_ref.py train take."""
        args = ["--model", item, "--epochs", str(self.a.epochs)]
        if item == "lenet":  # the demo's recipe: clrt-cnn's defaults
            return args + (["--data-dir", self.a.fashion_dir] if self.a.fashion_dir else [])
        if item == "seed-cnn":  # the seed notebook's recipe
            args += ["--optimizer", "adam", "--schedule", "constant"]
        else:  # resnet18: SGD, momentum 0.9, weight decay 5e-4, cosine, batch 128
            args += ["--dataset", "cifar10", "--batch-size", "128", "--weight-decay", "5e-4",
                     "--test-limit", "1024"]
        args += ["--data-dir", self.a.cifar_dir]
        return args + (["--limit", str(self.a.limit)] if self.a.limit else [])

    def clrt_train(self, item):
        out = run([os.path.join(BUILD, "clrt-cnn"), "--device", self.a.device, "--seed", "1",
                   *self.train_args(item)], self.env)
        secs = [float(m.group(1)) for m in re.finditer(r"epoch\s+\d+\b.*?([\d.]+) s\b", out)]
        acc = re.findall(r"final test accuracy ([\d.]+)", out)
        if not secs or not acc:
            sys.exit(f"compare: cannot read clrt-cnn's output:\n{out[-2000:]}")
        self.acc[(item, "clrt")] = float(acc[-1])
        return steady(secs)

    def torch_train(self, item):
        init = ["--init", self.init[item]] if self.init.get(item) else []
        out = self.torch("train", *init, "--clrt-order", *self.train_args(item))
        secs = [float(x) for x in re.findall(r"train_seconds ([\d.]+)", out)]
        self.acc[(item, "pytorch")] = float(re.findall(r"test_acc ([\d.]+)", out)[-1])
        return steady(secs)

    # --- micro items: seconds per call or per run ---
    def clrt_micro(self, item):
        if item.startswith("sgemm"):
            n = int(item[5:])
            rows = self.clrt_bench("matmul", "--device", self.a.device, "--paths", "default",
                                   "--sizes", str(n))["rows"]
            return rows[0]["seconds"]
        if item == "gpt":
            row = self.clrt_bench("gpt", "--device", self.a.device)["rows"][0]
            self.gpt_gflop = row["step_gflop"]
            return row["seconds"]
        if item == "add":
            rows = self.clrt_bench("launch", "--device", self.a.device)["rows"]
            return next(r["seconds"] for r in rows if r["loop"] == "clrt_add")
        row = self.clrt_bench("logging", "--device", self.a.device)["rows"][0]
        return row["per_step_seconds" if item == "log-step" else "at_end_seconds"]

    def torch_micro(self, item):
        if item.startswith("sgemm"):
            out = self.torch("sgemm", "--sizes", item[5:])
        elif item == "gpt":
            out = self.torch("gpt")
        elif item == "add":
            out = self.torch("small-op")
        else:
            out = self.torch("logging")
        key = {"add": "add_1000", "log-step": "logging_per_step",
               "log-end": "logging_at_end", "gpt": "gpt_step"}.get(item, "sgemm_" + item[5:])
        return float(re.search(rf"result {key} ([\d.e+-]+)", out).group(1))

    def measure(self, item, side):
        training = item in MODELS
        if side == "clrt":
            return self.clrt_train(item) if training else self.clrt_micro(item)
        return self.torch_train(item) if training else self.torch_micro(item)


def machine():
    cpu = "?"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return f"{cpu}, {os.cpu_count()} cores, {platform.system()} {platform.release()}"


def table(results, items):
    """One row per item: medians of both sides and the per-round ratios."""
    rows = []
    for item in items:
        c, t = results[item]["clrt"], results[item]["pytorch"]
        ratios = [x / y for x, y in zip(c, t)]
        rows.append({"item": item, "unit": UNIT[item], "clrt": statistics.median(c),
                     "pytorch": statistics.median(t), "ratio_min": min(ratios),
                     "ratio_median": statistics.median(ratios), "ratio_max": max(ratios),
                     "rounds": len(ratios)})
    return rows


def print_table(rows):
    print(f"\n{'item':<11} {'unit':>8} {'clrt':>10} {'pytorch':>10}   "
          f"{'clrt / pytorch: min':>19} {'median':>7} {'max':>6}")
    for r in rows:
        s = SCALE[r["unit"]]
        print(f"{r['item']:<11} {r['unit']:>8} {r['clrt'] * s:>10.3f} {r['pytorch'] * s:>10.3f}   "
              f"{r['ratio_min']:>19.2f} {r['ratio_median']:>7.2f} {r['ratio_max']:>6.2f}")
    print("(medians over rounds; ratio below 1: clrt faster)")


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--python", required=True, help="the Python that has torch (compare.sh)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--epochs", type=int, default=2, help="per training run (default 2)")
    ap.add_argument("--threads", type=int, default=2, help="both sides (default 2)")
    ap.add_argument("--only", help="comma-separated items (default: all)")
    ap.add_argument("--cifar-dir", required=True, help="CIFAR-10 binary files")
    ap.add_argument("--fashion-dir", help="Fashion-MNIST files (default: clrt-cnn's, Debian's)")
    ap.add_argument("--limit", type=int, default=0,
                    help="seed-cnn, resnet18: first N training images")
    ap.add_argument("--device", default="cpu", help="clrt's device (default cpu)")
    ap.add_argument("--torch-device", default="cpu", help="PyTorch's: cpu (default), cuda")
    ap.add_argument("--json-out", help="also write the results as JSON")
    a = ap.parse_args()
    items = a.only.split(",") if a.only else ITEMS
    bad = [i for i in items if i not in ITEMS + MODELS]
    if bad or a.rounds < 1 or a.epochs < 1 or a.threads < 1:
        ap.error(f"unknown item {bad[0]} (choose from {', '.join(ITEMS + ['resnet18'])})" if bad
                 else "bad numbers")
    a.items = items
    r = Runner(a, a.python)
    torch_info = r.torch("info").strip().splitlines()[0]
    print(f"machine: {machine()}")
    print(f"{torch_info}")
    print(f"clrt: {BUILD}/clrt-cnn and clrt-bench on {a.device}, OpenBLAS and PoCL at "
          f"{a.threads} threads; {a.rounds} rounds, {a.epochs} epochs per training run")
    print(f"CIFAR-10 files: {a.cifar_dir}; Fashion-MNIST files: {a.fashion_dir or 'Debian'}",
          flush=True)
    results = {i: {"clrt": [], "pytorch": []} for i in items}
    for rnd in range(a.rounds):
        sides = ["clrt", "pytorch"] if rnd % 2 == 0 else ["pytorch", "clrt"]
        for item in items:
            for side in sides:
                v = r.measure(item, side)
                results[item][side].append(v)
                print(f"round {rnd + 1}/{a.rounds} {item:<10} {side:<8} "
                      f"{v * SCALE[UNIT[item]]:10.3f} {UNIT[item]}", flush=True)
    rows = table(results, items)
    print_table(rows)
    peak = None
    if "gpt" in items:
        fma = [row for row in r.clrt_bench("peak", "--device", a.device)["rows"]
               if row.get("test") == "fma"]
        peak = max(row["gflops"] for row in fma) if fma else None
        for side in ("clrt", "pytorch"):
            rate = r.gpt_gflop / statistics.median(results["gpt"][side])
            share = f", {100 * rate / peak:.1f}% of clrt-bench peak's {peak:.0f}" if peak else ""
            print(f"gpt {side}: {rate:.1f} GFLOP/s ({r.gpt_gflop:.2f} GFLOP a step{share})")
    for (item, side), acc in sorted(r.acc.items()):
        note = "  <- did not learn: its time is no fair reference" if acc < 0.5 else ""
        print(f"last test accuracy {item} {side}: {acc:.4f}{note}")
    if a.json_out:
        with open(a.json_out, "w") as f:
            json.dump({"machine": machine(), "pytorch": torch_info, "threads": a.threads,
                       "rounds": a.rounds, "epochs": a.epochs, "cifar_dir": a.cifar_dir,
                       "fashion_dir": a.fashion_dir, "device": a.device,
                       "torch_device": a.torch_device,
                       "init": {m: bool(p) for m, p in r.init.items()},
                       "limit": a.limit, "rows": rows, "samples": results,
                       "gpt_step_gflop": getattr(r, "gpt_gflop", None), "fma_peak_gflops": peak,
                       "accuracy": {f"{k[0]} {k[1]}": v for k, v in r.acc.items()}}, f, indent=1)


if __name__ == "__main__":
    main()
