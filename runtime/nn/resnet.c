/* ResNet-18 and ResNet-34 as torchvision builds them (BasicBlock), with its
 * state names, so a state saved here loads into torchvision's model
 * (load_state_dict(strict=True)) and the reverse:
 *   conv1, bn1, relu, maxpool, layer1 .. layer4 (blocks "0", "1", ...; a
 *   block's downsample when it changes the stride or width), avgpool, fc.
 * The small stem (CLRT_RESNET_SMALL, for 28-32 pixel images) has a 3x3
 * stride-1 conv1 and no max pooling (torchvision's model with conv1
 * replaced and maxpool an nn.Identity(): the state is the same apart from
 * conv1's shape). Initialised as torchvision does: convolutions
 * Kaiming-normal (fan_out, ReLU), BatchNorm weight 1 and bias 0, fc
 * PyTorch's Linear default. */
#include "runtime/nn/module_internal.h"

/* conv k x k, no bias, Kaiming-normal: torchvision's conv3x3 / conv1x1. */
static clrt_module *conv(int in, int out, int k, int stride)
{
    clrt_module *m = clrt_conv2d_ex(in, out, k, stride, k / 2, 0);
    if (m)
        clrt__conv2d_init_kaiming_normal(m);
    return m;
}

/* torchvision's BasicBlock(inplanes, planes, stride). */
static clrt_module *basic_block(int in, int planes, int stride)
{
    static const char *const names[5] = {"conv1", "bn1", "relu", "conv2", "bn2"};
    clrt_module *body[5] = {conv(in, planes, 3, stride), clrt_batchnorm2d(planes), clrt_relu(),
                            conv(planes, planes, 3, 1), clrt_batchnorm2d(planes)};
    clrt_module *down = NULL;
    if (stride != 1 || in != planes) {
        clrt_module *d[2] = {conv(in, planes, 1, stride), clrt_batchnorm2d(planes)};
        down = clrt_sequential(2, d);
        if (!down) {
            for (int i = 0; i < 5; i++)
                clrt_module_free(body[i]);
            return NULL;
        }
    }
    return clrt_residual(clrt_sequential_named(5, body, names), down);
}

/* layer<i>: `blocks` blocks, the first with `stride`. */
static clrt_module *layer(int in, int planes, int blocks, int stride)
{
    clrt_module *b[8] = {NULL};
    for (int i = 0; i < blocks; i++)
        b[i] = basic_block(i ? planes : in, planes, i ? 1 : stride);
    return clrt_sequential(blocks, b);
}

static const clrt__module_vt resnet_vt = {.kind = "ResNet",
                                          .forward = clrt__sequential_forward,
                                          .backward = clrt__sequential_backward,
                                          .describe = clrt__sequential_describe};

/* ResNet with `blocks` per stage and `width` channels in the first stage
 * (torchvision's 64; doubled at each later stage). */
static clrt_module *resnet(int in_channels, int classes, clrt_resnet_stem stem, const int blocks[4],
                           int width, const char *api)
{
    int w1 = width, w2 = 2 * width, w3 = 4 * width, w4 = 8 * width;
    if (in_channels < 1 || classes < 1 ||
        (stem != CLRT_RESNET_IMAGENET && stem != CLRT_RESNET_SMALL)) {
        clrt__fail(CLRT_EINVAL,
                   "%s(in_channels=%d, classes=%d, stem=%d): channels and classes "
                   "must be >= 1, stem CLRT_RESNET_IMAGENET or CLRT_RESNET_SMALL",
                   api, in_channels, classes, (int)stem);
        return NULL;
    }
    int small = stem == CLRT_RESNET_SMALL;
    const char *names[12] = {"conv1",  "bn1",    "relu",    "maxpool", "layer1", "layer2",
                             "layer3", "layer4", "avgpool", "flatten", "fc"};
    clrt_module *mods[12] = {small ? conv(in_channels, w1, 3, 1) : conv(in_channels, w1, 7, 2),
                             clrt_batchnorm2d(w1),
                             clrt_relu(),
                             small ? NULL : clrt_maxpool2d_padded(3, 2, 1),
                             layer(w1, w1, blocks[0], 1),
                             layer(w1, w2, blocks[1], 2),
                             layer(w2, w3, blocks[2], 2),
                             layer(w3, w4, blocks[3], 2),
                             clrt_adaptive_avgpool2d(1),
                             clrt_flatten(),
                             clrt_linear(w4, classes)};
    if (small) { /* no max pooling: close the gap it leaves */
        for (int i = 3; i < 10; i++)
            mods[i] = mods[i + 1], names[i] = names[i + 1];
    }
    return clrt__container_new(&resnet_vt, sizeof(clrt_module), small ? 10 : 11, mods, names);
}

clrt_module *clrt_resnet18(int in_channels, int classes, clrt_resnet_stem stem)
{
    static const int blocks[4] = {2, 2, 2, 2};
    return resnet(in_channels, classes, stem, blocks, 64, "clrt_resnet18");
}

clrt_module *clrt__resnet18_width(int in_channels, int classes, clrt_resnet_stem stem, int width)
{
    static const int blocks[4] = {2, 2, 2, 2};
    if (width < 1) {
        clrt__fail(CLRT_EINVAL, "clrt__resnet18_width: width %d must be >= 1", width);
        return NULL;
    }
    return resnet(in_channels, classes, stem, blocks, width, "clrt__resnet18_width");
}

clrt_module *clrt_resnet34(int in_channels, int classes, clrt_resnet_stem stem)
{
    static const int blocks[4] = {3, 4, 6, 3};
    return resnet(in_channels, classes, stem, blocks, 64, "clrt_resnet34");
}
