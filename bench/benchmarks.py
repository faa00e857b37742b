#!/usr/bin/env python3
"""Renders BENCHMARKS.md from the results bench/benchmarks.sh saved in a
folder (machine.txt, the clrt-bench --json files, peak.json among them,
compare.json; notes.txt,
if any: lines of provenance written by hand, for results added to the
folder by a later, partial run). Every figure and every piece of evidence
in the paragraphs comes from those files; the paragraphs say what limits
each figure, with the numbers that show it.
  bench/benchmarks.py RESULTS_DIR [--gpu GPU_RESULTS_DIR] > BENCHMARKS.md"""
import argparse
import json
import math
import os
import re
import statistics
import sys

import flops
import nvptx_section

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
    return f"{s * 1e6:.1f}" if s >= 1e-6 else f"{s * 1e6:.2g}"


def gflops(n, s):
    return 2.0 * n ** 3 / s * 1e-9


def table(head, rows):
    out = ["| " + " | ".join(head) + " |", "|" + "|".join("---:" if i else "---" for i in range(len(head))) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def verdict(ok):
    return "**met**" if ok else "**missed**"


# --- sections -------------------------------------------------------------

def driver_target(model, cpu):
    """PoCL names a CPU device "pthread-<LLVM target>-<CPU name>": the target."""
    m = re.match(r"pthread-(.+?)-" + re.escape(cpu) + "$", model or "")
    return m.group(1) if m else None


def device_line(pk, m):
    """The OpenCL device the figures are taken on, and what its driver compiles for."""
    if not pk:
        return []
    r = pk["rows"][0]
    target = driver_target(r["device_model"], m.get("cpu", ""))
    return [f"- OpenCL device `{r['device']}`: `{r['device_model']}` ({r['platform']}, "
            f"{pk['compute_units']} compute units at {pk['clock_mhz']} MHz); its driver compiles "
            + (f"for `{target}`, " if target else "")
            + f"float vectors of {pk['vector_width_preferred']} lanes preferred, "
            f"{pk['vector_width_native']} native (`clrt-bench peak`)"]


def section_machine(m, compare, notes, pk=None):
    lines = ["## The machine", "",
             f"- CPU: {m.get('cpu', '?')} (model {m.get('cpu_model', '?')}; "
             f"{m.get('cpu_flags', '').strip() or 'no AVX2'}), {m.get('cores', '?')} cores, "
             f"{m.get('memory_gib', '?')} GiB",
             *device_line(pk, m),
             f"- {m.get('os', '?')}; {m.get('compiler', '?')}",
             "- Debian packages: " + ", ".join(f"`{p}`" for p in m["packages"]),
             f"- clrt at commit `{m.get('commit', '?')}`, measured {m.get('date', '?')} by "
             f"`{m.get('invocation', 'bench/benchmarks.sh')}`"]
    if compare:
        lines.append(f"- Reference: {compare['pytorch']} (from PyPI, pinned in "
                     "`scripts/requirements.txt`)")
    lines += [f"- {n}" for n in (notes or "").splitlines() if n.strip()]
    if m["smi"]:
        lines += ["", "`clrt-smi`:", "", "```"] + m["smi"] + ["```"]
    return "\n".join(lines)


def share(gflops, pk):
    """A rate as a share of the device's measured FMA peak ("" without one)."""
    return f"{gflops / pk['fma_gflops']:.1%}" if pk and gflops else ""


def section_peak(pk):
    rows = pk["rows"]
    out = []
    for r in rows:
        if r["test"] == "fma":
            out.append([f"FP32 FMA chains, float{r['width'] if r['width'] > 1 else ''}",
                        f"{r['gflops']:.1f} GFLOP/s", f"{r['items']} items x {r['count']} trips, "
                        f"{r['seconds'] * 1e3:.1f} ms"])
        elif r["test"] in ("copy", "triad", "copy_buffer"):
            what = ("clEnqueueCopyBuffer (the driver's copy)" if r["test"] == "copy_buffer"
                    else f"{r['test']} kernel, float{r['width'] if r['width'] > 1 else ''}")
            out.append([what, f"{r['gbps']:.1f} GB/s", f"{r['bytes'] >> 20} MiB buffers, "
                        f"{r['count']} per sample, {r['seconds'] * 1e3:.1f} ms"])
    what = {"launch_wait": "empty kernel, one at a time, clrt's wait (flush, sleep, poll)",
            "launch_wait_driver": "empty kernel, one at a time, clWaitForEvents",
            "launch_back_to_back": "empty kernels back to back, one wait"}
    for r in rows:
        if r["test"] in what:
            out.append([what[r["test"]], f"{r['seconds'] * 1e6:.2f} us per launch",
                        f"{r['count']} launches"])
    kind = {"estimate": "estimated"}.get(pk["peak_kind"], pk["peak_kind"])
    spec = (f"the {kind} peak is {pk['peak_gflops']:.1f} GFLOP/s ({pk['peak_basis']}), "
            f"so the kernel reaches **{pk['fma_share_of_peak']:.2f}x** of it"
            if pk["peak_gflops"] else f"no specification peak: {pk['peak_basis']}")
    text = (f"Measured FP32 peak: **{pk['fma_gflops']:.1f} GFLOP/s** (float"
            f"{pk['fma_width'] if pk['fma_width'] > 1 else ''} vectors); {spec}. Memory: "
            f"**{pk['bandwidth_gbps']:.1f} GB/s** ({pk['bandwidth_test']}, counting bytes read and "
            f"written), {pk['bandwidth_gbps'] / pk['copy_buffer_gbps']:.2f}x the driver's own "
            f"copy. One launch waited for costs {pk['launch_wait_seconds'] * 1e6:.1f} us with "
            f"clrt's wait and {pk['launch_wait_driver_seconds'] * 1e6:.1f} us with "
            f"clWaitForEvents; back to back a launch costs "
            f"{pk['launch_back_to_back_seconds'] * 1e6:.2f} us. The measured peak is what every "
            f"\"share of peak\" below is taken against.")
    return "\n".join([
        "## The device's limits (`clrt-bench peak`)", "",
        "Synthetic kernels in one run (`clkernels/peak.cl`, after clpeak): independent FMA "
        "chains on float vectors of the driver's preferred width and the widths around it (a "
        "multiply-add counted as 2 FLOP), streaming copy and triad kernels over buffers far "
        "larger than the caches, and an empty kernel. Medians of "
        f"{pk['repeats']} samples of at least {pk['min_ms']} ms.", "",
        table(["what", "figure", "sample"], out), "", text])


OTHER_IMPLEMENTATIONS = (
    ("oclgrind", "Oclgrind, a simulated GPU that interprets and checks every work item: its "
     "figures measure the simulator"),
    ("rusticl", "Mesa's rusticl on llvmpipe, a second CPU implementation (its device reports "
     "8 compute units at 300 MHz and 1 float lane, so the estimate from them means little)"),
)


def section_other_peaks(results):
    """bench/peak_others.sh's runs, saved beside this run's folder."""
    base = os.path.dirname(os.path.abspath(results))
    rows, notes = [], []
    for name, what in OTHER_IMPLEMENTATIONS:
        pk = load(os.path.join(base, name), "peak.json")
        if not pk:
            continue
        r0 = pk["rows"][0]
        rows.append([f"{r0['platform']}: {r0['device_model']} (`{r0['device']}`)",
                     f"{pk['fma_gflops']:.3g} GFLOP/s (float{pk['fma_width']})",
                     f"{pk['bandwidth_gbps']:.3g} GB/s ({pk['bandwidth_test']})",
                     f"{pk['copy_buffer_gbps']:.3g} GB/s",
                     f"{pk['launch_wait_seconds'] * 1e6:.0f} us",
                     f"{pk['launch_back_to_back_seconds'] * 1e6:.0f} us"])
        notes.append(f"- {what}: `bench/results/{name}/peak.json`.")
    if not rows:
        return None
    return "\n".join([
        "### The same command on the other OpenCL implementations here", "",
        "`bench/peak_others.sh`, a separate run on the same machine (`clrt-bench peak --json` on "
        "each implementation, registered privately):", "",
        table(["implementation", "FMA", "stream kernel", "driver copy", "launch, waited",
               "launch, back to back"], rows), ""] + notes)


def section_onnx(results):
    """bench/onnx_compare.sh's saved run (bench/results/onnx/compare.json), beside this run's
    folder: clrt-onnx bench against onnxruntime, alternating in one script."""
    c = load(os.path.join(os.path.dirname(os.path.abspath(results)), "onnx"), "compare.json")
    if not c:
        return None
    rows = []
    for s in c["summary"]:
        rat = (f"{s['ratio_median']:.2f}x ({s['ratio_min']:.2f}..{s['ratio_max']:.2f})"
               if s.get("ratio_median") else "-")
        dev = s.get("clrt_peak_device_mib")
        rows.append([s["model"], str(s["batch"]), f"{s['clrt_median_s'] * 1e3:.1f} ms",
                     f"{s['ort_median_s'] * 1e3:.1f} ms", rat,
                     f"{dev:.0f} MiB" if dev else "-",
                     f"{s['ort_max_rss_kb'] / 1024:.0f} MiB"])
    args = c.get("args", {})
    return "\n".join([
        "## ONNX inference against onnxruntime (`bench/onnx_compare.sh`)", "",
        f"torchvision's models with random weights at {args.get('size', 224)}x{args.get('size', 224)}, "
        f"exported at opset 17 (constant folding on), `clrt-onnx bench --json` against onnxruntime "
        f"{c.get('onnxruntime', '?')} (CPUExecutionProvider, 2 threads), alternating in "
        f"{len({r.get('round') for r in c['rounds']})} rounds in one script, each the median of 10 runs "
        f"after 3 of warm-up; measured {c.get('date', '?')} on {c.get('machine', '?')} "
        f"({c.get('cpus', '?')} CPUs). Memory: clrt's count of the device memory its values held "
        f"at most (`clrt_onnx_peak_bytes`, with the initializers, the folded weights and the "
        f"re-laid copies the convolutions keep) beside onnxruntime's peak resident "
        f"memory (its whole process; 43 MiB before the session).", "",
        table(["model", "batch", "clrt", "onnxruntime", "clrt / onnxruntime", "clrt device memory",
               "onnxruntime RSS"], rows), "",
        "Saved run: `bench/results/onnx/compare.json` and `compare.txt`.", ""])


def section_commands():
    return """## How to reproduce

```sh
bench/benchmarks.sh                 # everything below, then rewrites this file (3 min with the options above; 15-30 with the defaults)
bench/compare.sh                    # only the PyTorch comparison (3 rounds of 2 epochs)
build/clrt-bench matmul             # exercise 1, every device and GEMM path
build/clrt-bench logging            # exercise 3
build/clrt-bench multi              # exercise 4, two devices (PoCL: POCL_DEVICES="pthread pthread")
build/clrt-bench transfer           # host<->device and device copies against memcpy
build/clrt-bench launch             # one small op's launch cost against bare OpenCL
build/clrt-bench peak               # the device's FMA peak, bandwidth and launch latency
bench/peak_others.sh                # the same on Oclgrind and rusticl (bench/results/<name>/peak.json)
```

Each `clrt-bench` command times clrt beside its reference in the same
process, sample after sample, and reports medians; `--json` gives the raw
figures this file is rendered from. `bench/compare.sh` runs clrt and
PyTorch alternately, round after round, each on 2 threads (OpenBLAS,
PoCL and PyTorch alike), so that a load that drifts hits both."""


def section_exercises(compare, matmul, logging, multi):
    rows = [["1. matrix products, CPU vs device, small and large",
             "`clrt-bench matmul`", "below"],
            ["2. reading and writing parameters on the device", "`clrt_module_param`, `clrt_tensor_to`",
             "(an API, not a timing)"],
            ["3. 1000 products, norms logged per step vs kept on the device",
             "`clrt-bench logging`", "below"],
            ["4. two products on two devices at once vs in sequence",
             "`clrt-bench multi`", "below" if multi else "not in this run"],
            ["notebook: the CIFAR-10 CNN, Adam, batch 256, CPU time per epoch",
             "`clrt-cnn --model seed-cnn`, `bench/compare.sh`",
             "seed-cnn row of the comparison"]]
    return "## The seed's exercises\n\n" + table(["exercise (seed chapter / notebook)", "command", "figures"], rows)


def item_gflop(item, c):
    """The arithmetic of one compare.py item (GFLOP), or None for those
    that are not compute-bound (launches, logging)."""
    if item.startswith("sgemm"):
        return 2.0 * int(item[5:]) ** 3 * 1e-9
    if item in flops.MODELS:
        return flops.epoch_gflop(item, (c.get("limit") if item != "lenet" else None) or None)
    return None


ITEM_WHAT = {
    "lenet": "LeNet on Fashion-MNIST, SGD lr 0.05 momentum 0.9, cosine schedule, batch 256 "
             "(the demo's recipe): training seconds per epoch",
    "seed-cnn": "the seed notebook's CNN on CIFAR-10-shaped data, Adam lr 0.001, batch 256: "
                "training seconds per epoch",
    "resnet18": "ResNet-18 (small stem) on CIFAR-10-shaped data, SGD, batch 128: training "
                "seconds per epoch",
    "sgemm128": "one 128x128 SGEMM (clrt's default path), products back to back",
    "sgemm1024": "one 1024x1024 SGEMM",
    "add": "a + b on 1000 floats, a new output per call",
    "log-step": "exercise 3 (a): 1000 products of 100x100, each norm read to the host",
    "log-end": "exercise 3 (b): the norms kept on the device, read once"}


def compare_table(c, pk=None):
    """compare.py's rows as a table: medians, ratios, and with pk the shares
    of the device's measured peak."""
    scale = {"s/epoch": 1.0, "ms": 1e3, "us": 1e6}
    rows = []
    for r in c["rows"]:
        s = scale[r["unit"]]
        g = item_gflop(r["item"], c)
        rows.append([r["item"], r["unit"], f"{r['clrt'] * s:.3f}", f"{r['pytorch'] * s:.3f}",
                     f"{r['ratio_min']:.2f}", f"**{r['ratio_median']:.2f}**", f"{r['ratio_max']:.2f}"]
                    + ([share(g / r["clrt"], pk) if g else "", share(g / r["pytorch"], pk) if g else ""]
                       if pk else []))
    return table(["item", "unit", "clrt (median)", "PyTorch (median)", "ratio min", "median", "max"]
                 + (["clrt / peak", "PyTorch / peak"] if pk else []), rows)


def section_compare(c, mm, la, pk=None):
    if not c:
        return "## clrt against PyTorch\n\nNo comparison in this run."
    acc = "; ".join(f"{k} {v:.4f}" for k, v in sorted(c.get("accuracy", {}).items()))
    what = ITEM_WHAT
    items = "\n".join(f"- `{r['item']}`: {what[r['item']]}" for r in c["rows"])
    return f"""## clrt against PyTorch ({c['pytorch']})

`bench/compare.sh`, {c['rounds']} rounds, {c['epochs']} epochs per training run ({'epochs 2 and later timed; the first carries start-up work' if c['epochs'] > 1 else 'its one epoch timed'}), {c['threads']} threads on both sides. Ratio =
clrt's time / PyTorch's, per round (below 1: clrt faster). Both trainings start from
clrt's initial weights and see clrt's batch order.

{compare_table(c, pk)}

{items}{peak_note(pk)}

{compare_paragraph(c, mm, la)}

Last test accuracies: {acc}. CIFAR-10 data: {'the real files' if 'synthetic' not in c['cifar_dir'] else 'generated from seed 1 by `bench/make_cifar10.py` (the real binary format; no CIFAR-10 files on this machine)'}{f', first {c["limit"]} training images' if c.get('limit') else ''}."""


def peak_note(pk):
    if not pk:
        return ""
    return (f"\n\n\"/ peak\": the item's arithmetic per second (training: the model's GFLOP per "
            f"step from `bench/flops.py` x steps / time; SGEMM: 2n^3 / time) as a share of this "
            f"CPU device's measured FP32 peak, {pk['fma_gflops']:.1f} GFLOP/s (`clrt-bench peak`; "
            f"PyTorch runs on the same cores).")


def compare_paragraph(c, mm, la):
    """What limits each ratio, from this run's own figures."""
    rows = {r["item"]: r for r in c["rows"]}
    text = ["### What limits it", ""]
    hb = matmul_rows(mm, "cpu", mm_default_path(mm))
    for n in (128, 1024):
        r = rows.get(f"sgemm{n}")
        ob = at(hb, n, "openblas_seconds")
        if r and ob:
            text.append(f"- `sgemm{n}`: PyTorch's MKL reaches {gflops(n, r['pytorch']):.0f} GFLOP/s, "
                        f"OpenBLAS called directly {gflops(n, ob):.0f} ({mm['openblas_core']} kernels) "
                        f"and clrt {gflops(n, r['clrt']):.0f}: the BLAS sets the pace; clrt's own "
                        f"share is the gap to OpenBLAS in exercise 1 below.")
    la_by = {x["loop"]: x for x in la["rows"]}
    if "add" in rows and "bare_new_out" in la_by:
        r = rows["add"]
        text.append(f"- `add`: PyTorch adds 1000 floats in {us(r['pytorch'])} us on the calling "
                    f"thread; any OpenCL launch on PoCL costs more: the bare enqueue that "
                    f"allocates its output takes {us(la_by['bare_new_out']['seconds'])} us "
                    f"and clrt_add {us(r['clrt'])} us. The floor is PoCL's, not clrt's (launch table).")
    if "log-step" in rows and "log-end" in rows:
        a, b = rows["log-step"], rows["log-end"]
        text.append(f"- `log-step`, `log-end`: 1000 steps of a 100x100 product and a norm, "
                    f"{a['clrt'] / 1000 * 1e6:.0f} and {b['clrt'] / 1000 * 1e6:.0f} us per step in "
                    f"clrt against {a['pytorch'] / 1000 * 1e6:.0f} and "
                    f"{b['pytorch'] / 1000 * 1e6:.0f} in PyTorch: two dispatched commands per "
                    f"step on PoCL and the BLAS speed (see exercise 3).")
    for item, images in (("lenet", 60000), ("seed-cnn", c.get("limit") or 50000)):
        r, steps = rows.get(item), math.ceil(images / 256)
        if r:
            target = {"lenet": 0.8, "seed-cnn": 0.9}[item]
            verdict = "met" if r["ratio_median"] <= target else "not met"
            text.append(f"- `{item}`: {r['clrt'] / steps * 1e3:.1f} ms per training step in clrt, "
                        f"{r['pytorch'] / steps * 1e3:.1f} ms in PyTorch (oneDNN convolutions, MKL "
                        f"GEMMs); the target is at most {target}x PyTorch's time: {verdict}. Where "
                        f"the step's time goes: docs/INTERNALS.md, and `clrt-bench train --layers`.")
    return "\n".join(text)


def mm_default_path(mm):
    return next((r["path"] for r in mm["rows"] if r["device"] == "cpu" and r["default_path"]),
                "host-blas")


def matmul_rows(mm, device, path):
    return [r for r in mm["rows"] if r["device"] == device and r["path"] == path]


def crossover(rows, ratio):
    best = None
    for r in sorted(rows, key=lambda r: -r["n"]):
        if r["seconds"] <= 0 or r["openblas_seconds"] / r["seconds"] < ratio:
            break
        best = r["n"]
    return best


def peak_of(pk, device):
    """The measured peak record if it was taken on `device`, else None."""
    return pk if pk and pk["rows"][0]["device"] == device else None


def matmul_table(mm, device, path, pk=None):
    """pk: the device's clrt-bench peak, for the shares of its measured peak."""
    rows = matmul_rows(mm, device, path)
    pk = peak_of(pk, device)
    out = []
    for r in rows:
        ob = r["openblas_seconds"]
        nat = r.get("native_seconds", -1)
        out.append([r["n"], f"{gflops(r['n'], ob):.1f}", f"{gflops(r['n'], r['seconds']):.1f}",
                    f"**{ob / r['seconds']:.2f}**", f"{gflops(r['n'], r['latency_seconds']):.1f}",
                    f"{ob / r['latency_seconds']:.2f}", f"{r['first_seconds'] * 1e3:.2f}"]
                   + ([f"{ob / nat:.2f}"] if path == "host-blas" and nat > 0 else [])
                   + ([share(gflops(r["n"], ob), pk), share(gflops(r["n"], r["seconds"]), pk)]
                      if pk else []))
    keep, beat = crossover(rows, 0.9), crossover(rows, 1.0)
    cross = (f"Crossover: from n = {keep} on, {path} keeps up with OpenBLAS (>= 0.9x); "
             + (f"from n = {beat} it is at least as fast." if beat else "it is never faster in this range."))
    head = ["n", "OpenBLAS GFLOP/s", f"{path} GFLOP/s", "ratio", "1 call + sync GFLOP/s", "ratio",
            "1st call ms"] + (["bare native kernel ratio"] if path == "host-blas" and rows
                              and rows[0].get("native_seconds", -1) > 0 else [])
    head += ["OpenBLAS / peak", f"{path} / peak"] if pk else []
    return table(head, out) + "\n\n" + (cross if keep else
                                                          f"Crossover: {path} does not keep up with OpenBLAS at any size here.")


def at(rows, n, key="seconds"):
    r = next((r for r in rows if r["n"] == n), None)
    return r[key] if r else None


def section_matmul(mm, forced, pocl1, host_devices, pk=None):
    parts = ["## Exercise 1: square SGEMM, per device and GEMM path (`clrt-bench matmul`)", "",
             f"OpenBLAS {mm.get('openblas_config', '')}: kernels for **{mm['openblas_core']}**, "
             f"{mm['openblas_threads']} threads. Ratio = clrt's speed / OpenBLAS's (cblas_sgemm "
             "called directly in the same run, sample after sample). Below n = 512 a sample is "
             "several products back to back, then one synchronization; \"1 call + sync\" times a "
             "single product and the wait for it."]
    for dev in host_devices:
        for path in ("host-blas", "clblast"):
            if matmul_rows(mm, dev, path):
                parts += ["", f"### {dev}, {path}", "", matmul_table(mm, dev, path, pk)]
    if peak_of(pk, "cpu"):
        parts += ["", f"\"/ peak\": GFLOP/s as a share of the CPU device's measured FP32 peak, "
                      f"{pk['fma_gflops']:.1f} GFLOP/s (`clrt-bench peak`; OpenBLAS runs on the same "
                      f"cores)."]
    if forced:
        parts += ["", f"### cpu, host-blas, OpenBLAS's kernels for {forced['openblas_core']} forced "
                      f"(OPENBLAS_CORETYPE={forced['openblas_core']})", "",
                  matmul_table(forced, "cpu", "host-blas", pk)]
    parts += ["", "### What limits it", "", matmul_paragraph(mm, forced, pocl1)]
    return "\n".join(parts)


def matmul_paragraph(mm, forced, pocl1):
    hb = matmul_rows(mm, "cpu", "host-blas")
    if not hb:
        return "No host-blas figures in this run."
    if at(hb, 16) is None or at(hb, 128) is None:
        return "This run has no figures at n = 16 and 128, which this paragraph reads."
    r128 = at(hb, 128, "openblas_seconds") / at(hb, 128)
    fixed = at(hb, 16) - at(hb, 16, "openblas_seconds")
    text = [f"Target at n = 128: >= {TARGETS['matmul_128']}x OpenBLAS; measured **{r128:.2f}x** with "
            f"the kernels OpenBLAS picked ({mm['openblas_core']}): {verdict(r128 >= TARGETS['matmul_128'])}."]
    fr = matmul_rows(forced, "cpu", "host-blas") if forced else []
    if at(fr, 128):
        f128 = at(fr, 128, "openblas_seconds") / at(fr, 128)
        text.append(f"With OpenBLAS's {forced['openblas_core']} kernels the same product takes "
                    f"{us(at(fr, 128, 'openblas_seconds'))} us directly and {us(at(fr, 128))} us "
                    f"through clrt: **{f128:.2f}x** ({verdict(f128 >= TARGETS['matmul_128'])}).")
    text.append(
        f"Where the time goes: a clrt GEMM on the CPU device whose device has finished its queued "
        f"work, and is the only device the process opened, is cblas_sgemm on the calling thread "
        f"(gemm_host.c), as these back-to-back products are; behind queued work it is an OpenCL "
        f"native-kernel command that a PoCL worker thread runs. At n = 16, where the arithmetic "
        f"is nothing (OpenBLAS: {us(at(hb, 16, 'openblas_seconds'))} us), a product costs "
        f"{us(at(hb, 16))} us back to back and {us(at(hb, 16, 'latency_seconds'))} us with a "
        f"wait for it: about {us(fixed)} us per call is clrt's (argument checks, a table lookup "
        f"per buffer, and the idle check: a clFlush and an event query).")
    rows = fr if at(fr, 128, "native_seconds") else hb
    nat = at(rows, 128, "native_seconds")
    if nat and nat > 0:
        text.append(
            f"The queued path's floor is the \"bare native kernel\" column: the same cblas_sgemm "
            f"enqueued as a native kernel by plain OpenCL code, without clrt, reaches "
            f"{at(rows, 128, 'openblas_seconds') / nat:.2f}x at n = 128 (each command a hand-off "
            f"to a PoCL worker, which OpenBLAS's threads meet on 2 cores), against clrt's "
            f"{at(rows, 128, 'openblas_seconds') / at(rows, 128):.2f}x on the calling thread.")
    p1 = matmul_rows(pocl1, "cpu", "host-blas") if pocl1 else []
    if at(p1, 128, "native_seconds"):
        text.append(f"With one PoCL worker thread instead of two (POCL_MAX_PTHREAD_COUNT=1, same "
                    f"kernels), so that PoCL's second worker no longer wakes beside OpenBLAS's "
                    f"second thread, the bare native kernel reaches "
                    f"{at(p1, 128, 'openblas_seconds') / at(p1, 128, 'native_seconds'):.2f}x at "
                    f"n = 128; it would cost every OpenCL kernel half the cores, so clrt does not "
                    f"ask for it.")
    text.append("From n = 512 on, the dispatch is noise and clrt runs at OpenBLAS's speed.")
    if mm["openblas_core"] in ("Prescott", "Core2", "Penryn", "Nehalem"):
        text.append(
            f"OpenBLAS 0.3.21 does not know this CPU model and falls back to its generic "
            f"{mm['openblas_core']} kernels, several times slower than its AVX-512 ones (compare "
            f"the OpenBLAS columns): OPENBLAS_CORETYPE=SkylakeX (Haswell on AVX2-only CPUs) fixes "
            f"it for clrt's GEMMs. PyTorch's MKL picks its kernels by instruction set, so this "
            f"alone separates the two on GEMM-bound work here.")
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
    text = [f"Target on the CPU device: >= {TARGETS['transfer_1mib']}x memcpy from 1 MiB for copies "
            f"into tensors that exist (h2d, d2h, d2d); the lowest ratio from 1 MiB on is "
            f"**{worst[0]:.2f}x** ({worst[2].replace('_', ' ')} at {fmt_size(worst[1])}): "
            f"{verdict(worst[0] >= TARGETS['transfer_1mib'])}." if worst else
            "No sizes from 1 MiB in this run."]
    tiny = rows_by[small]
    h2d, d2d = tiny.get("h2d_pageable"), tiny.get("d2d")
    if h2d and d2d:
        text.append(
            f"On a CPU device whose buffers live in host memory, a blocking copy waits for the "
            f"queue to drain and then is one memcpy on the calling thread (`device/host_ptr.c`): "
            f"a {fmt_size(small)} h2d costs {us(h2d['seconds'])} us in all, so from a few KiB on "
            f"it runs at memcpy's speed, and pinned memory changes nothing (there is no DMA engine "
            f"to feed). A device-to-device copy is an asynchronous command that PoCL's worker "
            f"thread runs, not the calling one: {us(d2d['seconds'])} us per {fmt_size(small)} "
            f"copy back to back. memcpy's own speed falls with size as its buffers leave this "
            f"core's caches ({memcpy_curve(rows_by)}), so the reference is at its hardest around "
            f"1 MiB; from a few MiB on both sides are bound by memory bandwidth.")
    d_mib = rows_by.get(mib, {}).get("d2d")
    if d_mib and d2d:
        extra = d_mib["seconds"] - d_mib["memcpy_seconds"]
        text.append(
            f"`clrt_copy_` is its argument checks and one clEnqueueCopyBuffer; at 1 MiB a copy "
            f"takes {us(d_mib['seconds'])} us against memcpy's {us(d_mib['memcpy_seconds'])} us. "
            f"Everything per command (clrt's checks, PoCL's enqueue, its event) is at most the "
            f"{fmt_size(small)} figure, {us(d2d['seconds'])} us, and the wait that ends a sample "
            f"is shared by its {max(1, (8 << 20) // mib)} copies, so most of the "
            f"{us(extra)} us is PoCL's copy itself on its worker thread: the floor of an "
            f"asynchronous copy on this driver, which clrt does not control (a copy on the "
            f"calling thread would have to wait for the queue, against the no-wait rule).")
    to = [(b, v["d2d_to"]) for b, v in rows_by.items() if "d2d_to" in v and b >= mib]
    if to:
        b, r = min(to, key=lambda x: x[0])
        t0 = rows_by[small].get("d2d_to")
        text.append(f"`to()` onto another device is {r['memcpy_seconds'] / r['seconds']:.2f}x "
                    f"memcpy at {fmt_size(b)}, outside the target: it allocates its result and "
                    f"learns the new buffer's address with one command and a wait"
                    + (f" ({us(t0['seconds'])} us in all at {fmt_size(small)})" if t0 else "")
                    + ", and its copy is the first to touch the new pages.")
    return " ".join(text)


def memcpy_curve(rows_by):
    pts = []
    for b in sorted(rows_by):
        r = next(iter(rows_by[b].values()))
        pts.append(f"{b / r['memcpy_seconds'] * 1e-9:.0f} GB/s at {fmt_size(b)}")
    return ", ".join(pts[-5:])


def section_launch(la):
    by = {r["loop"]: r for r in la["rows"]}
    what = {"bare_fixed_out": "bare clEnqueueNDRangeKernel, fixed output",
            "bare_new_out": "bare, a new output buffer per call",
            "clrt_add": "clrt_add (a new output tensor per call)",
            "clrt_add_out": "clrt_add_out (fixed output)",
            "bare_wait_each": "bare, clFinish after every launch",
            "clrt_add_recorded": "clrt_add with inputs that require grad (recorded)"}
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
        f"itself, which is why no clrt op waits."] + ([
        "", f"Autograd's bookkeeping per recorded op (a node, its edges, freeing it): "
        f"**{us(by['clrt_add_recorded']['enqueue_seconds'] - by['clrt_add']['enqueue_seconds'])} "
        f"us** (target <= 1 us)."] if "clrt_add_recorded" in by else []))


def section_logging(lg, compare):
    r = lg["rows"][0]
    a, b = r["per_step_seconds"], r["at_end_seconds"]
    ref = ""
    if compare:
        rows = {x["item"]: x for x in compare["rows"]}
        if "log-step" in rows and "log-end" in rows:
            ref = (f" PyTorch on the CPU runs the same loops in {rows['log-step']['pytorch'] * 1e3:.1f} "
                   f"and {rows['log-end']['pytorch'] * 1e3:.1f} ms: its CPU ops are synchronous, so "
                   f"a log kept as tensors saves it nothing either.")
    diff = (a - b) / r["steps"]
    return "\n".join([
        "## Exercise 3: logging norms (`clrt-bench logging`)", "",
        table(["variant", "ms per run", "us per step"],
              [["(a) each norm read to the host", f"{a * 1e3:.1f}", us(a / r['steps'])],
               ["(b) norms kept on the device, read once", f"{b * 1e3:.1f}", us(b / r['steps'])],
               ["(a) / (b)", f"{a / b:.2f}x", ""]]), "",
        "### What limits it", "",
        f"{r['steps']} products of {r['n']}x{r['n']}, each followed by `clrt_norm` (two commands); "
        f"(b) adds a third, a 4-byte copy into the log's slot, and reads the log once. Reading "
        f"each norm costs {us(abs(diff))} us {'more' if diff > 0 else 'less'} per step than "
        f"keeping it: a read waits for the queue to drain, and the calling thread sleeps until "
        f"PoCL's worker has run the product and the norm, so the next product is not queued "
        f"behind the running one; the read itself is a 4-byte memcpy on this device. On a GPU "
        f"each read would also cross the bus, which is what the exercise is about; on a CPU "
        f"device the whole difference is that wait against one more queued command.{ref}"])


def multi_setting(doc):
    workers = doc.get("pocl_max_pthread_count") or "one per core"
    return [str(doc["openblas_threads"]), workers]


def section_multi(runs):
    """runs: {"defaults": doc, "pool": doc or None, "1worker": doc or None}."""
    base = runs["defaults"]
    seq, con = (next(r for r in base["rows"] if r["mode"] == m) for m in ("sequential", "concurrent"))
    labels = {"defaults": "defaults", "pool": "OpenBLAS's whole pool per product",
              "1worker": "defaults, one PoCL worker thread"}
    rows = []
    for key, doc in runs.items():
        if doc:
            by = {r["mode"]: r["seconds"] for r in doc["rows"]}
            rows.append([labels[key]] + multi_setting(doc) +
                        [f"{by['sequential'] * 1e3:.0f}", f"{by['concurrent'] * 1e3:.0f}",
                         f"**{doc['speedup']:.2f}x**"])
    n = base["n"]
    return "\n".join([
        "## Exercise 4: two products on two devices at once (`clrt-bench multi`)", "",
        f"Two products of {n}x{n} float32 matrices ({2e-9 * n ** 3:.1f} GFLOP each): (a) both on "
        f"{seq['device']}, one after the other, then one wait; (b) one on {con['device']} and one "
        f"on {con['second']['device']} at the same time, both submitted before waiting for either. "
        f"Median of {base['reps']} rounds, (a) and (b) alternating; every output checked against "
        f"a float64 reference. Ideal speed-up: {base['ideal_speedup']:.2f}x. OpenBLAS threads: "
        f"the count the timed rounds ran with.", "",
        table(["setting", "OpenBLAS threads", "PoCL workers", "(a) in sequence ms",
               "(b) at once ms", "speed-up (a) / (b)"], rows), "",
        "### What limits it", "", multi_paragraph(runs)])


def multi_paragraph(runs):
    def secs(doc, mode):
        return next(r["seconds"] for r in doc["rows"] if r["mode"] == mode)
    base, pool, one_worker = runs["defaults"], runs["pool"], runs["1worker"]
    devices = [base["rows"][1]["device"], base["rows"][1]["second"]["device"]]
    if not all(d.startswith("cpu") for d in devices):
        return (f"{' and '.join(devices)}: {base['speedup']:.2f}x of the ideal "
                f"{base['ideal_speedup']:.2f}x.")
    text = [f"Both devices are PoCL CPU devices on this host's cores, so the second device "
            f"adds a queue, not arithmetic. Once both devices run host GEMMs, clrt gives each "
            f"product {base['openblas_threads']} OpenBLAS thread (each on its own PoCL worker), "
            f"so that two devices' products do not each wake OpenBLAS's whole pool on the same "
            f"cores; each device's product then has a core of its own, and (b) gains "
            f"{base['speedup']:.2f}x over (a)."]
    if pool:
        alone1, alone_pool = secs(base, "sequential") / 2, secs(pool, "sequential") / 2
        split = secs(base, "concurrent") / secs(pool, "sequential")
        text.append(
            f"The cores set that figure, not the devices: one product takes "
            f"{alone1 * 1e3:.0f} ms on one thread and {alone_pool * 1e3:.0f} ms on OpenBLAS's "
            f"whole pool of {pool['openblas_threads']} (OPENBLAS_NUM_THREADS set in the "
            f"environment, which clrt leaves as it is; {alone1 / alone_pool:.2f}x), and two "
            f"products at once on one thread each take {secs(base, 'concurrent') * 1e3:.0f} ms "
            f"against {secs(pool, 'sequential') * 1e3:.0f} ms in sequence on the whole pool "
            f"({split:.2f}x the time)" +
            (": the same work on the same cores, however it is split." if 0.85 < split < 1.15
             else ".") +
            f" With the whole pool for every product, the two devices' products at once take "
            f"{secs(pool, 'concurrent') * 1e3:.0f} ms ({pool['speedup']:.2f}x).")
    if one_worker:
        text.append(
            f"PoCL's CPU driver runs the commands of all its devices on one pool of worker "
            f"threads (POCL_MAX_PTHREAD_COUNT of them); with one worker the two devices' "
            f"products take turns on it: {one_worker['speedup']:.2f}x.")
    text.append(
        "On a host with two GPUs the same command measures what the exercise is about. clrt's "
        "`clrt_device_synchronize` submits (flushes) only the queue it waits for, and a driver "
        "may hold queued work until then (NVIDIA's, Oclgrind), so (b) flushes each device's "
        "queue as soon as its product is enqueued.")
    return " ".join(text)


def section_scaling(text):
    """bench/scaling.sh's printed tables, as that run printed them."""
    return "\n".join([
        "## Data-parallel scaling (`bench/scaling.sh`)", "",
        "LeNet trained one core per worker: `one` device on one core, two PoCL `devs` in one "
        "process, two MPI `ranks`, and `pair`, two independent one-core trainings at once "
        "(this machine's own capacity for two jobs). Targets: two devices >= 1.7x one, and "
        ">= 90% of `pair`. docs/SCALING.md explains the time split.", "",
        "```", text.rstrip(), "```"])


def section_gpu(gpu_dir):
    if not gpu_dir:
        return ("## GPU figures\n\nNo GPU was at hand for this run (this machine has none). On a "
                "machine with one, `scripts/gpu_report.sh all` writes a report folder (README: "
                "\"A GPU report in one command\") and `bench/benchmarks.sh --render THIS_DIR --gpu "
                "DIR` adds it here.")
    report = load(gpu_dir, "report.md")
    if report:  # scripts/gpu_report.sh's folder: its report, one heading level down
        lines = report.splitlines()
        body = ["#" + ln if ln.startswith("#") else ln for ln in lines[1:]]
        return "\n".join([f"## GPU figures: {lines[0].lstrip('# ')}"] + body).rstrip()
    m = machine_facts(load(gpu_dir, "machine.txt"))
    mm, pk = load(gpu_dir, "matmul.json"), load(gpu_dir, "peak.json")
    parts = [f"## GPU figures ({m.get('date', '?')}, {m.get('cpu', '?')} host)", ""] + m["smi"]
    if pk:
        parts += ["", section_peak(pk).replace("## ", "### ", 1)]
    for dev in sorted({r["device"] for r in mm["rows"] if r["device"].startswith("gpu")}):
        parts += ["", f"### {dev}, clblast", "", matmul_table(mm, dev, "clblast", pk)]
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
    pk = load(a.results, "peak.json")
    if not all((mm, tr, la, lg)):
        sys.exit("benchmarks.py: missing clrt-bench results in " + a.results)
    host_devices = sorted({r["device"] for r in mm["rows"] if not r["device"].startswith("gpu")})
    print("# clrt benchmarks\n")
    print("Generated by `bench/benchmarks.sh` (rendered by `bench/benchmarks.py` from the "
          "saved results); do not edit by hand. Figures are medians; the machine is shared, "
          "so expect 20-50% between runs and trust the ratios, each taken against its "
          "reference in the same run.\n")
    multi = {k: load(a.results, f) for k, f in (("defaults", "multi.json"),
                                                  ("pool", "multi_pool.json"),
                                                  ("1worker", "multi_1worker.json"))}
    sections = [section_machine(m, compare, load(a.results, "notes.txt"), pk), section_commands(),
                section_exercises(compare, mm, lg, multi["defaults"])]
    if pk:
        sections.append(section_peak(pk))
    others = section_other_peaks(a.results)
    if others:
        sections.append(others)
    sections += [section_compare(compare, mm, la, pk),
                 section_matmul(mm, forced, load(a.results, "matmul_pocl1.json"), host_devices, pk),
                 section_logging(lg, compare)]
    if multi["defaults"]:
        sections.append(section_multi(multi))
    scaling = load(a.results, "scaling.txt")
    if scaling:
        sections.append(section_scaling(scaling))
    onnx = section_onnx(a.results)
    if onnx:
        sections.append(onnx)
    tail = [section_transfer(tr), section_launch(la)]
    nvptx = nvptx_section.section(a.results)
    if nvptx:
        tail.append(nvptx)
    for s in sections + tail + [section_gpu(a.gpu)]:
        print(s + "\n")


if __name__ == "__main__":
    main()
