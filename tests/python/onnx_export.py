"""Exports torchvision classifiers to ONNX with random weights, for clrt-onnx.

  python onnx_export.py MODEL OUT.onnx [--size 224] [--no-constant-folding]
                        [--seed 0] [--opset 17] [--exporter torchscript|dynamo]
                        [--init varied|torchvision] [--no-verify] [--json FILE]
  python onnx_export.py --list

MODEL is a torchvision.models builder name (resnet18, mobilenet_v2,
squeezenet1_1, shufflenet_v2_x0_5, efficientnet_b0, ...), built with
weights=None after torch.manual_seed(seed), in eval mode; nothing is
downloaded. The input is named "input", 1x3xSIZExSIZE with a symbolic batch
dimension "batch"; the output "output", BATCHx1000.

Weights (--init varied, the default): torchvision fills many tensors with one
constant: every BatchNorm is the identity (weight 1, bias 0, running mean 0,
variance 1), which an importer that dropped it would still pass, and so are
zero biases; the TorchScript exporter then also stores equal tensors once,
with Identity nodes for the others, which hides their state_dict names. So
every parameter that is one constant is drawn around it (zero ones with
standard deviation 0.02, positive ones times 1 + 0.25 N(0,1)), and BatchNorm's
running statistics are those of two random batches of 4 in training mode
(cumulative average; the activations stay of order one). --init torchvision
keeps torchvision's initialisation as it is.

Exporter: the TorchScript one (torch.onnx.export(dynamo=False)) still exists
in torch 2.15 and is the default here: opset 17, dynamic_axes, inference-form
BatchNormalization (training_mode=0, one output). With constant folding (the
default) it folds each BatchNorm into the Conv before it and names the folded
weights onnx::Conv_NNN; with --no-constant-folding the BatchNormalization
nodes stay and every initializer has its state_dict name (conv1.weight,
bn1.running_mean, layer1.0.downsample.1.weight, fc.bias ...; the
num_batches_tracked buffers are not in the graph). --exporter dynamo (torch.export
+ onnxscript) gives opset 18 only: ONNX's version converter fails to take
its ReduceMean (axes as an input) down to 17.

Checks: onnx.checker (full_check, with shape inference), the batch dimension
symbolic, every BatchNormalization in inference form; with verification (the
default) onnxruntime at batch 1 and 3 against PyTorch. Prints the opset and
the op type counts.
"""
import argparse
import collections
import json
import os
import sys
import time
import warnings

import numpy as np
import onnx
import torch
import torchvision

# Those tried here (--survey exports them all). With the TorchScript exporter
# at opset 17 all export at 224x224 but alexnet and vgg11 do not at 64x64
# (adaptive_avg_pool2d to 6x6 or 7x7 from a size it does not divide).
MODELS = ["resnet18", "mobilenet_v2", "squeezenet1_1", "shufflenet_v2_x0_5", "efficientnet_b0",
          "mobilenet_v3_small", "resnet50", "densenet121", "mnasnet0_5", "regnet_x_400mf", "alexnet",
          "vgg11", "googlenet", "convnext_tiny", "vit_b_16"]


def build(name, seed=0, size=224, init="varied"):
    """The torchvision model `name` with random weights from `seed`, in eval mode.
    init "varied": every parameter torchvision fills with one constant (biases
    0, norm weights 1, ViT's zero head) drawn around it, BatchNorm's running
    statistics those of random batches; "torchvision": as torchvision makes it."""
    torch.manual_seed(seed)
    kw = {}
    if name in ("googlenet", "inception_v3"):
        kw = {"aux_logits": False, "init_weights": True}
    if name.startswith("vit_"):
        kw = {"image_size": size}
    m = getattr(torchvision.models, name)(weights=None, **kw)
    if init == "varied":
        g = torch.Generator().manual_seed(seed + 1)
        with torch.no_grad():
            for p in m.parameters():
                if p.numel() > 1 and bool((p == p.flatten()[0]).all()):
                    c = float(p.flatten()[0])
                    noise = torch.randn(p.shape, generator=g)
                    p.copy_(c + (0.1 * abs(c) if c else 0.02) * noise if c <= 0 else c * (1 + 0.25 * noise.clamp(-2, 2)))
        bns = [b for b in m.modules() if isinstance(b, torch.nn.modules.batchnorm._BatchNorm)]
        if bns:
            with torch.no_grad():
                for b in bns:
                    b.reset_running_stats()
                    b.momentum = None  # cumulative average
                m.train()
                for _ in range(2):
                    m(torch.randn(4, 3, size, size, generator=g))
                for b in bns:
                    b.momentum = 0.1
    return m.eval()


def op_counts(model):
    """Op type counts over the graph and its subgraphs ("domain::Op" outside ai.onnx)."""
    c = collections.Counter()

    def walk(g):
        for n in g.node:
            c[(n.domain + "::" if n.domain not in ("", "ai.onnx") else "") + n.op_type] += 1
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    walk(a.g)
                for sg in a.graphs:
                    walk(sg)

    walk(model.graph)
    return dict(sorted(c.items(), key=lambda kv: (-kv[1], kv[0])))


def opsets(model):
    return {(o.domain or "ai.onnx"): o.version for o in model.opset_import}


def check_model(path, constant_folding):
    """onnx.checker, the symbolic batch, BatchNormalization's inference form."""
    m = onnx.load(path)
    onnx.checker.check_model(m, full_check=True)
    inits = {i.name for i in m.graph.initializer}
    ins = [i for i in m.graph.input if i.name not in inits]
    d0 = ins[0].type.tensor_type.shape.dim[0]
    assert d0.HasField("dim_param") and not d0.HasField("dim_value"), f"{path}: batch dimension not symbolic: {d0}"
    for n in m.graph.node:
        if n.op_type == "BatchNormalization":
            attrs = {a.name: onnx.helper.get_attribute_value(a) for a in n.attribute}
            assert attrs.get("training_mode", 0) == 0, f"{n.name}: training_mode {attrs['training_mode']}"
            assert len([o for o in n.output if o]) == 1, f"{n.name}: outputs {list(n.output)} (training form)"
    return m


def name_report(model_proto, torch_model):
    """How the initializers' names relate to the state_dict's."""
    sd = torch_model.state_dict()
    inits = [i.name for i in model_proto.graph.initializer]
    same = [n for n in inits if n in sd]
    other = [n for n in inits if n not in sd]
    absent = [k for k in sd if k not in set(inits)]
    return {"initializers": len(inits), "state_dict_names": len(same), "other_names": other,
            "state_dict_keys_not_initializers": absent}


def export(name, path, size=224, constant_folding=True, seed=0, opset=17, exporter="torchscript",
           init="varied", verify=True):
    """Exports model `name` to `path`; returns a dict of what was made."""
    m = build(name, seed, size, init)
    x = torch.randn(2, 3, size, size, generator=torch.Generator().manual_seed(seed + 2))
    t0 = time.perf_counter()
    if exporter == "torchscript":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            torch.onnx.export(m, (x,), path, dynamo=False, opset_version=opset, input_names=["input"],
                              output_names=["output"], dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}},
                              do_constant_folding=constant_folding, training=torch.onnx.TrainingMode.EVAL)
    elif exporter == "dynamo":
        # optimize=True is onnxscript's optimizer, the dynamo path's constant folding.
        torch.onnx.export(m, (x,), path, dynamo=True, opset_version=opset, external_data=False,
                          optimize=constant_folding, input_names=["input"], output_names=["output"],
                          dynamic_shapes=({0: torch.export.Dim("batch")},), verbose=False)
    else:
        raise ValueError(f"exporter {exporter!r}")
    t_export = time.perf_counter() - t0
    mp = check_model(path, constant_folding)
    info = {"model": name, "path": path, "size": size, "exporter": exporter, "constant_folding": constant_folding,
            "seed": seed, "init": init, "opset": opsets(mp), "export_s": round(t_export, 3),
            "bytes": os.path.getsize(path), "ops": op_counts(mp), "names": name_report(mp, m)}
    if verify:
        import onnx_data

        t0 = time.perf_counter()
        sess = onnx_data.ort_session(path)
        errs = []
        for b in (1, 3):
            xb = torch.randn(b, 3, size, size, generator=torch.Generator().manual_seed(seed + 10 + b))
            with torch.no_grad():
                want = m(xb).numpy()
            got = onnx_data.ort_run(path, [xb.numpy()], sess)[0]
            ok, ea, er, msg = onnx_data.compare(got, want, rtol=1e-3, atol=1e-4)
            errs.append({"batch": b, "ok": ok, "max_abs": ea, "max_abs_ref": float(np.abs(want).max()), "msg": msg})
        info["verify"] = errs
        info["verify_s"] = round(time.perf_counter() - t0, 3)
    return info


def describe(info):
    lines = [f"{info['model']}: {info['path']} ({info['bytes'] / 1e6:.1f} MB), {info['exporter']} exporter, "
             f"opset {info['opset']}, constant folding {'on' if info['constant_folding'] else 'off'}, "
             f"export {info['export_s']:.2f} s"]
    lines.append("  ops: " + ", ".join(f"{k} {v}" for k, v in info["ops"].items()))
    n = info["names"]
    lines.append(f"  initializers: {n['initializers']}, with state_dict names {n['state_dict_names']}"
                 + (f", others {len(n['other_names'])} (e.g. {', '.join(n['other_names'][:3])})" if n["other_names"] else "")
                 + (f"; state_dict keys not in the graph: {len(n['state_dict_keys_not_initializers'])} "
                    f"(e.g. {', '.join(n['state_dict_keys_not_initializers'][:3])})"
                    if n["state_dict_keys_not_initializers"] else ""))
    for v in info.get("verify", []):
        lines.append(f"  onnxruntime vs PyTorch, batch {v['batch']}: max abs err {v['max_abs']:.3g} "
                     f"(max |output| {v['max_abs_ref']:.3g}) {'ok' if v['ok'] else 'MISMATCH ' + v['msg']}")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model", nargs="?")
    ap.add_argument("out", nargs="?")
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--no-constant-folding", action="store_true")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--opset", type=int, default=None, help="17 (torchscript) or 18 (dynamo) unless given")
    ap.add_argument("--exporter", choices=["torchscript", "dynamo"], default="torchscript")
    ap.add_argument("--init", choices=["varied", "torchvision"], default="varied")
    ap.add_argument("--no-verify", action="store_true")
    ap.add_argument("--json", help="write what was made (ops, opset, names, timings) to this file")
    ap.add_argument("--list", action="store_true", help="print the model names tried here")
    ap.add_argument("--survey", metavar="DIR",
                    help="export each of --models (default: those of --list) into DIR; one summary each, "
                         "the exporter's error for those that fail")
    ap.add_argument("--models", help="comma-separated, for --survey")
    a = ap.parse_args()
    if a.list:
        print("\n".join(MODELS))
        return 0
    opset = a.opset or (17 if a.exporter == "torchscript" else 18)
    torch.set_num_threads(2)
    if a.survey:
        os.makedirs(a.survey, exist_ok=True)
        failed = []
        for name in (a.models.split(",") if a.models else MODELS):
            path = os.path.join(a.survey, name + ".onnx")
            try:
                info = export(name, path, a.size, not a.no_constant_folding, a.seed, opset, a.exporter,
                              a.init, not a.no_verify)
            except Exception as e:  # the exporter's own message, its last line
                msg = str(e).strip().splitlines()
                print(f"{name}: does not export: {type(e).__name__}: {msg[0] if msg else ''}"[:400])
                failed.append(name)
                continue
            print(describe(info), flush=True)
            with open(os.path.join(a.survey, name + ".json"), "w") as f:
                json.dump(info, f, indent=1)
        print(f"survey: {len(failed)} did not export{': ' + ', '.join(failed) if failed else ''}")
        return 0
    if not a.model or not a.out:
        ap.error("MODEL and OUT.onnx are required")
    info = export(a.model, a.out, a.size, not a.no_constant_folding, a.seed, opset, a.exporter, a.init,
                  not a.no_verify)
    print(describe(info))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(info, f, indent=1)
    return 0 if all(v["ok"] for v in info.get("verify", [])) else 1


if __name__ == "__main__":
    sys.exit(main())
