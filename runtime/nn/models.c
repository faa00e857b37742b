/* Ready-made models: d2l's LeNet and the seed notebook's CIFAR-10 CNN. */
#include "runtime/nn/module_internal.h"

/* The largest side after LeNet's convolutions whose 16 * side^2 features
 * fit an int: floor(sqrt(INT32_MAX / 16)). */
#define LENET_MAX_SIDE 11585

/* Spatial size after conv k5 (padding p) then 2x2 max pooling. */
static int64_t conv_pool(int64_t size, int padding) { return (size + 2 * padding - 5 + 1) / 2; }

clrt_module *clrt_lenet(const int64_t chw[3], int classes)
{
    if (!chw || chw[0] < 1 || chw[0] > INT32_MAX || chw[1] != chw[2] || chw[1] < 12 ||
        classes < 1) {
        clrt__fail(CLRT_EINVAL,
                   "clrt_lenet: needs square samples [C, H, W] of at least 12x12 and "
                   "classes >= 1, got [%lld, %lld, %lld] and %d classes",
                   chw ? (long long)chw[0] : 0LL, chw ? (long long)chw[1] : 0LL,
                   chw ? (long long)chw[2] : 0LL, classes);
        return NULL;
    }
    int64_t side = chw[1] <= INT32_MAX ? conv_pool(conv_pool(chw[1], 2), 0) : INT64_MAX;
    if (side > LENET_MAX_SIDE) { /* 16 * side^2 features must fit Linear's int */
        clrt__fail(CLRT_EINVAL,
                   "clrt_lenet: samples of %lld x %lld are too large: LeNet's first Linear layer "
                   "would take more than %d inputs",
                   (long long)chw[1], (long long)chw[2], INT32_MAX);
        return NULL;
    }
    clrt_module *mods[12] = {clrt_conv2d((int)chw[0], 6, 5, 1, 2),
                             clrt_relu(),
                             clrt_maxpool2d(2, 2),
                             clrt_conv2d(6, 16, 5, 1, 0),
                             clrt_relu(),
                             clrt_maxpool2d(2, 2),
                             clrt_flatten(),
                             clrt_linear((int)(16 * side * side), 120),
                             clrt_relu(),
                             clrt_linear(120, 84),
                             clrt_relu(),
                             clrt_linear(84, classes)};
    return clrt_sequential(12, mods);
}

clrt_module *clrt_seed_cnn(int classes)
{
    if (classes < 1) {
        clrt__fail(CLRT_EINVAL, "clrt_seed_cnn: classes %d must be >= 1", classes);
        return NULL;
    }
    clrt_module *mods[17] = {clrt_conv2d(3, 6, 5, 1, 0),
                             clrt_relu(),
                             clrt_maxpool2d(2, 2),
                             clrt_conv2d(6, 16, 5, 1, 3),
                             clrt_relu(),
                             clrt_conv2d(16, 16, 5, 1, 0),
                             clrt_relu(),
                             clrt_maxpool2d(2, 2),
                             clrt_conv2d(16, 16, 3, 1, 0),
                             clrt_relu(),
                             clrt_maxpool2d(2, 2),
                             clrt_flatten(),
                             clrt_linear(64, 120),
                             clrt_relu(),
                             clrt_linear(120, 84),
                             clrt_relu(),
                             clrt_linear(84, classes)};
    return clrt_sequential(17, mods);
}
