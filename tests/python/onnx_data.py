"""ONNX tensors and test-data folders, for the checks of clrt-onnx.

As a module:
  write_pb(path, array, name)     a numpy array as an ONNX TensorProto file
  read_pb(path)                   such a file back as a numpy array
  graph_inputs(model)             the graph's inputs less its initializers
  ort_run(model_path, arrays)     onnxruntime's outputs (CPU, 2 threads)
  make_test_dir(model_path, dir, [arrays...])
                                  ONNX's backend-test layout: dir/model.onnx,
                                  dir/test_data_set_K/input_I.pb, output_I.pb
                                  (outputs from onnxruntime unless given)
As a program:
  python onnx_data.py show FILE.pb...
  python onnx_data.py make-test MODEL.onnx DIR [--batch N] [--seed S] [--sets K]
    random normal inputs of the model's input shapes (the symbolic batch
    dimension set to --batch), onnxruntime's outputs
"""
import argparse
import os
import shutil
import sys

import numpy as np
import onnx
from onnx import numpy_helper

ORT_THREADS = 2


def write_pb(path, array, name=None):
    """Writes array as a serialized onnx.TensorProto (ONNX's test data sets)."""
    t = numpy_helper.from_array(np.ascontiguousarray(array), name=name)
    with open(path, "wb") as f:
        f.write(t.SerializeToString())


def read_pb(path):
    """Reads a serialized onnx.TensorProto file into a numpy array."""
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def read_pb_name(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return t.name


def _load(model):
    return model if isinstance(model, onnx.ModelProto) else onnx.load(model, load_external_data=False)


def graph_inputs(model):
    """The graph's inputs that are not initializers (what a caller feeds), in order."""
    m = _load(model)
    inits = {i.name for i in m.graph.initializer}
    return [i for i in m.graph.input if i.name not in inits]


def input_shape(value_info, batch):
    """A graph input's shape with symbolic (or unknown) dimensions set to batch."""
    dims = value_info.type.tensor_type.shape.dim
    return tuple(d.dim_value if d.HasField("dim_value") else batch for d in dims)


def input_dtype(value_info):
    return onnx.helper.tensor_dtype_to_np_dtype(value_info.type.tensor_type.elem_type)


def ort_session(model_path, threads=ORT_THREADS, profile_prefix=None):
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.log_severity_level = 3
    if profile_prefix:
        so.enable_profiling = True
        so.profile_file_prefix = profile_prefix
    return ort.InferenceSession(model_path, so, providers=["CPUExecutionProvider"])


def ort_run(model_path, arrays, session=None):
    """onnxruntime's outputs for the model's graph inputs given in order."""
    sess = session or ort_session(model_path)
    names = [i.name for i in sess.get_inputs()]
    if len(names) != len(arrays):
        raise ValueError(f"{model_path}: {len(names)} inputs, {len(arrays)} arrays given")
    return sess.run(None, dict(zip(names, arrays)))


def random_inputs(model, batch, seed):
    rng = np.random.default_rng(seed)
    out = []
    for vi in graph_inputs(model):
        shape, dt = input_shape(vi, batch), input_dtype(vi)
        if np.issubdtype(dt, np.floating):
            out.append(rng.standard_normal(shape).astype(dt))
        else:
            out.append(rng.integers(0, 10, shape).astype(dt))
    return out


def make_test_dir(model_path, out_dir, sets, outputs=None):
    """ONNX's backend-test layout in out_dir: model.onnx and, for each set of
    inputs (a list of arrays in the model's input order), test_data_set_K with
    input_I.pb and output_I.pb (onnxruntime's outputs unless outputs gives
    them, one list per set). Returns the outputs written."""
    m = _load(model_path)
    in_names = [i.name for i in graph_inputs(m)]
    out_names = [o.name for o in m.graph.output]
    os.makedirs(out_dir, exist_ok=True)
    dst = os.path.join(out_dir, "model.onnx")
    if os.path.abspath(model_path) != os.path.abspath(dst):
        shutil.copyfile(model_path, dst)
    sess = None if outputs else ort_session(dst)
    written = []
    for k, arrays in enumerate(sets):
        d = os.path.join(out_dir, f"test_data_set_{k}")
        os.makedirs(d, exist_ok=True)
        for i, (name, a) in enumerate(zip(in_names, arrays, strict=True)):
            write_pb(os.path.join(d, f"input_{i}.pb"), a, name)
        outs = outputs[k] if outputs else ort_run(dst, arrays, sess)
        for i, (name, a) in enumerate(zip(out_names, outs, strict=True)):
            write_pb(os.path.join(d, f"output_{i}.pb"), a, name)
        written.append(outs)
    return written


def compare(got, want, rtol=1e-3, atol=1e-4):
    """(ok, max abs err, max rel err, message): numpy allclose semantics
    (|got - want| <= atol + rtol |want|) with the same shape and no NaN or
    infinity in got where want has none."""
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        return False, float("inf"), float("inf"), f"shape {got.shape}, expected {want.shape}"
    g, w = got.astype(np.float64), want.astype(np.float64)
    bad = ~np.isfinite(g) & np.isfinite(w)
    if bad.any():
        return False, float("nan"), float("nan"), f"{int(bad.sum())} NaN/inf values where the reference is finite"
    diff = np.abs(g - w)
    abs_err = float(diff.max()) if diff.size else 0.0
    rel_err = float((diff / np.maximum(np.abs(w), 1e-30)).max()) if diff.size else 0.0
    ok = bool(np.allclose(g, w, rtol=rtol, atol=atol, equal_nan=True))
    msg = "" if ok else f"{int((diff > atol + rtol * np.abs(w)).sum())} of {diff.size} values out of tolerance"
    return ok, abs_err, rel_err, msg


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("show", help="print the name, dtype, shape and a few values of .pb files")
    s.add_argument("files", nargs="+")
    t = sub.add_parser("make-test", help="a backend-test folder with random inputs and onnxruntime's outputs")
    t.add_argument("model")
    t.add_argument("dir")
    t.add_argument("--batch", type=int, default=1)
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--sets", type=int, default=1)
    a = ap.parse_args()
    if a.cmd == "show":
        for f in a.files:
            x = read_pb(f)
            print(f"{f}: name {read_pb_name(f)!r} {x.dtype} {list(x.shape)} {x.ravel()[:6]}")
        return 0
    sets = [random_inputs(a.model, a.batch, a.seed + k) for k in range(a.sets)]
    make_test_dir(a.model, a.dir, sets)
    print(f"wrote {a.dir}: model.onnx, {a.sets} test data set(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
