"""Lists ONNX's node tests (Debian's libonnx-testdata) that issue 39 names:
single-node models whose op is one of the ops torchvision's classifiers
export (the list below), on float32, int64, int32 and bool tensors, less the
training-mode Dropout tests (their reference masks come from numpy's
generator). Prints one folder a line; `--count` prints how many."""
import os
import sys

import onnx

OPS = set("""Conv BatchNormalization Relu Clip Sigmoid HardSigmoid HardSwish Mul Add Sub Div
MaxPool AveragePool GlobalAveragePool Gemm MatMul Flatten Reshape Concat Transpose Pad
Dropout Identity Constant Shape Gather Unsqueeze Squeeze ReduceMean Softmax Erf
LayerNormalization Split Slice Cast Where Expand Equal Sqrt Pow Tanh Exp Log Neg Abs
ConstantOfShape Range Trilu LogSoftmax""".split())
TYPES = {1, 6, 7, 9}  # float, int32, int64, bool
ROOT = "/usr/share/libonnx-testdata/data/node"


def types_of(graph):
    """Element types of the graph's inputs and outputs; None for one that is
    not a tensor (a sequence, an optional)."""
    return [v.type.tensor_type.elem_type if v.type.HasField("tensor_type") else None
            for v in list(graph.input) + list(graph.output)]


def listed(name):
    model = onnx.load(os.path.join(ROOT, name, "model.onnx"))
    nodes = model.graph.node
    if len(nodes) != 1 or nodes[0].op_type not in OPS:
        return False
    if name.startswith("test_training_dropout"):
        return False
    types = types_of(model.graph)
    return None not in types and all(t in TYPES for t in types)


def main():
    names = [n for n in sorted(os.listdir(ROOT)) if listed(n)]
    if "--count" in sys.argv:
        print(len(names))
    else:
        for n in names:
            print(os.path.join(ROOT, n))


if __name__ == "__main__":
    main()
