#!/usr/bin/env python3
"""Renders BENCHMARKS.md from the results bench/benchmarks.sh saved in a
folder (machine.txt, the clrt-bench --json files, compare.json). Every
figure and every piece of evidence in the paragraphs comes from those
files; the paragraphs say what limits each figure, with the numbers that
show it.
  bench/benchmarks.py RESULTS_DIR [--gpu GPU_RESULTS_DIR] > BENCHMARKS.md"""
import argparse
import json
import os
import statistics
import sys

TARGETS = {"matmul_128": 0.9, "transfer_1mib": 0.8, "launch_new": 1.2, "launch_fixed": 1.5}


def load(folder, name):
    path = os.path.join(folder, name)
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f) if name.endswith(".json") else f.read()


def machine_facts(text):
    facts, smi, packages = {}, [], []
    for line in (text or "").splitlines():
        key, _, value = line.partition(" ")
        if key == "smi":
            smi.append(value)
        elif key == "package":
            packages.append(value)
        else:
            facts[key] = value
    facts["smi"], facts["packages"] = smi, packages
    return facts


def fmt_size(b):
    return f"{b >> 20} MiB" if b >= 1 << 20 else f"{b >> 10} KiB"


def us(s):
    return f"{s * 1e6:.1f}"


def gflops(n, s):
    return 2.0 * n ** 3 / s * 1e-9


def table(head, rows):
    out = ["| " + " | ".join(head) + " |", "|" + "|".join("---:" if i else "---" for i in range(len(head))) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def verdict(ok):
    return "**met**" if ok else "**missed**"


# --- sections -------------------------------------------------------------

def section_machine(m, compare):
    lines = ["## The machine", "",
             f"- CPU: {m.get('cpu', '?')} (model {m.get('cpu_model', '?')}; "
             f"{m.get('cpu_flags', '').strip() or 'no AVX2'}), {m.get('cores', '?')} cores, "
             f"{m.get('memory_gib', '?')} GiB",
             f"- {m.get('os', '?')}; {m.get('compiler', '?')}",
             "- Debian packages: " + ", ".join(f"`{p}`" for p in m["packages"]),
             f"- clrt at commit `{m.get('commit', '?')}`, measured {m.get('date', '?')}"]
    if compare:
        lines.append(f"- Reference: {compare['pytorch']} (from PyPI, pinned in "
                     "`bench/requirements.txt`)")
    if m["smi"]:
        lines += ["", "`clrt-smi`:", "", "```"] + m["smi"] + ["```"]
    return "\n".join(lines)


def section_commands():
    return """## How to reproduce

```sh
bench/benchmarks.sh                 # everything below, then rewrites this file (about half an hour)
bench/compare.sh                    # only the PyTorch comparison (3 rounds of 2 epochs)
build/clrt-bench matmul             # exercise 1, every device and GEMM path
build/clrt-bench logging            # exercise 3
build/clrt-bench transfer           # host<->device and device copies against memcpy
build/clrt-bench launch             # one small op's launch cost against bare OpenCL
```

Each `clrt-bench` command times clrt beside its reference in the same
process, sample after sample, and reports medians; `--json` gives the raw
figures this file is rendered from. `bench/compare.sh` runs clrt and
PyTorch alternately, round after round, each on 2 threads (OpenBLAS,
PoCL and PyTorch alike), so that a load that drifts hits both."""


def section_exercises(compare, matmul, logging):
    rows = [["1. matrix products, CPU vs device, small and large",
             "`clrt-bench matmul`", "below"],
            ["2. reading and writing parameters on the device", "`clrt_module_param`, `clrt_tensor_to`",
             "(an API, not a timing)"],
            ["3. 1000 products, norms logged per step vs kept on the device",
             "`clrt-bench logging`", "below"],
            ["4. two products on two devices at once vs in sequence",
             "`clrt-bench multi` (issue 11, data-parallel)", "not yet: lands with issue 11"],
            ["notebook: the CIFAR-10 CNN, Adam, batch 256, CPU time per epoch",
             "`clrt-cnn --model seed-cnn`, `bench/compare.sh`",
             "seed-cnn row of the comparison"]]
    return "## The seed's exercises\n\n" + table(["exercise (seed chapter / notebook)", "command", "figures"], rows)


def section_compare(c):
    if not c:
        return "## clrt against PyTorch\n\nNo comparison in this run."
    scale = {"s/epoch": 1.0, "ms": 1e3, "us": 1e6}
    rows = []
    for r in c["rows"]:
        s = scale[r["unit"]]
        rows.append([r["item"], r["unit"], f"{r['clrt'] * s:.3f}", f"{r['pytorch'] * s:.3f}",
                     f"{r['ratio_min']:.2f}", f"**{r['ratio_median']:.2f}**", f"{r['ratio_max']:.2f}"])
    acc = "; ".join(f"{k} {v:.4f}" for k, v in sorted(c.get("accuracy", {}).items()))
    what = {
        "lenet": "LeNet on Fashion-MNIST, SGD lr 0.05 momentum 0.9, cosine schedule, batch 256 "
                 "(the demo's recipe): training seconds per epoch",
        "seed-cnn": "the seed notebook's CNN on CIFAR-10-shaped data, Adam lr 0.001, batch 256: "
                    "training seconds per epoch",
        "sgemm128": "one 128x128 SGEMM (clrt's default path), products back to back",
        "sgemm1024": "one 1024x1024 SGEMM",
        "add": "a + b on 1000 floats, a new output per call",
        "log-step": "exercise 3 (a): 1000 products of 100x100, each norm read to the host",
        "log-end": "exercise 3 (b): the norms kept on the device, read once"}
    items = "\n".join(f"- `{r['item']}`: {what[r['item']]}" for r in c["rows"])
    return f"""## clrt against PyTorch ({c['pytorch']})

`bench/compare.sh`, {c['rounds']} rounds, {c['epochs']} epochs per training run (epochs 2 and
later timed; the first carries start-up work), {c['threads']} threads on both sides. Ratio =
clrt's time / PyTorch's, per round (below 1: clrt faster). Both trainings start from
clrt's initial weights and see clrt's batch order.

{table(["item", "unit", "clrt (median)", "PyTorch (median)", "ratio min", "median", "max"], rows)}

{items}

Last test accuracies: {acc}. CIFAR-10 data: {'the real files' if 'synthetic' not in c['cifar_dir'] else 'generated from seed 1 by `bench/make_cifar10.py` (the real binary format; no CIFAR-10 files on this machine)'}{f', first {c["limit"]} training images' if c.get('limit') else ''}."""


def matmul_rows(mm, device, path):
    return [r for r in mm["rows"] if r["device"] == device and r["path"] == path]


def crossover(rows, ratio):
    best = None
    for r in sorted(rows, key=lambda r: -r["n"]):
        if r["seconds"] <= 0 or r["openblas_seconds"] / r["seconds"] < ratio:
            break
        best = r["n"]
    return best


def matmul_table(mm, device, path):
    rows = matmul_rows(mm, device, path)
    out = []
    for r in rows:
        ob = r["openblas_seconds"]
        out.append([r["n"], f"{gflops(r['n'], ob):.1f}", f"{gflops(r['n'], r['seconds']):.1f}",
                    f"**{ob / r['seconds']:.2f}**", f"{gflops(r['n'], r['latency_seconds']):.1f}",
                    f"{ob / r['latency_seconds']:.2f}", f"{r['first_seconds'] * 1e3:.2f}"])
    keep, beat = crossover(rows, 0.9), crossover(rows, 1.0)
    cross = (f"Crossover: from n = {keep} on, {path} keeps up with OpenBLAS (>= 0.9x); "
             + (f"from n = {beat} it is at least as fast." if beat else "it is never faster in this range."))
    return table(["n", "OpenBLAS GFLOP/s", f"{path} GFLOP/s", "ratio", "1 call + sync GFLOP/s",
                  "ratio", "1st call ms"], out) + "\n\n" + (cross if keep else
                                                          f"Crossover: {path} does not keep up with OpenBLAS at any size here.")


def at(rows, n, key="seconds"):
    r = next((r for r in rows if r["n"] == n), None)
    return r[key] if r else None


def section_matmul(mm, forced, host_devices):
    parts = ["## Exercise 1: square SGEMM, per device and GEMM path (`clrt-bench matmul`)", "",
             f"OpenBLAS {mm.get('openblas_config', '')}: kernels for **{mm['openblas_core']}**, "
             f"{mm['openblas_threads']} threads. Ratio = clrt's speed / OpenBLAS's (cblas_sgemm "
             "called directly in the same run, sample after sample). Below n = 512 a sample is "
             "several products back to back, then one synchronization; \"1 call + sync\" times a "
             "single product and the wait for it."]
    for dev in host_devices:
        for path in ("host-blas", "clblast"):
            if matmul_rows(mm, dev, path):
                parts += ["", f"### {dev}, {path}", "", matmul_table(mm, dev, path)]
    if forced:
        parts += ["", f"### cpu, host-blas, OpenBLAS's kernels for {forced['openblas_core']} forced "
                      f"(OPENBLAS_CORETYPE={forced['openblas_core']})", "",
                  matmul_table(forced, "cpu", "host-blas")]
    parts += ["", "### What limits it", "", matmul_paragraph(mm, forced)]
    return "\n".join(parts)


def matmul_paragraph(mm, forced):
    hb = matmul_rows(mm, "cpu", "host-blas")
    if not hb:
        return "No host-blas figures in this run."
    r128 = at(hb, 128, "openblas_seconds") / at(hb, 128)
    fixed = at(hb, 16) - at(hb, 16, "openblas_seconds")
    text = [f"Target at n = 128: >= {TARGETS['matmul_128']}x OpenBLAS; measured **{r128:.2f}x** with "
            f"the kernels OpenBLAS picked ({mm['openblas_core']}): {verdict(r128 >= TARGETS['matmul_128'])}."]
    if forced:
        f = matmul_rows(forced, "cpu", "host-blas")
        f128 = at(f, 128, "openblas_seconds") / at(f, 128)
        text.append(f"With OpenBLAS's {forced['openblas_core']} kernels the same product takes "
                    f"{us(at(f, 128, 'openblas_seconds'))} us directly and {us(at(f, 128))} us "
                    f"through clrt: **{f128:.2f}x** ({verdict(f128 >= TARGETS['matmul_128'])}).")
    text.append(
        f"Where the time goes: each clrt GEMM on the CPU device is one OpenCL native-kernel "
        f"command that PoCL's worker thread runs. At n = 16, where the arithmetic is nothing "
        f"(OpenBLAS: {us(at(hb, 16, 'openblas_seconds'))} us), a product costs "
        f"{us(at(hb, 16))} us back to back and {us(at(hb, 16, 'latency_seconds'))} us with a "
        f"wait: about {us(fixed)} us per command is PoCL's dispatch (enqueue, waking a worker "
        f"thread, event bookkeeping), the floor of this design; clrt's own share (argument "
        f"checks, one table lookup per buffer) is below a microsecond since shape strings are "
        f"no longer formatted with snprintf on every call. The rest of the gap at n = 64..256 is "
        f"OpenBLAS's threading inside PoCL's worker: with 2 cores, OpenBLAS's second thread "
        f"shares its core with PoCL's second worker thread, which wakes for each command; a "
        f"bare OpenCL program enqueueing the same cblas_sgemm as a native kernel (no clrt) "
        f"lands at the same ratio, and limiting PoCL to one worker (POCL_MAX_PTHREAD_COUNT=1) "
        f"raises it, at the cost of halving every OpenCL kernel. From n = 512 on, the dispatch "
        f"is noise and clrt runs at OpenBLAS's speed.")
    if mm["openblas_core"] in ("Prescott", "Core2", "Penryn", "Nehalem"):
        text.append(
            f"OpenBLAS 0.3.21 does not know this CPU model and falls back to its generic "
            f"{mm['openblas_core']} kernels, several times slower than its AVX-512 ones (compare "
            f"the two OpenBLAS columns): set OPENBLAS_CORETYPE=SkylakeX (Haswell on AVX2-only "
            f"CPUs) for clrt's GEMMs, and for a comparison with PyTorch, whose MKL picks its "
            f"kernels by instruction set.")
    return " ".join(text)


def section_transfer(tr):
    rows_by = {}
    for r in tr["rows"]:
        rows_by.setdefault(r["bytes"], {})[r["mode"]] = r
    modes = ["h2d_pageable", "h2d_pinned", "d2h_pageable", "d2h_pinned", "d2d", "d2d_to"]
    present = [m for m in modes if any(m in v for v in rows_by.values())]
    out = []
    for b in sorted(rows_by):
        v = rows_by[b]
        mc = next(iter(v.values()))["memcpy_seconds"]
        row = [fmt_size(b), f"{b / mc * 1e-9:.2f}"]
        for m in present:
            row.append(f"{b / v[m]['seconds'] * 1e-9:.2f} ({mc / v[m]['seconds']:.2f}x)" if m in v else "-")
        out.append(row)
    head = ["size", "memcpy GB/s"] + [m.replace("_", " ") + " GB/s (vs memcpy)" for m in present]
    other = tr.get("other_device") or ""
    return "\n".join([
        "## Transfers (`clrt-bench transfer`)", "",
        "h2d: `clrt_copy_from_host`, d2h: `clrt_to_host` (both blocking), from or into pageable "
        "(malloc) or pinned (a mapped CL_MEM_ALLOC_HOST_PTR buffer) host memory; d2d: "
        "`clrt_copy_` on one device then a wait"
        + (f"; d2d to: `clrt_tensor_to` onto {other} (it allocates its result)" if other else "")
        + ". memcpy: between two host buffers already touched, in the same run.", "",
        table(head, out), "", "### What limits it", "", transfer_paragraph(rows_by)])


def transfer_paragraph(rows_by):
    sizes = sorted(rows_by)
    small, mib = sizes[0], 1 << 20
    worst = None
    for b in (s for s in sizes if s >= mib):
        for m in ("h2d_pageable", "h2d_pinned", "d2h_pageable", "d2h_pinned", "d2d"):
            r = rows_by[b].get(m)
            if r:
                ratio = r["memcpy_seconds"] / r["seconds"]
                if worst is None or ratio < worst[0]:
                    worst = (ratio, b, m)
    fixed = statistics.median(r["seconds"] for m, r in rows_by[small].items() if m != "d2d_to")
    text = [f"Target on the CPU device: >= {TARGETS['transfer_1mib']}x memcpy from 1 MiB; the "
            f"lowest ratio from 1 MiB on is **{worst[0]:.2f}x** ({worst[2].replace('_', ' ')} at "
            f"{fmt_size(worst[1])}): {verdict(worst[0] >= TARGETS['transfer_1mib'])}." if worst else
            "No sizes from 1 MiB in this run."]
    at_mib = rows_by.get(mib, {})
    mc = next(iter(at_mib.values()))["memcpy_seconds"] if at_mib else None
    text.append(
        f"Every blocking transfer pays a fixed cost of about {us(fixed)} us (the median time of "
        f"a {fmt_size(small)} transfer), which is PoCL's round trip: the command is queued, a "
        f"worker thread wakes and copies, and the calling thread wakes when it is done. On this "
        f"unified-memory device the bytes move once (one memcpy by the driver; pinned memory "
        f"saves nothing because there is no DMA engine to feed)"
        + (f"; at 1 MiB memcpy itself takes {us(mc)} us, so the fixed cost alone caps the ratio at "
           f"{mc / (mc + fixed):.2f}x" if mc else "") +
        ". Above a few MiB both sides are bound by memory bandwidth and the ratio is 1 within the "
        "noise; `to()` onto a second device also allocates its result, and touching fresh pages "
        "costs more than the copy.")
    return " ".join(text)


def section_launch(la):
    by = {r["loop"]: r for r in la["rows"]}
    what = {"bare_fixed_out": "bare clEnqueueNDRangeKernel, fixed output",
            "bare_new_out": "bare, a new output buffer per call",
            "clrt_add": "clrt_add (a new output tensor per call)",
            "clrt_add_out": "clrt_add_out (fixed output)",
            "bare_wait_each": "bare, clFinish after every launch"}
    rows = [[what[k], us(by[k]["enqueue_seconds"]), us(by[k]["seconds"])] for k in what if k in by]
    new = by["clrt_add"]["seconds"] / by["bare_new_out"]["seconds"]
    fixed = by["clrt_add_out"]["seconds"] / by["bare_fixed_out"]["seconds"]
    alloc = by["bare_new_out"]["seconds"] - by["bare_fixed_out"]["seconds"]
    n = by["clrt_add"]["n"]
    return "\n".join([
        f"## Launch cost of one small op (`clrt-bench launch`, {n} floats)", "",
        f"{la['iters']} calls back to back, then one wait; median of {la['repeats']} rounds, "
        "microseconds per call.", "",
        table(["loop", "enqueue us", "enqueue + run us"], rows), "",
        "### What limits it", "",
        f"Targets: clrt_add <= {TARGETS['launch_new']}x the bare enqueue that allocates its "
        f"output: **{new:.2f}x** ({verdict(new <= TARGETS['launch_new'])}); clrt_add_out <= "
        f"{TARGETS['launch_fixed']}x the bare enqueue with a fixed output: **{fixed:.2f}x** "
        f"({verdict(fixed <= TARGETS['launch_fixed'])}). "
        f"The bare loops are the floor: PoCL needs {us(by['bare_fixed_out']['seconds'])} us per "
        f"launch, and creating and releasing a buffer adds {us(alloc)} us; clrt adds its argument "
        f"checks, a cached kernel lookup and the tensor object. A wait after every launch costs "
        f"{by['bare_wait_each']['seconds'] / by['bare_fixed_out']['seconds']:.1f}x the launch "
        f"itself, which is why no clrt op waits."])


def section_logging(lg, compare):
    r = lg["rows"][0]
    a, b = r["per_step_seconds"], r["at_end_seconds"]
    ref = ""
    if compare:
        rows = {x["item"]: x for x in compare["rows"]}
        if "log-step" in rows and "log-end" in rows:
            ref = (f" PyTorch on the CPU runs the same loops in {rows['log-step']['pytorch'] * 1e3:.1f} "
                   f"and {rows['log-end']['pytorch'] * 1e3:.1f} ms (its CPU ops are synchronous, so "
                   f"keeping the log on the device saves it nothing).")
    return "\n".join([
        f"## Exercise 3: logging norms (`clrt-bench logging`)", "",
        table(["variant", "ms per run", "us per step"],
              [["(a) each norm read to the host", f"{a * 1e3:.1f}", us(a / r['steps'])],
               ["(b) norms kept on the device, read once", f"{b * 1e3:.1f}", us(b / r['steps'])],
               ["(a) / (b)", f"{a / b:.2f}x", ""]]), "",
        "### What limits it", "",
        f"{r['steps']} products of {r['n']}x{r['n']}, each followed by `clrt_norm`. Reading every "
        f"norm costs {us((a - b) / r['steps'])} us more per step: each `clrt_item` drains the queue "
        f"and waits for PoCL's worker to wake the caller, and the next product cannot be queued "
        f"behind the running one. Kept on the device, the products and norms stream back to back "
        f"and one read at the end waits once.{ref}"])


def section_gpu(gpu_dir):
    if not gpu_dir:
        return ("## GPU figures\n\nNo GPU was at hand for this run (this machine has none). On a "
                "machine with one, `bench/benchmarks.sh --out DIR` saves its figures and "
                "`bench/benchmarks.sh --render THIS_DIR --gpu DIR` adds them here.")
    m = machine_facts(load(gpu_dir, "machine.txt"))
    mm = load(gpu_dir, "matmul.json")
    parts = [f"## GPU figures ({m.get('date', '?')}, {m.get('cpu', '?')} host)", ""] + m["smi"]
    for dev in sorted({r["device"] for r in mm["rows"] if r["device"].startswith("gpu")}):
        parts += ["", f"### {dev}, clblast", "", matmul_table(mm, dev, "clblast")]
    return "\n".join(parts)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("results")
    ap.add_argument("--gpu")
    a = ap.parse_args()
    m = machine_facts(load(a.results, "machine.txt"))
    mm, forced = load(a.results, "matmul.json"), load(a.results, "matmul_forced.json")
    tr, la = load(a.results, "transfer.json"), load(a.results, "launch.json")
    lg, compare = load(a.results, "logging.json"), load(a.results, "compare.json")
    if not all((mm, tr, la, lg)):
        sys.exit("benchmarks.py: missing clrt-bench results in " + a.results)
    host_devices = sorted({r["device"] for r in mm["rows"] if not r["device"].startswith("gpu")})
    print("# clrt benchmarks\n")
    print("Generated by `bench/benchmarks.sh` (rendered by `bench/benchmarks.py` from the "
          "saved results); do not edit by hand. Figures are medians; the machine is shared, "
          "so expect 20-50% between runs and trust the ratios, each taken against its "
          "reference in the same run.\n")
    for s in (section_machine(m, compare), section_commands(), section_exercises(compare, mm, lg),
              section_compare(compare), section_matmul(mm, forced, host_devices),
              section_logging(lg, compare), section_transfer(tr), section_launch(la),
              section_gpu(a.gpu)):
        print(s + "\n")


if __name__ == "__main__":
    main()
