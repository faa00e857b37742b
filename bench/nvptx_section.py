"""BENCHMARKS.md's section on the NVIDIA build of every kernel, rendered from
what scripts/nvptx.sh saved in bench/results/nvptx/ (summary.json and one
sm_XX.tsv per architecture; scripts/nvptx_check.py writes them). Used by
bench/benchmarks.py; nothing here is measured or typed by hand."""
import json
import os

ARCH_ORDER = ("sm_70", "sm_80", "sm_90")


def read_tsv(path):
    with open(path) as f:
        lines = f.read().splitlines()
    head = lines[0].split("\t")
    return [dict(zip(head, ln.split("\t"))) for ln in lines[1:] if ln]


def load(folder):
    """(summary, {arch: rows}) or None when the folder holds no run."""
    path = os.path.join(folder, "summary.json")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        summary = json.load(f)
    archs = [a for a in ARCH_ORDER if a in summary["archs"]]
    archs += sorted(a for a in summary["archs"] if a not in archs)
    return summary, {a: read_tsv(os.path.join(folder, f"{a}.tsv")) for a in archs}


def md_table(head, rows, text_columns=1):
    """A Markdown table: the first text_columns left-aligned, the rest right."""
    align = ["---" if i < text_columns else "---:" for i in range(len(head))]
    out = ["| " + " | ".join(head) + " |", "|" + "|".join(align) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def headline(summary):
    rows = []
    for arch, s in summary["archs"].items():
        rows.append([f"`{arch}`", summary["tools"].get(f"ptxas_{arch}", "?"), s["kernels"],
                     f"{s['max_registers']} ({s['max_registers_kernel']})", s["spilling"],
                     s["spill_bytes"], s["errors"], s["launch_checked"],
                     s["infeasible_launches"], s["min_max_wg"], s["stack_kernels"]])
    return md_table(["arch", "ptxas", "kernels", "most registers (program [options] kernel)",
                     "spilling", "spill bytes", "build errors", "launch sizes checked",
                     "beyond the registers", "smallest register-limited work-group",
                     "with a stack frame"], rows, 2)


def merged_rows(tables):
    """One row per (program, options, kernel): the registers per arch, the
    worst of the rest."""
    archs = list(tables)
    keyed = {}
    for arch in archs:
        for r in tables[arch]:
            keyed.setdefault((r["program"], r["options"], r["kernel"]), {})[arch] = r
    rows = []
    for (prog, opts, kernel), per in sorted(keyed.items()):
        def worst(value, pick=max):
            vals = [value(per[a]) for a in archs if a in per and per[a]["registers"] != ""]
            return pick(vals) if vals else ""
        verdicts = sorted({f"{a}: {per[a]['verdict']}" for a in archs
                           if a in per and per[a]["verdict"] != "ok"})
        launched = next((per[a]["launched"] for a in archs if a in per), "")
        rows.append([prog, f"`{opts}`" if opts else "", kernel,
                     " / ".join(per[a]["registers"] if a in per else "?" for a in archs),
                     worst(lambda r: int(r["spill_stores"]) + int(r["spill_loads"])),
                     worst(lambda r: int(r["stack"])), worst(lambda r: int(r["shared"])),
                     worst(lambda r: int(r["max_wg_regs"]), min),
                     launched or "not launched", "; ".join(verdicts) or "ok"])
    return rows


def section(results):
    """The section, or None when bench/results/nvptx (beside RESULTS) has no run."""
    folder = os.path.join(os.path.dirname(os.path.abspath(results)), "nvptx")
    loaded = load(folder)
    if not loaded:
        return None
    summary, tables = loaded
    tools, archs = summary["tools"], list(tables)
    failing = sum(s["failing"] for s in summary["archs"].values())
    never = summary.get("families_never_built", [])
    rows = merged_rows(tables)
    kernels = md_table(["program", "options", "kernel", "registers " + " / ".join(archs),
                        "spill bytes", "stack bytes", "shared bytes",
                        "largest work-group the registers allow", "largest launched",
                        "verdict"], rows, 3)
    return "\n".join([
        "## Every kernel built for NVIDIA's GPUs (`scripts/nvptx.sh`)", "",
        f"What the GPU path builds on {' and '.join(summary['devices'])} "
        f"(`tests/nvptx/gpu_pose.c`: PoCL's device answering NVIDIA's device queries for "
        "those cards, so clrt takes its GPU path and still computes), recorded with "
        "`CLRT_PROGRAM_LOG` over the shipped models' training and evaluation steps under each "
        "`CLRT_CONV_ALGO`, `clrt-bench peak` and the kernel suites: "
        f"{summary['programs']} programs (family and `-D` options), each compiled by "
        f"{tools.get('clang', 'clang')} for the `nvptx64` target against libclc "
        f"{tools.get('libclc', '?')} (`nvptx64--nvidiacl`) and assembled by `ptxas -v` for "
        f"{', '.join(f'`{a}`' for a in archs)} (the CUDA release of each ptxas is in the "
        "table: CUDA 13 no longer builds for Volta). A kernel fails on a build error, a spill, a "
        "launched work-group larger than its registers allow (65536 registers an SM, in four "
        "partitions, allocated 256 a warp), or local memory over 48 KiB. "
        + (f"**{failing} failing.**" if failing else "Every kernel passes.")
        + (f" Families no run built: {', '.join(never)}." if never else ""), "",
        headline(summary), "",
        "Registers differ a little between architectures (one PTX, targeted at `sm_70`, "
        "assembled for each); `largest launched` is the largest work-group clrt asked for in "
        "those runs (`-`: only sizes the driver picks). Stack bytes are private arrays kept "
        "in local memory, not spills.", "",
        f"<details><summary>All {len(rows)} kernels</summary>", "",
        kernels, "", "</details>"])
