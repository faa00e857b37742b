"""A ResNet-18 imported from ONNX and fine-tuned by clrt, back in torchvision.

  python check_onnx_finetune.py export DIR [--size 64] [--seed 0]
      DIR/resnet18.onnx: torchvision's resnet18 with random weights (seed),
      exported by onnx_export.py with --no-constant-folding, so the graph keeps
      its BatchNormalization nodes and every initializer its state_dict name
      (conv1.weight, bn1.running_var, layer2.0.downsample.1.bias, fc.weight ...);
      DIR/initial.safetensors: that model's state_dict (the values clrt
      starts from; checked equal to the ONNX initializers).
  python check_onnx_finetune.py check TUNED.safetensors [--initial DIR/initial.safetensors]
         [--changed PREFIX,...] [--unchanged PREFIX,...] [--min-shared N]
      loads clrt's file (safetensors) into torchvision's resnet18 with
      load_state_dict(strict=False) (num_classes from fc.weight's shape if
      there) and checks that every key the two share, with the same shape, now
      holds clrt's value exactly; reports how many matched, and the keys on
      either side that did not. With --initial: how many tensors differ from
      the initial values; at least one parameter must, every key under a
      --changed prefix must, and none under an --unchanged prefix may.
      --min-shared (default: all 102 tensors of the graph, i.e. every
      state_dict key but num_batches_tracked) is how many must be shared.
  python check_onnx_finetune.py run TOOL DIR [--size 64] [--epochs 3]
      the whole check: export into DIR, TOOL (onnx_finetune_tool) fine-tunes
      the import with clrt_train and saves DIR/tuned.safetensors (its loss
      must fall), then check against DIR/initial.safetensors with every
      parameter changed (conv, bn weight and bias, fc) and BatchNorm's
      running statistics, which the imported graph uses in inference form
      and keeps as buffers, unchanged.
Exits 1 on any failure.
"""
import subprocess
import argparse
import os
import sys

import numpy as np
import torch
import torchvision
from safetensors.torch import load_file, save_file

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import onnx_export  # noqa: E402


def export(a):
    import onnx
    from onnx import numpy_helper

    os.makedirs(a.dir, exist_ok=True)
    path = os.path.join(a.dir, "resnet18.onnx")
    info = onnx_export.export("resnet18", path, a.size, constant_folding=False, seed=a.seed, verify=True)
    print(onnx_export.describe(info))
    m = onnx_export.build("resnet18", a.seed, a.size)
    sd = {k: v.contiguous() for k, v in m.state_dict().items()}
    save_file(sd, os.path.join(a.dir, "initial.safetensors"))
    inits = {i.name: numpy_helper.to_array(i) for i in onnx.load(path).graph.initializer}
    bad = [k for k, v in inits.items() if k not in sd or not np.array_equal(v, sd[k].numpy())]
    if bad:
        print(f"initializers not equal to the state_dict's: {bad}")
        return 1
    print(f"{path}: {len(inits)} initializers, all with their state_dict names and values; "
          f"{os.path.join(a.dir, 'initial.safetensors')}: {len(sd)} tensors")
    return 0 if all(v["ok"] for v in info["verify"]) else 1


def prefixed(key, prefixes):
    return any(key == p or key.startswith(p) for p in prefixes)


def check(a):
    tuned = load_file(a.tuned)
    nc = tuned["fc.weight"].shape[0] if "fc.weight" in tuned and tuned["fc.weight"].dim() == 2 else 1000
    m = torchvision.models.resnet18(weights=None, num_classes=nc)
    ref = m.state_dict()
    shared = [k for k in tuned if k in ref and tuple(tuned[k].shape) == tuple(ref[k].shape)]
    wrong_shape = [k for k in tuned if k in ref and k not in shared]
    only_file = [k for k in tuned if k not in ref]
    only_model = [k for k in ref if k not in tuned]
    res = m.load_state_dict({k: tuned[k] for k in shared}, strict=False)
    after = m.state_dict()
    not_loaded = [k for k in shared
                  if not torch.equal(after[k], tuned[k].to(after[k].dtype))
                  or (after[k].is_floating_point() and not tuned[k].is_floating_point())]
    fails = []
    print(f"{a.tuned}: {len(tuned)} tensors; torchvision resnet18 (num_classes {nc}): {len(ref)} keys")
    print(f"  shared (same name and shape): {len(shared)}, loaded with clrt's values: {len(shared) - len(not_loaded)}")
    if not_loaded:
        fails.append(f"{len(not_loaded)} shared keys do not hold clrt's values after loading: {not_loaded[:10]}")
    if wrong_shape:
        fails.append("same name, other shape: "
                     + ", ".join(f"{k} {list(tuned[k].shape)} vs {list(ref[k].shape)}" for k in wrong_shape))
    print(f"  only in clrt's file: {len(only_file)}{': ' + ', '.join(only_file[:20]) if only_file else ''}")
    nbt = [k for k in only_model if k.endswith("num_batches_tracked")]
    rest = [k for k in only_model if k not in nbt]
    print(f"  only in torchvision's state_dict: {len(only_model)}"
          + (f" ({len(nbt)} num_batches_tracked)" if nbt else "")
          + (f": {', '.join(rest[:20])}{' ...' if len(rest) > 20 else ''}" if rest else ""))
    # (BatchNorm fills in a missing num_batches_tracked itself, so
    # res.missing_keys does not list those: the lists here are by name.)
    assert not res.unexpected_keys, res
    nonfinite = [k for k in shared if tuned[k].is_floating_point() and not torch.isfinite(tuned[k]).all()]
    if nonfinite:
        fails.append(f"NaN or infinity in {nonfinite[:10]}")
    need = a.min_shared if a.min_shared is not None else len([k for k in ref if not k.endswith("num_batches_tracked")])
    if len(shared) < need:
        fails.append(f"{len(shared)} keys shared, {need} required")
    if a.initial:
        init = load_file(a.initial)
        params = {n for n, _ in m.named_parameters()}
        comp = [k for k in shared if k in init and tuple(init[k].shape) == tuple(tuned[k].shape)]
        changed = [k for k in comp if not torch.equal(init[k].to(torch.float64), tuned[k].to(torch.float64))]
        cp = [k for k in changed if k in params]
        cb = [k for k in changed if k not in params]
        np_ = len([k for k in comp if k in params])
        print(f"  against {a.initial}: parameters changed {len(cp)} of {np_}, buffers changed {len(cb)} of {len(comp) - np_}")
        if changed:
            delta = max(float((tuned[k].double() - init[k].double()).abs().max()) for k in changed)
            print(f"  largest change of one value: {delta:.3g}")
        unchanged_p = [k for k in comp if k in params and k not in changed]
        if unchanged_p:
            print(f"  parameters unchanged: {', '.join(unchanged_p[:20])}{' ...' if len(unchanged_p) > 20 else ''}")
        if not cp:
            fails.append("no parameter differs from its initial value")
        want = a.changed.split(",") if a.changed else []
        keep = a.unchanged.split(",") if a.unchanged else []
        miss = [k for k in comp if prefixed(k, want) and k not in changed and not k.endswith("num_batches_tracked")]
        moved = [k for k in changed if prefixed(k, keep)]
        if miss:
            fails.append(f"unchanged under --changed {a.changed}: {miss[:10]}")
        if moved:
            fails.append(f"changed under --unchanged {a.unchanged}: {moved[:10]}")
    for f in fails:
        print(f"FAIL {f}")
    print("check_onnx_finetune: " + ("FAIL" if fails else "ok"))
    return 1 if fails else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    e = sub.add_parser("export")
    e.add_argument("dir")
    e.add_argument("--size", type=int, default=64)
    e.add_argument("--seed", type=int, default=0)
    c = sub.add_parser("check")
    c.add_argument("tuned")
    c.add_argument("--initial")
    c.add_argument("--changed")
    c.add_argument("--unchanged")
    c.add_argument("--min-shared", type=int)
    r = sub.add_parser("run")
    r.add_argument("tool")
    r.add_argument("dir")
    r.add_argument("--size", type=int, default=64)
    r.add_argument("--epochs", type=int, default=3)
    r.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    torch.set_num_threads(2)
    if a.cmd == "run":
        return run(a)
    return export(a) if a.cmd == "export" else check(a)


def run(a):
    rc = export(a)
    if rc:
        return rc
    tuned = os.path.join(a.dir, "tuned.safetensors")
    p = subprocess.run([a.tool, os.path.join(a.dir, "resnet18.onnx"), str(a.size), str(a.epochs),
                        tuned], capture_output=True, text=True)
    sys.stdout.write(p.stdout)
    sys.stderr.write(p.stderr)
    if p.returncode:
        print("check_onnx_finetune: the fine-tuning tool failed (exit %d)" % p.returncode)
        return 1
    c = argparse.Namespace(tuned=tuned, initial=os.path.join(a.dir, "initial.safetensors"),
                           changed="conv1.weight,bn1.weight,bn1.bias,layer1.0.conv1.weight,fc.",
                           unchanged="bn1.running_mean,bn1.running_var,layer4.1.bn2.running_var",
                           min_shared=None)
    return check(c)


if __name__ == "__main__":
    sys.exit(main())
