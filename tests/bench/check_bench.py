#!/usr/bin/env python3
"""Runs clrt-bench's commands at tiny sizes and checks their --json output
(the input of bench/benchmarks.py) and the weights file, then renders
BENCHMARKS.md from those documents with bench/benchmarks.py.
  check_bench.py path/to/clrt-bench   (with POCL_DEVICES="pthread pthread")
The device is CLRT_TEST_DEVICE's, else cpu; the checks that need two
devices (transfer's to(), multi) run on cpu, where PoCL gives two."""
import json
import math
import os
import struct
import subprocess
import sys
import tempfile

BENCH = sys.argv[1]
DEV = os.environ.get("CLRT_TEST_DEVICE") or "cpu"
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run(*args, rc=0, env=None):
    p = subprocess.run([BENCH, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       env=None if env is None else {**os.environ, **env})
    if p.returncode != rc:
        sys.exit(f"clrt-bench {' '.join(args)}: exit {p.returncode}, wanted {rc}\n{p.stdout}{p.stderr}")
    return p


def rows(*args, fields):
    doc = json.loads(run(*args, "--json").stdout)
    if doc["command"] != args[0] or not doc["rows"]:
        sys.exit(f"clrt-bench {args[0]}: bad document {doc}")
    for r in doc["rows"]:
        for f in fields + ["device", "device_model", "platform", "gemm_path"]:
            if f not in r:
                sys.exit(f"clrt-bench {args[0]}: row without {f}: {r}")
        for f in fields:
            if f.endswith("seconds") and not (isinstance(r[f], float) and 0 < r[f] < 60):
                sys.exit(f"clrt-bench {args[0]}: {f} = {r[f]} in {r}")
    return doc


def main():
    run("--help")
    run("bogus", rc=2)
    run("logging", "--steps", "0", rc=2)
    run("matmul", "--sizes", "16,x", rc=2)

    docs = {}
    mm = docs["matmul"] = rows("matmul", "--device", DEV, "--sizes", "16,24", "--paths", "default",
              fields=["path", "n", "seconds", "latency_seconds", "first_seconds", "openblas_seconds"])
    if [r["n"] for r in mm["rows"]] != [16, 24] or "openblas_core" not in mm:
        sys.exit(f"matmul: {mm}")
    lg = docs["logging"] = rows("logging", "--device", DEV, "--steps", "5", "--n", "7", "--repeats", "1",
              fields=["steps", "n", "per_step_seconds", "at_end_seconds"])
    if lg["rows"][0]["steps"] != 5:
        sys.exit(f"logging: {lg}")
    tr = docs["transfer"] = rows("transfer", "--device", DEV, "--sizes-kib", "1,3",
                                 fields=["mode", "bytes", "seconds", "memcpy_seconds"])
    modes = {r["mode"] for r in tr["rows"]}
    want = {"h2d_pageable", "h2d_pinned", "d2h_pageable", "d2h_pinned", "d2d"}
    want |= {"d2d_to"} if tr["other_device"] else set()
    if modes != want or (DEV == "cpu" and tr["other_device"] != "cpu:1"):
        sys.exit(f"transfer: modes {modes}, other device {tr['other_device']}")
    la = docs["launch"] = rows("launch", "--device", DEV, "--iters", "20", "--repeats", "1",
              fields=["loop", "n", "enqueue_seconds", "seconds"])
    if {r["loop"] for r in la["rows"]} != {"bare_fixed_out", "bare_new_out", "clrt_add",
                                            "clrt_add_out", "bare_wait_each",
                                            "clrt_add_recorded"}:
        sys.exit(f"launch: {la}")

    # peak: every FMA width, both streaming kernels and the driver's copy,
    # the three launch loops; the summary fields bench/benchmarks.py reads.
    pk = docs["peak"] = rows("peak", "--device", DEV, "--widths", "1,4", "--items", "64", "--kib", "64",
              "--launches", "20", "--repeats", "1", "--min-ms", "0",
              fields=["test", "width", "count", "items", "bytes", "seconds"])
    tests = [(r["test"], r["width"]) for r in pk["rows"]]
    want_tests = [("fma", 1), ("fma", 4), ("copy_buffer", 0), ("copy", 1), ("triad", 1), ("copy", 4),
                  ("triad", 4), ("launch_wait", 1), ("launch_wait_driver", 1),
                  ("launch_back_to_back", 1)]
    if tests != want_tests or pk["stream_bytes"] != 65536:
        sys.exit(f"peak: rows {tests}, stream_bytes {pk['stream_bytes']}")
    for f in ("fma_gflops", "bandwidth_gbps", "copy_buffer_gbps"):
        if not pk[f] > 0:
            sys.exit(f"peak: {f} = {pk[f]}")
    for f in ("fma_width", "vector_width_preferred", "vector_width_native", "compute_units",
              "launch_wait_seconds", "launch_wait_driver_seconds", "launch_back_to_back_seconds",
              "peak_gflops", "peak_kind", "peak_basis", "fma_share_of_peak", "compute_capability"):
        if f not in pk:
            sys.exit(f"peak: no {f}")
    if (pk["peak_gflops"] is None) != (pk["fma_share_of_peak"] is None) or not pk["peak_basis"]:
        sys.exit(f"peak: peak {pk['peak_gflops']}, share {pk['fma_share_of_peak']}")
    run("peak", "--widths", "3", rc=2)

    render(docs)
    if DEV == "cpu":
        check_multi()
    check_weights()
    print("check_bench: ok")


def render(docs):
    """BENCHMARKS.md from these documents: bench/benchmarks.py reads the
    fields they have (not a check of its wording)."""
    with tempfile.TemporaryDirectory() as tmp:
        run_dir, other = os.path.join(tmp, "cpu"), os.path.join(tmp, "oclgrind")
        os.makedirs(run_dir), os.makedirs(other)
        for name, doc in docs.items():
            with open(os.path.join(run_dir, name + ".json"), "w") as f:
                json.dump(doc, f)
        # bench/peak_others.sh's folder beside the run's: this device's peak stands in
        with open(os.path.join(other, "peak.json"), "w") as f:
            json.dump(docs["peak"], f)
        with open(os.path.join(run_dir, "machine.txt"), "w") as f:
            f.write("cpu check_bench\ncores 1\n")
        p = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "benchmarks.py"), run_dir],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        sys.exit(f"benchmarks.py on check_bench's documents: exit {p.returncode}\n{p.stderr}")
    for heading in ("## The device's limits", "### The same command on the other OpenCL",
                    "## Exercise 1", "## Transfers", "## Launch cost"):
        if heading not in p.stdout:
            sys.exit(f"benchmarks.py: no '{heading}' in\n{p.stdout}")
    if "/ peak" not in p.stdout:
        sys.exit("benchmarks.py: no share of the measured peak in the GEMM tables")
    render_gpu_report(docs)


def render_gpu_report(docs):
    """scripts/gpu_report/report.py on a results folder made of these
    documents, as its stages leave them."""
    with tempfile.TemporaryDirectory() as tmp:
        raw = os.path.join(tmp, "raw")
        os.makedirs(raw)
        for name, doc in docs.items():
            with open(os.path.join(raw, name + ".json"), "w") as f:
                json.dump(doc, f)
        with open(os.path.join(raw, "machine.txt"), "w") as f:
            f.write(f"cpu check_bench\ncores 1\ndevice {DEV}\n")
        with open(os.path.join(raw, "stage-peak.txt"), "w") as f:
            f.write("status ok\nseconds 1\n")
        out = os.path.join(tmp, "out")
        p = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "gpu_report", "report.py"),
                            "--work", tmp, "--out", out, "--repo", ROOT],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if p.returncode != 0:
            sys.exit(f"gpu_report/report.py: exit {p.returncode}\n{p.stderr}")
        with open(os.path.join(out, "report.md")) as f:
            md = f.read()
        with open(os.path.join(out, "report.json")) as f:
            doc = json.load(f)
    for heading in ("## Stages", "## The device's limits", "## GEMM", "## Transfers", "## Launch"):
        if heading not in md:
            sys.exit(f"gpu_report/report.py: no '{heading}' in\n{md}")
    if doc["peak"]["fma_gflops"] != docs["peak"]["fma_gflops"] or "peak" not in doc["stages"]:
        sys.exit("gpu_report/report.py: report.json lost the peak document or the stage")


def check_multi():
    # multi: both products checked inside the command (poisoned outputs
    # against a float64 reference); two devices by default, or a clear exit.
    mu = rows("multi", "--size", "33", "--reps", "3", fields=["mode", "n", "seconds"])
    if ([r["mode"] for r in mu["rows"]] != ["sequential", "concurrent"]
            or mu["rows"][1]["second"]["device"] != "cpu:1" or not mu["speedup"] > 0):
        sys.exit(f"multi: {mu}")
    run("multi", "--devices", "cpu:0", rc=2)
    run("multi", "--devices", "cpu:1,cpu:1", rc=2)
    one = run("multi", "--size", "8", rc=1, env={"POCL_DEVICES": "pthread"})
    if "POCL_DEVICES" not in one.stderr:
        sys.exit(f"multi on one device: {one.stderr}")


def check_weights():
    # weights: LeNet's ten tensors, shapes in order, values inside the
    # uniform init bound 1/sqrt(fan_in), and the same file for the same seed.
    with tempfile.TemporaryDirectory() as tmp:
        paths = [os.path.join(tmp, f"w{i}") for i in range(3)]
        for path, seed in zip(paths, ("1", "1", "2")):
            run("weights", "--model", "lenet", "--seed", seed, "--out", path)
        data = [open(p, "rb").read() for p in paths]
    if data[0] != data[1] or data[0] == data[2]:
        sys.exit("weights: not a function of the seed")
    lines = data[0].split(b"\n")
    if lines[0] != b"clrt-params 1 10":
        sys.exit(f"weights: header {lines[0]}")
    shapes = [tuple(int(x) for x in ln.split()[2:]) for ln in lines[1:11]]
    want_shapes = [(6, 1, 5, 5), (6,), (16, 6, 5, 5), (16,), (120, 400), (120,), (84, 120), (84,),
                   (10, 84), (10,)]
    if shapes != want_shapes:
        sys.exit(f"weights: shapes {shapes}")
    body = data[0][sum(len(ln) + 1 for ln in lines[:11]):]
    values = struct.unpack(f"<{len(body) // 4}f", body)
    if len(values) != sum(math.prod(s) for s in shapes):
        sys.exit(f"weights: {len(values)} values")
    at = 0
    for i, s in enumerate(shapes):
        fan_in = math.prod(shapes[i - (i % 2)][1:])
        chunk = values[at:at + math.prod(s)]
        at += math.prod(s)
        if max(abs(v) for v in chunk) > 1 / math.sqrt(fan_in) or len(set(chunk)) < len(chunk) // 2:
            sys.exit(f"weights: tensor {i} outside its init bound or not random")


if __name__ == "__main__":
    main()
