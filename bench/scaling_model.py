#!/usr/bin/env python3
"""The cost model of docs/SCALING.md: projected time per training step and
scaling efficiency of data-parallel training, for LeNet and the seed
notebook's CNN, on GPUs (assumed rates) and on CPU cores like this
machine's (rates fitted to bench/scaling.sh's measurements).

  step(n workers) = compute(b) + exchange          (no overlap today)
  compute(b)      = fixed + per_sample * b         (b samples per worker)
    GPU: fixed = commands per step * cost per command (launch-bound),
         per_sample = 3 * forward FLOP / sustained rate
    CPU core: both fitted to one core's step at b = 256 and b = 128
  exchange, in one host through host memory (clrt's grad_exchange.c):
      a read and a write of S bytes per device over its own link, and the
      host's sum of the k buffers
  exchange across p processes, ring all-reduce of S bytes:
      2 (p - 1) / p * S / bandwidth + 2 (p - 1) * latency
  strong scaling (global batch B fixed, b = B / n):
      efficiency = compute(B) / (n * step(n))
  weak scaling (b = B per worker): efficiency = compute(B) / step(n)

Every input is a flag whose default is stated in docs/SCALING.md with its
source; the script measures nothing."""
import argparse

# parameters (clrt_module_param_count), forward FLOP per sample, OpenCL
# commands per training step (LeNet: counted by test_trace_lenet, 58 on
# PoCL and 63 on the GPU path; the seed CNN: scaled by its layer count)
MODELS = {"LeNet": (61706, 0.833e6, 60), "seed CNN": (30422, 3.888e6, 85)}
SETUPS = (("8 GPUs, one host", "gpu", 8, 1), ("16 hosts x 1 GPU", "gpu", 1, 16),
          ("16 hosts x 8 GPUs", "gpu", 8, 16), ("16 hosts x 2 cores", "cpu", 2, 16))


def compute_s(model, kind, b, a):
    if kind == "cpu":
        scale = 1.0 if model == "LeNet" else a.cpu_seed_scale
        return scale * (a.cpu_fixed_ms + a.cpu_sample_ms * b) * 1e-3
    params, flop, commands = MODELS[model]
    return commands * a.command_us * 1e-6 + 3 * flop * b / (a.tflops * 1e12)


def local_s(nbytes, k, kind, a):
    if k == 1:
        return 0.0
    if kind == "cpu":  # unified memory: the reads and writes are memcpys
        return a.cpu_local_ms * 1e-3
    link = 2 * (nbytes / (a.pcie_gbs * 1e9) + a.copy_latency_us * 1e-6)
    return link + k * nbytes / (a.host_sum_gbs * 1e9)


def ring_s(nbytes, p, a):
    if p == 1:
        return 0.0
    return 2 * (p - 1) / p * nbytes * 8 / (a.net_gbit * 1e9) + 2 * (p - 1) * a.net_latency_us * 1e-6


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--tflops", type=float, default=10.0, help="a GPU's sustained FP32 TFLOP/s")
    ap.add_argument("--command-us", type=float, default=8.0, help="GPU cost per command, us")
    ap.add_argument("--pcie-gbs", type=float, default=25.0, help="GB/s per GPU link")
    ap.add_argument("--copy-latency-us", type=float, default=10.0)
    ap.add_argument("--host-sum-gbs", type=float, default=10.0, help="host adds, GB/s read")
    ap.add_argument("--net-gbit", type=float, default=25.0)
    ap.add_argument("--net-latency-us", type=float, default=25.0)
    ap.add_argument("--cpu-fixed-ms", type=float, default=0.50, help="LeNet, one core")
    ap.add_argument("--cpu-sample-ms", type=float, default=0.045, help="LeNet, one core")
    ap.add_argument("--cpu-seed-scale", type=float, default=3.0, help="seed CNN / LeNet step")
    ap.add_argument("--cpu-local-ms", type=float, default=0.17, help="two devices' host sum")
    a = ap.parse_args()
    print(f"{'model':9} {'setup':20} {'S bytes':>8} {'compute(B)':>11} {'exchange':>9} "
          f"{'strong':>7} {'weak':>6}   (ms; efficiency)")
    for model, (params, _, _) in MODELS.items():
        nbytes = 4 * params
        for name, kind, k, p in SETUPS:
            n = k * p
            exch = local_s(nbytes, k, kind, a) + ring_s(nbytes, p, a)
            one = compute_s(model, kind, a.batch, a)
            strong = one / (n * (compute_s(model, kind, a.batch / n, a) + exch))
            print(f"{model:9} {name:20} {nbytes:8d} {one * 1e3:11.3f} {exch * 1e3:9.3f} "
                  f"{strong:7.0%} {one / (one + exch):6.0%}")


if __name__ == "__main__":
    main()
