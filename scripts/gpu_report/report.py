#!/usr/bin/env python3
"""Writes scripts/gpu_report.sh's results folder from what its stages left
in WORK/raw: report.json (every figure and fact, the clrt-bench and
compare.py documents whole) and report.md (the report a person reads; the
tables come from bench/benchmarks.py, so BENCHMARKS.md and this report
count alike). gpu_report.sh adds logs.tar.gz beside them.

  report.py --work WORK --out OUT --repo REPO"""
import argparse
import datetime
import json
import os
import re
import sys
import xml.etree.ElementTree as ET


def read(raw, name):
    path = os.path.join(raw, name)
    if not os.path.exists(path):
        return None
    with open(path, errors="replace") as f:
        text = f.read()
    if name.endswith(".json"):
        try:
            return json.loads(text)
        except json.JSONDecodeError as e:
            return {"error": f"{name} is not JSON: {e}", "text": text[-2000:]}
    return text


def facts(text):
    """'key value' lines as a dict (repeated keys: a list)."""
    out = {}
    for line in (text or "").splitlines():
        key, _, value = line.partition(" ")
        if key:
            out.setdefault(key, []).append(value.strip())
    return {k: v[0] if len(v) == 1 else v for k, v in out.items()}


def tests_results(raw):
    """ctest's JUnit file: each test's name, status, seconds, and for the
    failed ones the end of its output."""
    path = os.path.join(raw, "tests.xml")
    if not os.path.exists(path):
        return None
    try:
        suite = ET.parse(path).getroot()
    except ET.ParseError as e:
        return {"error": f"tests.xml: {e}"}
    tests = []
    for case in suite.iter("testcase"):
        status = case.get("status") or "run"
        if case.find("failure") is not None:
            status = "failed"
        elif case.find("skipped") is not None:
            status = "skipped"
        elif status == "run":
            status = "passed"
        out = case.findtext("system-out") or ""
        tests.append({"name": case.get("name"), "status": status,
                      "seconds": float(case.get("time") or 0),
                      "output": "\n".join(out.strip().splitlines()[-15:]) if status == "failed" else ""})
    return tests


CTEST_LINE = re.compile(r"^\s*\d+/\d+ Test +#\d+: (\S+) \.*\s*(\*{0,3})(Passed|Failed|"
                        r"Not Run|Skipped|Timeout|Exception|\w+)[^0-9]*([0-9.]+) sec")


def tests_from_log(log):
    """The tests ctest finished before the stage's time limit stopped it
    (no JUnit file is written then), from its progress lines in the log."""
    tests = []
    for line in (log or "").splitlines():
        m = CTEST_LINE.match(line)
        if m:
            word = m.group(3)
            status = {"Passed": "passed", "Skipped": "skipped", "Not Run": "skipped"}.get(word,
                                                                                        "failed")
            tests.append({"name": m.group(1), "status": status, "seconds": float(m.group(4)),
                          "output": ""})
    return tests


def collect(raw):
    doc = {"generated": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%MZ"),
           "machine": facts(read(raw, "machine.txt")), "setup": facts(read(raw, "setup.txt")),
           "manifest": (read(raw, "manifest.txt") or "").splitlines(), "stages": {}}
    for f in sorted(os.listdir(raw)):
        if f.startswith("stage-") and f.endswith(".txt"):
            doc["stages"][f[6:-4]] = facts(read(raw, f))
    for key in ("smi", "peak", "matmul", "transfer", "launch", "logging", "compare",
                "compare_resnet18"):
        doc[key] = read(raw, key + ".json")
    for key in ("smi.txt", "clinfo.txt", "tune.txt", "resnet-skipped.txt"):
        doc[key.replace(".txt", "").replace("-", "_") + "_text"] = read(raw, key)
    excluded = read(raw, "tests-excluded.txt") or ""
    doc["tests"] = {"env": facts(read(raw, "tests-env.txt")),
                    "not_run": [line.split(" ", 1) for line in excluded.splitlines() if line],
                    "results": tests_results(raw)}
    cut_off = doc["stages"].get("tests", {}).get("status") == "timed out"
    if doc["tests"]["results"] is None and cut_off:
        doc["tests"]["results"] = tests_from_log(read(os.path.join(raw, "..", "logs"), "tests.log"))
        doc["tests"]["cut_off"] = True
    return doc


# --- the Markdown ---------------------------------------------------------------

def fence(text, lines=60):
    body = "\n".join((text or "").rstrip().splitlines()[-lines:])
    return "```\n" + body + "\n```"


def title(doc):
    m = doc["machine"]
    gpu = m.get("gpu")
    gpu = gpu[0] if isinstance(gpu, list) else gpu
    what = gpu.split(",")[0] if gpu else (
        f"{m.get('cpu', '?')} (stand-in: {m['stand_in']})" if m.get("stand_in", "none") != "none"
        else m.get("cpu", "?"))
    return f"# clrt on {what}, {m.get('date', doc['generated'])}"


def section_machine(doc):
    m, s = doc["machine"], doc["setup"]
    gpus = m.get("gpu") or []
    gpus = gpus if isinstance(gpus, list) else [gpus]
    lines = ["## The machine", ""]
    lines += [f"- GPU (nvidia-smi: name, driver, memory, max SM and memory clocks): {g}" for g in gpus]
    if s.get("stand_in"):
        lines.append(f"- **Stand-in run**: {s['stand_in']} in place of NVIDIA's OpenCL library and "
                     f"PyTorch on the CPU in place of CUDA; no GPU figures here")
    lib = s.get("opencl_library")
    if lib is None:  # setup stopped before it looked (the setup error below says why)
        lines.append("- OpenCL library: not registered (setup stopped before it looked for one)")
    else:
        lines.append(f"- OpenCL library registered in the prefix's ICD folder: `{lib}`"
                     + (f" (found by {s.get('opencl_found_by', '?')}; resolves to "
                        f"`{s.get('opencl_resolved', '?')}`)"
                        if lib != "none" else " (NVIDIA's libnvidia-opencl.so.1 was not found)"))
    lines += [f"- Host: {m.get('cpu', '?')} ({m.get('cpu_flags', '').strip() or 'no AVX2'}), "
              f"{m.get('cores', '?')} cores, {m.get('memory_gib', '?')} GiB; {m.get('os', '?')}",
              f"- PyTorch: {m.get('torch', '?')} ({m.get('python', '?')})",
              f"- clrt at commit `{m.get('commit', '?')}`, device `{m.get('device', '?')}`; "
              f"built by {s.get('compiler', '?')} with {s.get('cmake', '?')} in "
              f"{s.get('build_seconds', '?')} s",
              f"- Carried packages: {len(doc['manifest'])} ("
              + ", ".join(f"`{p.split()[0]} {p.split()[1]}`" for p in doc["manifest"][:40]
                          if len(p.split()) >= 2) + ")"]
    errors = s.get("error")
    for e in errors if isinstance(errors, list) else [errors] if errors else []:
        lines.append(f"- Setup error: {e}")
    if doc.get("smi_text"):
        lines += ["", "`clrt-smi`:", "", fence(doc["smi_text"])]
    return "\n".join(lines)


ORDER = ["setup", "smi", "tests", "peak", "bench", "tune", "train", "resnet"]


def section_stages(doc):
    names = sorted(doc["stages"], key=lambda n: ORDER.index(n) if n in ORDER else len(ORDER))
    def status(st):  # with the reason a failed stage gave (its log's last line)
        reason = st.get("reason")
        reason = reason[-1] if isinstance(reason, list) else reason
        return st.get("status", "?") + (f": {reason}".replace("|", "\\|") if reason else "")
    rows = [[n, status(doc["stages"][n]), doc["stages"][n].get("seconds", "?"),
             doc["stages"][n].get("finished", "?")] for n in names]
    return "## Stages\n\n" + bm.table(["stage", "status", "seconds", "finished"], rows)


def section_tests(doc):
    t = doc["tests"]
    res = t.get("results")
    if res is None:
        return "## Tests\n\nNot run."
    if isinstance(res, dict):
        return f"## Tests\n\n{res['error']}"
    count = {k: sum(1 for r in res if r["status"] == k) for k in ("passed", "failed", "skipped")}
    env = t.get("env", {})
    cut = (f" The stage reached its time limit: these are the {len(res)} tests ctest finished "
           f"before it was stopped, from its log." if t.get("cut_off") else "")
    parts = ["## Tests (`ctest -LE oclgrind`, full size)", "",
             f"On `{env.get('device', '?')}` (CLRT_TEST_DEVICE): **{count['passed']} passed, "
             f"{count['failed']} failed**, {count['skipped']} skipped, {len(t['not_run'])} not run, "
             f"in {sum(r['seconds'] for r in res):.0f} s of test time. Fashion-MNIST: "
             f"{env.get('fashion_mnist', '?')}.{cut}"]
    if t["not_run"]:
        parts += ["", "Not run here:", ""] + [f"- `{n[0]}`: {n[1] if len(n) > 1 else ''}"
                                              for n in t["not_run"]]
    failed = [r for r in res if r["status"] == "failed"]
    if failed:
        parts += ["", "Failed (the end of each one's output; logs.tar.gz has all of it):", ""]
        for r in failed:
            parts += [f"- `{r['name']}` ({r['seconds']:.1f} s)", "", fence(r["output"], 15), ""]
    slow = sorted(res, key=lambda r: -r["seconds"])[:5]
    parts += ["", "Slowest: " + ", ".join(f"`{r['name']}` {r['seconds']:.0f} s" for r in slow) + "."]
    return "\n".join(parts)


def section_gemm(doc, pk):
    mm = doc.get("matmul")
    if not mm or "rows" not in mm:
        return "## GEMM\n\nNot measured."
    parts = ["## GEMM (`clrt-bench matmul --paths default`)", "",
             "Square SGEMM through clrt's default path on each size, against the host CPU's "
             f"OpenBLAS ({mm.get('openblas_core', '?')} kernels, {mm.get('openblas_threads', '?')} "
             "threads) called directly in the same run; \"/ peak\": GFLOP/s as a share of the "
             "device's measured FP32 peak (the OpenBLAS column against the GPU's peak says "
             "little: it runs on the host)."]
    for dev in sorted({r["device"] for r in mm["rows"]}):
        for path in sorted({r["path"] for r in mm["rows"] if r["device"] == dev}):
            parts += ["", f"### {dev}, {path}", "", bm.matmul_table(mm, dev, path, pk)]
    return "\n".join(parts)


def section_transfer(doc):
    tr = doc.get("transfer")
    if not tr or "rows" not in tr:
        return ""
    by = {}
    for r in tr["rows"]:
        by.setdefault(r["bytes"], {})[r["mode"]] = r
    modes = [m for m in ("h2d_pageable", "h2d_pinned", "d2h_pageable", "d2h_pinned", "d2d", "d2d_to")
             if any(m in v for v in by.values())]
    rows = []
    for b in sorted(by):
        mc = next(iter(by[b].values()))["memcpy_seconds"]
        rows.append([bm.fmt_size(b), f"{b / mc * 1e-9:.2f}"] +
                    [f"{b / by[b][m]['seconds'] * 1e-9:.2f}" if m in by[b] else "-" for m in modes])
    return "\n".join(["## Transfers (`clrt-bench transfer`, GB/s)", "",
                      "Blocking copies between host and device, from pageable (malloc) and pinned "
                      "(mapped CL_MEM_ALLOC_HOST_PTR) memory, and copies on the device; memcpy "
                      "between two host buffers in the same run.", "",
                      bm.table(["size", "memcpy"] + [m.replace("_", " ") for m in modes], rows)])


def section_launch(doc):
    la, lg = doc.get("launch"), doc.get("logging")
    parts = []
    if la and "rows" in la:
        what = {"bare_fixed_out": "bare clEnqueueNDRangeKernel, fixed output",
                "bare_new_out": "bare, a new output buffer per call",
                "clrt_add": "clrt_add (a new output tensor per call)",
                "clrt_add_out": "clrt_add_out (fixed output)",
                "bare_wait_each": "bare, clFinish after every launch"}
        rows = [[what.get(r["loop"], r["loop"]), bm.us(r["enqueue_seconds"]), bm.us(r["seconds"])]
                for r in la["rows"]]
        parts += ["## Launch cost of one small op (`clrt-bench launch`, 1000 floats)", "",
                  f"{la.get('iters')} calls back to back, then one wait; medians of "
                  f"{la.get('repeats')} rounds, microseconds per call.", "",
                  bm.table(["loop", "enqueue us", "enqueue + run us"], rows)]
    if lg and "rows" in lg:
        r = lg["rows"][0]
        a, b = r["per_step_seconds"], r["at_end_seconds"]
        parts += ["", "## Exercise 3: logging norms (`clrt-bench logging`)", "",
                  f"{r['steps']} products of {r['n']}x{r['n']} and a norm: each norm read to the "
                  f"host {bm.us(a / r['steps'])} us per step, kept on the device and read once "
                  f"{bm.us(b / r['steps'])} us per step ({a / b:.2f}x)."]
    return "\n".join(parts)


def section_tune(doc):
    if not doc.get("tune_text"):
        return ""
    return "\n".join(["## CLBlast tuning", "",
                      "`clrt-smi --tune`: CLBlast's tuners on the device, the best parameters "
                      "stored in clrt's cache for it, then SGEMM with CLBlast's own parameters "
                      "against the stored ones (the end of the stage's output; the tuners' JSON "
                      "files and logs are in logs.tar.gz):", "", fence(doc["tune_text"], 40)])


def section_train(doc, pk):
    parts = []
    for key in ("compare", "compare_resnet18"):
        c = doc.get(key)
        if not c or "rows" not in c:
            continue
        acc = "; ".join(f"{k} {v:.4f}" for k, v in sorted(c.get("accuracy", {}).items()))
        synthetic = {k: "generated from a seed" if "synthetic" in (c.get(k) or "") else "files"
                     for k in ("cifar_dir", "fashion_dir")}
        limit = f", first {c['limit']} CIFAR-10 training images" if c.get("limit") else ""
        init = ", ".join(f"{m}: {'clrt' if v else 'PyTorch'}'s" for m, v in c.get("init", {}).items())
        parts += [f"## clrt against PyTorch ({c['pytorch']})", "",
                  f"`bench/compare.py`, clrt on `{c.get('device', '?')}`, PyTorch on "
                  f"`{c.get('torch_device', '?')}`; {c['rounds']} rounds, {c['epochs']} epochs per "
                  f"training run (epochs 2 and later timed), sides alternating. Ratio = clrt's time / "
                  f"PyTorch's (below 1: clrt faster). \"/ peak\": the arithmetic per second "
                  f"(`bench/flops.py`'s GFLOP per step x steps / time; SGEMM 2n^3 / time) as a share "
                  f"of the device's measured FP32 peak. Initial weights: {init or '?'}; "
                  f"batch order: clrt's.", "", bm.compare_table(c, pk), "",
                  "\n".join(f"- `{r['item']}`: {bm.ITEM_WHAT.get(r['item'], '')}" for r in c["rows"]),
                  "", f"Last test accuracies: {acc}. Data: CIFAR-10 {synthetic['cifar_dir']}, "
                  f"Fashion-MNIST {synthetic['fashion_dir']}{limit}.", ""]
    if doc.get("resnet_skipped_text"):
        parts += ["ResNet-18: " + doc["resnet_skipped_text"].strip()]
    if not parts:
        return "## clrt against PyTorch\n\nNot run."
    return "\n".join(parts).rstrip()


def render(doc):
    pk = doc.get("peak") if doc.get("peak") and "rows" in doc.get("peak") else None
    sections = [title(doc),
                "Written by `scripts/gpu_report.sh` (README: \"A GPU report in one command\"); "
                "`report.json` holds every figure, `logs.tar.gz` every stage's log and raw output.",
                section_machine(doc), section_stages(doc), section_tests(doc),
                bm.section_peak(pk) if pk else "## The device's limits\n\nNot measured.",
                section_gemm(doc, pk), section_transfer(doc), section_launch(doc),
                section_tune(doc), section_train(doc, pk)]
    return "\n\n".join(s for s in sections if s) + "\n"


def main():
    global bm
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--repo", required=True)
    a = ap.parse_args()
    sys.path.insert(0, os.path.join(a.repo, "bench"))
    import benchmarks as bm  # noqa: E402: the tables BENCHMARKS.md uses
    doc = collect(os.path.join(a.work, "raw"))
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "report.json"), "w") as f:
        json.dump(doc, f, indent=1)
    with open(os.path.join(a.out, "report.md"), "w") as f:
        f.write(render(doc))


bm = None

if __name__ == "__main__":
    main()
