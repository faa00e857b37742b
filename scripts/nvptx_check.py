#!/usr/bin/env python3
"""Builds the programs clrt built in a run for NVIDIA's GPUs and checks each
kernel: scripts/nvptx.sh's second half (call that script, not this one).

Reads CLRT_PROGRAM_LOG files (runtime/device/program_log_internal.h: each
program built, each work-group shape launched), compiles every distinct
(family, options) with clang's nvptx64 target against libclc's
nvptx64--nvidiacl builtins, assembles the PTX with ptxas for each
architecture, and writes one table per architecture (ARCH.tsv) and
summary.json to the output folder. A kernel fails on a build error, on any
spill, on a launch whose work-group is larger than its registers allow, or
whose local memory (static + __local arguments) is over 48 KiB.

The largest work-group the registers allow, as CUDA's occupancy rules give
it for sm_70 to sm_90: registers are allocated per warp in units of 256,
each of an SM's four partitions holds 16384, a block's warps spread over
the four, and no block is larger than 1024 threads:
    per_warp = ceil(regs * 32 / 256) * 256
    max_wg = min(1024, 4 * floor(16384 / per_warp) * 32)
(64 registers give 1024, 72 give 896, 128 give 512, 255 give 256.)

Exit status 0 when every kernel passes, 1 otherwise."""
import argparse
import concurrent.futures
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

LOCAL_MEM_BYTES = 48 << 10
MAX_WG = 1024
COLUMNS = ["program", "options", "kernel", "registers", "spill_stores", "spill_loads",
           "stack", "shared", "max_wg_regs", "launched", "local_args", "verdict"]


def canonical_options(options):
    """The options that change the code: -D and the like, without the OpenCL
    C version every program has and the -Werror the tests add."""
    words = [w for w in options.split() if w not in ("-cl-std=CL1.2", "-Werror")]
    return " ".join(words)


def read_logs(paths):
    """builds: (family, options) -> runs that built it; launches: (family,
    options, kernel) -> {"shapes": set, "local_args": max bytes}; device
    names seen."""
    builds, launches, devices = {}, {}, set()
    for path in paths:
        run = os.path.splitext(os.path.basename(path))[0]
        with open(path) as f:
            for line in f:
                if not line.strip() or line.startswith("#"):
                    continue
                parts = line.rstrip("\n").split("\t")
                if parts[0] == "build" and len(parts) == 4:
                    devices.add(parts[1])
                    builds.setdefault((parts[2], canonical_options(parts[3])), set()).add(run)
                elif parts[0] == "launch" and len(parts) == 7:
                    devices.add(parts[1])
                    key = (parts[2], canonical_options(parts[3]), parts[4])
                    entry = launches.setdefault(key, {"shapes": set(), "local_args": 0})
                    entry["shapes"].add(parts[5])
                    entry["local_args"] = max(entry["local_args"], int(parts[6]))
                else:
                    sys.exit(f"nvptx: {path}: not a CLRT_PROGRAM_LOG line: {line!r}")
    return builds, launches, devices


def shape_size(shape):
    """Work items in a work-group "AxBxC"; None for "-" (the driver picks)."""
    if shape == "-":
        return None
    size = 1
    for n in shape.split("x"):
        size *= int(n)
    return size


def max_wg_for(regs):
    per_warp = -(-regs * 32 // 256) * 256
    return min(MAX_WG, 4 * (16384 // per_warp) * 32)


def source_of(family, kernel_dir, common):
    """The program's text as clrt hands it to the driver (kernel_source.c):
    common.cl, a line break, then the family's file."""
    with open(common) as f:
        head = f.read()
    with open(os.path.join(kernel_dir, family + ".cl")) as f:
        return head + "\n" + f.read()


def compile_ptx(tools, family, options, kernel_dir, common, work):
    """(ptx path, None) or (None, error text)."""
    name = re.sub(r"[^A-Za-z0-9_.=-]+", "_", f"{family} {options}")[:150]
    src, ptx = os.path.join(work, name + ".cl"), os.path.join(work, name + ".ptx")
    try:
        with open(src, "w") as f:
            f.write(source_of(family, kernel_dir, common))
    except OSError as e:
        return None, f"source: {e}"
    cmd = [tools["clang"], "-x", "cl", "-cl-std=CL1.2", "-target", "nvptx64--nvidiacl",
           "-Xclang", "-target-cpu", "-Xclang", tools["ptx_target"],
           "-Xclang", "-finclude-default-header",
           "-Xclang", "-mlink-builtin-bitcode", "-Xclang", tools["libclc"],
           "-O3", "-S", "-o", ptx] + shlex.split(options) + [src]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        return None, f"clang: {p.stderr.strip()[-2000:]}"
    return ptx, None


def parse_ptxas(text):
    """kernel -> {registers, spill_stores, spill_loads, stack, shared} from
    ptxas -v's report."""
    kernels, current = {}, None
    for line in text.splitlines():
        m = re.search(r"Compiling entry function '([^']+)'", line)
        if m:
            current = m.group(1)
            kernels[current] = {"registers": 0, "spill_stores": 0, "spill_loads": 0,
                                "stack": 0, "shared": 0}
            continue
        if current is None:
            continue
        k = kernels[current]
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads",
                      line)
        if m:
            k["stack"], k["spill_stores"], k["spill_loads"] = map(int, m.groups())
        m = re.search(r"Used (\d+) registers", line)
        if m:
            k["registers"] = int(m.group(1))
            s = re.search(r"(\d+) bytes smem", line)
            k["shared"] = int(s.group(1)) if s else 0
    return kernels


def assemble(ptxas, arch, ptx):
    """(kernels, None) or (None, error text)."""
    p = subprocess.run([ptxas, f"-arch={arch}", "-v", ptx, "-o", os.devnull],
                       capture_output=True, text=True)
    if p.returncode != 0:
        return None, f"ptxas -arch={arch}: {(p.stderr or p.stdout).strip()[-2000:]}"
    return parse_ptxas(p.stderr + p.stdout), None


def launched_text(entry):
    """The largest work-group launched ("-": only shapes the driver picked;
    "" when never launched)."""
    if not entry:
        return ""
    sizes = [s for s in map(shape_size, entry["shapes"]) if s is not None]
    return str(max(sizes)) if sizes else "-"


def verdict_of(k, entry):
    """"ok", or what fails, for one kernel on one architecture."""
    why = []
    if k["spill_stores"] or k["spill_loads"]:
        why.append(f"spills ({k['spill_stores']} B stored, {k['spill_loads']} B loaded)")
    launched = launched_text(entry)
    if launched not in ("", "-") and int(launched) > max_wg_for(k["registers"]):
        why.append(f"launch {launched} > {max_wg_for(k['registers'])}")
    local = k["shared"] + (entry["local_args"] if entry else 0)
    if local > LOCAL_MEM_BYTES:
        why.append(f"local memory {local} B > {LOCAL_MEM_BYTES} B")
    return "; ".join(why) if why else "ok"


def rows_for(arch, family, options, result, launches):
    """Table rows of one program on one architecture; an error is one row."""
    kernels, error = result
    if error:
        return [[family, options, "*", "", "", "", "", "", "", "", "", "error: " + error]]
    rows = []
    for name in sorted(kernels):
        k, entry = kernels[name], launches.get((family, options, name))
        rows.append([family, options, name, k["registers"], k["spill_stores"], k["spill_loads"],
                     k["stack"], k["shared"], max_wg_for(k["registers"]), launched_text(entry),
                     entry["local_args"] if entry else "", verdict_of(k, entry)])
    for (fam, opts, name), entry in sorted(launches.items()):
        if fam == family and opts == options and name not in kernels:
            rows.append([family, options, name, "", "", "", "", "", "", launched_text(entry), "",
                         "error: launched, but not in the PTX"])
    return rows


def build_all(builds, tools, archs, kernel_dir, common, jobs):
    """(family, options) -> arch -> (kernels, error)."""
    work = tempfile.mkdtemp(prefix="clrt-nvptx.")

    def one(key):
        family, options = key
        ptx, error = compile_ptx(tools, family, options, kernel_dir, common, work)
        return key, {arch: assemble(ptxas, arch, ptx) if ptx else (None, error)
                     for arch, ptxas in archs.items()}

    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        return dict(pool.map(one, sorted(builds)))


def read_table(path):
    if not os.path.exists(path):
        return None
    with open(path) as f:
        lines = f.read().splitlines()
    return [ln.split("\t") for ln in lines[1:] if ln]


def write_table(path, rows):
    with open(path, "w") as f:
        f.write("\t".join(COLUMNS) + "\n")
        for r in rows:
            f.write("\t".join(str(c) for c in r) + "\n")


def key_changes(old, new):
    """Rows (program, options, kernel, launched) in one table and not the
    other: what the code builds and launches now against what was saved."""
    def keys(rows):
        return {(r[0], r[1], r[2], r[9]) for r in rows}
    return sorted(keys(new) - keys(old)), sorted(keys(old) - keys(new))


def summarize(arch, rows):
    ok = [r for r in rows if r[3] != ""]
    worst = max(ok, key=lambda r: int(r[3]), default=None)
    return {
        "kernels": len(rows),
        "max_registers": int(worst[3]) if worst else 0,
        "max_registers_kernel": f"{worst[0]} [{worst[1]}] {worst[2]}" if worst else "",
        "spilling": sum(1 for r in ok if int(r[4]) or int(r[5])),
        "spill_bytes": sum(int(r[4]) + int(r[5]) for r in ok),
        "stack_kernels": sum(1 for r in ok if int(r[6])),
        "errors": sum(1 for r in rows if r[11].startswith("error")),
        "infeasible_launches": sum(1 for r in rows if "launch " in r[11]),
        "local_memory_over": sum(1 for r in rows if "local memory" in r[11]),
        "failing": sum(1 for r in rows if r[11] != "ok"),
        "min_max_wg": min((int(r[8]) for r in ok), default=0),
        "launch_checked": sum(1 for r in ok if r[9] not in ("", "-")),
    }


def missing_families(builds, kernel_dir):
    """Families in the kernel folder that no run built (common.cl is part of
    every program)."""
    built = {family for family, _ in builds}
    have = {f[:-3] for f in os.listdir(kernel_dir) if f.endswith(".cl")} - {"common"}
    return sorted(have - built)


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("logs", nargs="+", help="CLRT_PROGRAM_LOG files (one per run)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--kernel-dir", required=True)
    ap.add_argument("--common", required=True, help="common.cl, put before every family")
    ap.add_argument("--arch", action="append", required=True, metavar="SM=PTXAS")
    ap.add_argument("--clang", required=True)
    ap.add_argument("--libclc", required=True)
    ap.add_argument("--ptx-target", default="sm_70")
    ap.add_argument("--device", action="append", default=[],
                    help="a device model the logs must name (the posed card)")
    ap.add_argument("--all-families", action="store_true",
                    help="fail when a family of --kernel-dir was never built")
    ap.add_argument("--strict", action="store_true",
                    help="fail when the saved table in --out lists other programs, kernels or "
                         "launch sizes than the logs (the committed table is stale)")
    ap.add_argument("--tools-note", action="append", default=[], metavar="KEY=TEXT")
    ap.add_argument("--jobs", type=int, default=2)
    return ap.parse_args()


def check_devices(devices, wanted):
    if wanted and devices - set(wanted):
        sys.exit(f"nvptx: the runs used {sorted(devices)}, not only the posed "
                 f"{wanted}: the GPU pose did not take")
    if wanted and not devices:
        sys.exit("nvptx: the runs built no program")


def main():
    a = parse_args()
    archs = dict(s.split("=", 1) for s in a.arch)
    builds, launches, devices = read_logs(a.logs)
    check_devices(devices, a.device)
    tools = {"clang": a.clang, "libclc": a.libclc, "ptx_target": a.ptx_target}
    results = build_all(builds, tools, archs, a.kernel_dir, a.common, a.jobs)
    os.makedirs(a.out, exist_ok=True)
    failed, summary = False, {"archs": {}, "programs": len(builds),
                              "devices": sorted(devices),
                              "tools": dict(s.split("=", 1) for s in a.tools_note)}
    for arch in archs:
        rows = [r for key in sorted(results) for r in rows_for(arch, *key, results[key][arch],
                                                               launches)]
        path = os.path.join(a.out, f"{arch}.tsv")
        old = read_table(path)
        write_table(path, rows)
        s = summary["archs"][arch] = summarize(arch, rows)
        for r in rows:
            if r[11] != "ok":
                print(f"nvptx: FAIL {arch} {r[0]} [{r[1]}] {r[2]}: {r[11]}")
        failed |= s["failing"] > 0
        if old is not None:
            added, gone = key_changes(old, rows)
            for k in added:
                print(f"nvptx: {arch}: built now, not in the saved table: {k}")
            for k in gone:
                print(f"nvptx: {arch}: in the saved table, no longer built: {k}")
            if (added or gone) and a.strict:
                print(f"nvptx: FAIL {arch}: the saved table was not what the code builds now; "
                      f"{path} is rewritten: commit it")
                failed = True
        print(f"nvptx: {arch}: {s['kernels']} kernels in {len(builds)} programs, max "
              f"{s['max_registers']} registers ({s['max_registers_kernel']}), "
              f"{s['spilling']} spilling, {s['errors']} errors, "
              f"{s['infeasible_launches']} launches beyond the registers, "
              f"{s['launch_checked']} launch sizes checked")
    summary["programs_built_by"] = {f"{f} [{o}]": sorted(runs) for (f, o), runs in
                                    sorted(builds.items())}
    if a.all_families:
        summary["families_never_built"] = missing_families(builds, a.kernel_dir)
        for fam in summary["families_never_built"]:
            print(f"nvptx: FAIL no run built the family '{fam}': add a workload that uses it "
                  "(tests/nvptx/gpu_path.c, or a suite scripts/nvptx.sh runs)")
            failed = True
    with open(os.path.join(a.out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1, sort_keys=True)
        f.write("\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
