#!/usr/bin/env python3
"""The arithmetic of one training step of the models clrt-cnn trains, so
that a time per epoch can be set against a device's measured peak
(clrt-bench peak): GFLOP per step, a multiply-add counted as 2 and only the
useful ones (docs/INTERNALS.md, "Where a training step's time goes"): each
convolution and linear layer runs its forward, its input gradient (except
the first layer's: the data needs none) and its weight gradient, each as
many multiply-adds as the forward. Pooling, activations, BatchNorm, the
loss and the optimizer are not counted.

  bench/flops.py [--batch N]      prints each model's GFLOP per step and epoch"""
import argparse
import math


def conv(cin, cout, k, hw_in, stride=1, pad=0):
    """A square convolution: (multiply-adds per image, output size)."""
    out = (hw_in + 2 * pad - k) // stride + 1
    return cout * out * out * cin * k * k, out


def lenet_layers():
    """clrt_lenet: 28x28x1 inputs."""
    c1, s = conv(1, 6, 5, 28, pad=2)
    c2, s = conv(6, 16, 5, s // 2)
    return [c1, c2, 16 * 5 * 5 * 120, 120 * 84, 84 * 10]


def seed_cnn_layers():
    """clrt_seed_cnn: the seed notebook's CNN on 32x32x3 inputs."""
    c1, s = conv(3, 6, 5, 32)
    c2, s = conv(6, 16, 5, s // 2, pad=3)
    c3, s = conv(16, 16, 5, s)
    c4, s = conv(16, 16, 3, s // 2)
    s //= 2
    return [c1, c2, c3, c4, 16 * s * s * 120, 120 * 84, 84 * 10]


def resnet18_layers():
    """ResNet-18 with the small stem for 32x32 inputs (a 3x3 stride-1 first
    convolution, no max pooling), as torchvision's resnet18 is adapted for
    CIFAR-10; 10 classes."""
    macs, s = conv(3, 64, 3, 32, pad=1)
    layers, cin = [macs], 64
    for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
        for block in range(2):
            st = stride if block == 0 else 1
            a, out = conv(cin, cout, 3, s, st, 1)
            b, _ = conv(cout, cout, 3, out, 1, 1)
            layers += [a, b]
            if st != 1 or cin != cout:
                layers.append(conv(cin, cout, 1, s, st)[0])  # the shortcut's projection
            cin, s = cout, out
    return layers + [512 * 10]


# model: (layers, training images, the batch size the comparisons train with)
MODELS = {"lenet": (lenet_layers, 60000, 256), "seed-cnn": (seed_cnn_layers, 50000, 256),
          "resnet18": (resnet18_layers, 50000, 128)}


def step_gflop(model, batch=None):
    """GFLOP of one training step of `batch` images (default: the model's)."""
    batch = batch or MODELS[model][2]
    layers = MODELS[model][0]()
    macs = 3 * sum(layers) - layers[0]  # forward, input and weight gradients; no data gradient
    return 2.0 * macs * batch * 1e-9


def steps_per_epoch(model, batch=None, images=None):
    return math.ceil((images or MODELS[model][1]) / (batch or MODELS[model][2]))


def epoch_gflop(model, images=None):
    """GFLOP of one training epoch with the model's batch size."""
    return step_gflop(model) * steps_per_epoch(model, images=images)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--batch", type=int, help="default: each model's (256; ResNet-18: 128)")
    a = ap.parse_args()
    for model in MODELS:
        b = a.batch or MODELS[model][2]
        g = step_gflop(model, b)
        print(f"{model:<9} {g:8.3f} GFLOP per step of {b}, "
              f"{g * steps_per_epoch(model, b):8.1f} per epoch")


if __name__ == "__main__":
    main()
