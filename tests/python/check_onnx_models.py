"""clrt-onnx against onnxruntime on torchvision classifiers with random weights.

For each model (exported by onnx_export.py: opset 17, symbolic batch) and
each batch size: a random normal input, onnxruntime's output
(CPUExecutionProvider, 2 threads), then
  clrt-onnx run MODEL [--device D] --input in.pb --output-dir DIR
and DIR/output_0.pb against onnxruntime's: numpy's allclose (|clrt - ort| <=
atol + rtol |ort|, rtol 1e-3, atol 1e-4), the same shape, no NaN or infinity.
One line per case with the largest absolute and relative errors; exits 1 if
any case fails (clrt-onnx exiting 2, an unsupported op, is a failure too,
printed with the line clrt-onnx wrote about it, unless --allow-unsupported).

  python check_onnx_models.py [--clrt-onnx PATH] [--work DIR] [--size 64]
         [--models resnet18,mobilenet_v2] [--batches 1,4] [--device D]
         [--no-constant-folding] [--test-dirs] [--ort-only]

--clrt-onnx defaults to $CLRT_ONNX. --size 224 is the full ImageNet input
(the default, 64, keeps CI quick). --test-dirs also writes each case as an
ONNX backend-test folder (WORK/tests/MODEL_bN) and runs `clrt-onnx test` on
them, which must close with "N passed, 0 failed". --ort-only exports and
computes the references without clrt-onnx (for checking this script).
"""
import argparse
import os
import re
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import onnx_data  # noqa: E402
import onnx_export  # noqa: E402

DEFAULT_MODELS = "resnet18,mobilenet_v2,squeezenet1_1,shufflenet_v2_x0_5,efficientnet_b0"


def unsupported_line(text):
    """The line clrt-onnx printed about the unsupported op (else its last line)."""
    lines = [l for l in text.splitlines() if l.strip()]
    for l in lines:
        if re.search(r"unsupported|not supported", l, re.I):
            return l.strip()
    return lines[-1].strip() if lines else "(clrt-onnx printed nothing)"


def run_clrt(prog, model, inputs, out_dir, device, timeout):
    cmd = [prog, "run", model]
    if device:
        cmd += ["--device", device]
    for p in inputs:
        cmd += ["--input", p]
    cmd += ["--output-dir", out_dir]
    t0 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    return r, time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--clrt-onnx", default=os.environ.get("CLRT_ONNX"))
    ap.add_argument("--work", default="/tmp/clrt-onnx-check")
    ap.add_argument("--size", type=int, default=64)
    ap.add_argument("--models", default=DEFAULT_MODELS)
    ap.add_argument("--batches", default="1,4")
    ap.add_argument("--device")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--rtol", type=float, default=1e-3)
    ap.add_argument("--atol", type=float, default=1e-4)
    ap.add_argument("--no-constant-folding", action="store_true",
                    help="export with BatchNormalization nodes kept (state_dict names)")
    ap.add_argument("--allow-unsupported", action="store_true",
                    help="count clrt-onnx's exit 2 (unsupported op) as skipped, not failed")
    ap.add_argument("--test-dirs", action="store_true", help="also run `clrt-onnx test` on backend-test folders")
    ap.add_argument("--ort-only", action="store_true", help="no clrt-onnx: export and onnxruntime only")
    ap.add_argument("--timeout", type=float, default=300, help="seconds for one clrt-onnx command")
    a = ap.parse_args()
    if not a.ort_only:
        if not a.clrt_onnx:
            ap.error("--clrt-onnx PATH or $CLRT_ONNX is required (or --ort-only)")
        if not os.access(a.clrt_onnx, os.X_OK):
            ap.error(f"{a.clrt_onnx}: not an executable")
    os.makedirs(a.work, exist_ok=True)
    import torch

    torch.set_num_threads(2)
    batches = [int(b) for b in a.batches.split(",")]
    failed, skipped, passed, test_dirs = [], [], 0, []
    for name in a.models.split(","):
        model = os.path.join(a.work, f"{name}_{a.size}.onnx")
        t0 = time.perf_counter()
        info = onnx_export.export(name, model, a.size, not a.no_constant_folding, a.seed, verify=False)
        print(f"{name}: exported {a.size}x{a.size}, opset {info['opset']['ai.onnx']}, "
              f"{sum(info['ops'].values())} nodes ({', '.join(info['ops'])}) in {time.perf_counter() - t0:.1f} s",
              flush=True)
        sess = onnx_data.ort_session(model)
        for b in batches:
            case = f"{name} {a.size}x{a.size} batch {b}"
            d = os.path.join(a.work, f"{name}_{a.size}_b{b}")
            os.makedirs(d, exist_ok=True)
            x = onnx_data.random_inputs(model, b, a.seed * 1000 + b)
            in_pb = os.path.join(d, "in.pb")
            onnx_data.write_pb(in_pb, x[0], "input")
            t0 = time.perf_counter()
            want = onnx_data.ort_run(model, x, sess)[0]
            t_ort = time.perf_counter() - t0
            if a.test_dirs:
                td = os.path.join(a.work, "tests", f"{name}_{a.size}_b{b}")
                onnx_data.make_test_dir(model, td, [x], outputs=[[want]])
                test_dirs.append(td)
            if a.ort_only:
                print(f"{case}: onnxruntime {t_ort:.3f} s, output {list(want.shape)}, "
                      f"max |output| {np.abs(want).max():.3g} (no clrt-onnx run)", flush=True)
                continue
            out_dir = os.path.join(d, "out")
            os.makedirs(out_dir, exist_ok=True)
            for f in os.listdir(out_dir):
                os.remove(os.path.join(out_dir, f))
            try:
                r, t_clrt = run_clrt(a.clrt_onnx, model, [in_pb], out_dir, a.device, a.timeout)
            except subprocess.TimeoutExpired:
                print(f"{case}: FAIL clrt-onnx ran past {a.timeout:.0f} s", flush=True)
                failed.append(case)
                continue
            if r.returncode == 2:
                line = unsupported_line(r.stderr + "\n" + r.stdout)
                if a.allow_unsupported:
                    print(f"{case}: SKIP unsupported op: {line}", flush=True)
                    skipped.append(case)
                else:
                    print(f"{case}: FAIL unsupported op: {line}", flush=True)
                    failed.append(case)
                continue
            if r.returncode != 0:
                tail = (r.stderr or r.stdout).strip().splitlines()[-5:]
                print(f"{case}: FAIL clrt-onnx exited {r.returncode}:\n    " + "\n    ".join(tail), flush=True)
                failed.append(case)
                continue
            out_pb = os.path.join(out_dir, "output_0.pb")
            if not os.path.exists(out_pb):
                print(f"{case}: FAIL no {out_pb}", flush=True)
                failed.append(case)
                continue
            got = onnx_data.read_pb(out_pb)
            ok, ea, er, msg = onnx_data.compare(got, want, a.rtol, a.atol)
            print(f"{case}: {'ok' if ok else 'FAIL'} max abs err {ea:.3g}, max rel err {er:.3g} "
                  f"(max |ort| {np.abs(want).max():.3g}; clrt-onnx {t_clrt:.2f} s, onnxruntime {t_ort:.3f} s)"
                  + (f": {msg}" if msg else ""), flush=True)
            if ok:
                passed += 1
            else:
                failed.append(case)
    if a.test_dirs and not a.ort_only:
        r = subprocess.run([a.clrt_onnx, "test", *test_dirs], capture_output=True, text=True, timeout=a.timeout * 4)
        out = r.stdout + r.stderr
        m = re.search(r"(\d+) passed, (\d+) failed, (\d+) skipped", out)
        summary = m.group(0) if m else "(no summary line)"
        good = m and int(m.group(2)) == 0 and int(m.group(1)) + int(m.group(3)) == len(test_dirs) and r.returncode == 0
        if m and int(m.group(3)) and not a.allow_unsupported:
            good = False
        print(f"clrt-onnx test on {len(test_dirs)} folders: {summary}, exit {r.returncode}: {'ok' if good else 'FAIL'}")
        if not good:
            print("    " + "\n    ".join(out.strip().splitlines()[-10:]))
            failed.append("clrt-onnx test")
    print(f"check_onnx_models: {passed} passed, {len(failed)} failed, {len(skipped)} skipped")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
