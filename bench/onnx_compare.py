"""clrt-onnx against onnxruntime, inference time per batch, alternately in rounds.

  python bench/onnx_compare.py --clrt-onnx PATH [--models resnet18,mobilenet_v2]
         [--batches 1,16] [--rounds 3] [--size 224] [--threads 2] [--runs 10]
         [--warmup 3] [--device D] [--work DIR] [--json-out FILE] [--ort-only]
  python bench/onnx_compare.py ort-time MODEL --batch N [--threads 2] [--runs 10] [--warmup 3]
      (one onnxruntime measurement in this process; prints one JSON object)

Each model is exported once (tests/python/onnx_export.py: random weights,
seed 0, opset 17, symbolic batch, constant folding). In each round, for each
model and batch: `clrt-onnx bench MODEL --batch N --json` (its "median_s":
seconds per batch after warm-up, median of at least 10), then onnxruntime in
a child process of its own (CPUExecutionProvider, intra_op_num_threads =
--threads, inter_op 1, the same model and input shape; random normal input,
seed 0; --warmup runs, then the median of --runs), so that each side's peak
memory is its own process's maximum resident set (wait4's rusage;
onnxruntime's includes the Python interpreter, numpy and onnxruntime's
library, about 43 MiB here before the model; its "rss_before_session_kb" is that
baseline, from its own VmHWM). The parent stays small (the exports run in a
child too), since a child's getrusage peak counts what it had at fork. Prints each measurement, then a table of the ratio clrt /
onnxruntime (below 1: clrt faster) per case, min, median and max over the
rounds. Run it alone on the machine.
"""
import argparse
import json
import os
import platform
import select
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "python"))


def cpu_model():
    """The CPU's model name (/proc/cpuinfo), for the saved run."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.machine()


def vm_hwm_kb():
    """This process's peak resident set (Linux's VmHWM, which exec resets)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return None


def ort_time(a):
    import numpy as np

    import onnx_data

    rss0 = vm_hwm_kb()

    t0 = time.perf_counter()
    sess = onnx_data.ort_session(a.model, threads=a.threads)
    t_load = time.perf_counter() - t0
    inp = sess.get_inputs()[0]
    shape = [a.batch if not isinstance(d, int) else d for d in inp.shape]
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    feed = {inp.name: x}
    for _ in range(a.warmup):
        sess.run(None, feed)
    times = []
    for _ in range(a.runs):
        t0 = time.perf_counter()
        sess.run(None, feed)
        times.append(time.perf_counter() - t0)
    print(json.dumps({"median_s": statistics.median(times), "min_s": min(times), "max_s": max(times),
                      "runs": a.runs, "warmup": a.warmup, "threads": a.threads, "batch": a.batch,
                      "session_s": t_load, "rss_before_session_kb": rss0,
                      "max_rss_kb": vm_hwm_kb()}))
    return 0


def run_measured(cmd, timeout):
    """Runs cmd; returns (returncode, stdout, stderr, max RSS KiB, wall s) via wait4."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = t0 + timeout
    # Both pipes read as they fill (no deadlock), then wait4 for the
    # child's own rusage (Popen.wait would not give it).
    out, err = [], []
    streams = {p.stdout: out, p.stderr: err}
    while streams:
        left = deadline - time.perf_counter()
        if left <= 0:
            p.kill()
            break
        ready, _, _ = select.select(list(streams), [], [], left)
        for s in ready:
            chunk = os.read(s.fileno(), 65536)
            if chunk:
                streams[s].append(chunk.decode(errors="replace"))
            else:
                del streams[s]
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    rc = 124 if time.perf_counter() >= deadline else p.returncode
    return rc, "".join(out), "".join(err), ru.ru_maxrss, time.perf_counter() - t0


def last_json(text):
    for line in reversed(text.strip().splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                return json.loads(line)
            except json.JSONDecodeError:
                pass
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return None


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "ort-time":
        ap = argparse.ArgumentParser()
        ap.add_argument("cmd")
        ap.add_argument("model")
        ap.add_argument("--batch", type=int, required=True)
        ap.add_argument("--threads", type=int, default=2)
        ap.add_argument("--runs", type=int, default=10)
        ap.add_argument("--warmup", type=int, default=3)
        return ort_time(ap.parse_args())
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--clrt-onnx", default=os.environ.get("CLRT_ONNX"))
    ap.add_argument("--models", default="resnet18,mobilenet_v2")
    ap.add_argument("--batches", default="1,16")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--device")
    ap.add_argument("--work", default=os.path.join(HERE, ".data", "onnx"))
    ap.add_argument("--json-out")
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--ort-only", action="store_true", help="no clrt-onnx: onnxruntime's half only")
    a = ap.parse_args()
    if not a.ort_only and not (a.clrt_onnx and os.access(a.clrt_onnx, os.X_OK)):
        ap.error("--clrt-onnx PATH (or $CLRT_ONNX) to an executable is required (or --ort-only)")
    os.makedirs(a.work, exist_ok=True)
    # Exported in a child: this process stays small (no torch), so that the
    # peak RSS its children report (getrusage counts what a child had at
    # fork, i.e. this process's size) is theirs.
    models = {}
    for name in a.models.split(","):
        path = os.path.join(a.work, f"{name}_{a.size}.onnx")
        t0 = time.perf_counter()
        subprocess.run([sys.executable, os.path.join(HERE, "..", "tests", "python", "onnx_export.py"), name, path,
                        "--size", str(a.size), "--no-verify", "--json", path + ".json"],
                       check=True, stdout=subprocess.DEVNULL)
        with open(path + ".json") as fh:
            info = json.load(fh)
        print(f"export {name} {a.size}x{a.size}: {time.perf_counter() - t0:.1f} s, opset {info['opset']['ai.onnx']}, "
              f"ops {', '.join(f'{k} {v}' for k, v in info['ops'].items())}", flush=True)
        models[name] = path
    batches = [int(b) for b in a.batches.split(",")]
    results = []
    for r in range(a.rounds):
        for name, path in models.items():
            for b in batches:
                rec = {"round": r, "model": name, "batch": b, "size": a.size}
                if not a.ort_only:
                    cmd = [a.clrt_onnx, "bench", path, "--batch", str(b), "--json"]
                    if a.device:
                        cmd[3:3] = ["--device", a.device]
                    rc, out, err, rss, wall = run_measured(cmd, a.timeout)
                    j = last_json(out) if rc == 0 else None
                    if j is None or "median_s" not in j:
                        tail = " | ".join((err or out).strip().splitlines()[-3:])
                        print(f"round {r} {name} batch {b}: clrt-onnx bench failed (exit {rc}): {tail}", flush=True)
                        rec["clrt_error"] = f"exit {rc}: {tail}"
                    else:
                        rec.update(clrt_s=j["median_s"], clrt_max_rss_kb=rss, clrt_json=j, clrt_wall_s=wall)
                        print(f"round {r} {name} batch {b}: clrt-onnx {j['median_s']:.4f} s/batch "
                              f"(peak RSS {rss / 1024:.0f} MiB)", flush=True)
                cmd = [sys.executable, os.path.abspath(__file__), "ort-time", path, "--batch", str(b),
                       "--threads", str(a.threads), "--runs", str(a.runs), "--warmup", str(a.warmup)]
                rc, out, err, rss, wall = run_measured(cmd, a.timeout)
                j = last_json(out) if rc == 0 else None
                if j is None:
                    print(f"round {r} {name} batch {b}: onnxruntime failed (exit {rc}): {err.strip()[-300:]}", flush=True)
                    rec["ort_error"] = f"exit {rc}"
                else:
                    rss = j.get("max_rss_kb") or rss
                    rec.update(ort_s=j["median_s"], ort_max_rss_kb=rss, ort_json=j, ort_wall_s=wall)
                    print(f"round {r} {name} batch {b}: onnxruntime {j['median_s']:.4f} s/batch "
                          f"(min {j['min_s']:.4f}, max {j['max_s']:.4f}; peak RSS {rss / 1024:.0f} MiB, "
                          f"{j['rss_before_session_kb'] / 1024:.0f} MiB before the session)"
                          + (f"; clrt / onnxruntime {rec['clrt_s'] / j['median_s']:.2f}" if "clrt_s" in rec else ""),
                          flush=True)
                results.append(rec)
    print()
    print(f"{'model':<14} {'batch':>5} {'clrt s/batch':>13} {'ort s/batch':>12} {'ratio clrt/ort (min..max)':>27} "
          f"{'clrt MiB':>9} {'ort MiB':>8} {'clrt dev MiB':>12}")
    summary = []
    for name in models:
        for b in batches:
            rs = [x for x in results if x["model"] == name and x["batch"] == b]
            c = [x["clrt_s"] for x in rs if "clrt_s" in x]
            o = [x["ort_s"] for x in rs if "ort_s" in x]
            ratios = [x["clrt_s"] / x["ort_s"] for x in rs if "clrt_s" in x and "ort_s" in x]
            cm = max((x["clrt_max_rss_kb"] for x in rs if "clrt_s" in x), default=None)
            om = max((x["ort_max_rss_kb"] for x in rs if "ort_s" in x), default=None)
            # clrt's own count of its values' device memory (clrt_onnx_peak_bytes)
            dm = max((x["clrt_json"].get("peak_device_mib", 0) for x in rs if "clrt_json" in x),
                     default=None)
            s = {"model": name, "batch": b, "clrt_median_s": statistics.median(c) if c else None,
                 "ort_median_s": statistics.median(o) if o else None,
                 "ratio_median": statistics.median(ratios) if ratios else None,
                 "ratio_min": min(ratios) if ratios else None, "ratio_max": max(ratios) if ratios else None,
                 "clrt_max_rss_kb": cm, "ort_max_rss_kb": om, "clrt_peak_device_mib": dm}
            summary.append(s)

            def f(v, fmt):
                return format(v, fmt) if v is not None else "-"

            rat = (f"{s['ratio_median']:.2f} ({s['ratio_min']:.2f}..{s['ratio_max']:.2f})" if ratios else "-")
            print(f"{name:<14} {b:>5} {f(s['clrt_median_s'], '.4f'):>13} {f(s['ort_median_s'], '.4f'):>12} "
                  f"{rat:>27} {f(cm and cm / 1024, '.0f'):>9} {f(om and om / 1024, '.0f'):>8} "
                  f"{f(dm, '.0f'):>12}")
    if a.json_out:
        from importlib.metadata import version

        with open(a.json_out, "w") as fh:
            json.dump({"date": time.strftime("%Y-%m-%dT%H:%MZ", time.gmtime()), "machine": cpu_model(), "cpus": os.cpu_count(), "onnxruntime": version("onnxruntime"),
                       "torch": version("torch"), "args": vars(a), "rounds": results, "summary": summary},
                      fh, indent=1)
    bad = [x for x in results if "ort_error" in x or "clrt_error" in x]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
