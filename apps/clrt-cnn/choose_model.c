/* Which model clrt-cnn trains: --model against the data set's sample shape
 * (ResNet-18's small stem takes any 28-32 pixel images). */
#include "cnn.h"

#include <string.h>

clrt_module *cnn_build_model(const char *name, const int64_t chw[3])
{
    if (strcmp(name, "resnet18") == 0) /* any channels; small images */
        return clrt_resnet18((int)chw[0], 10, CLRT_RESNET_SMALL);
    int lenet_model = strcmp(name, "lenet") == 0;
    int64_t want_c = lenet_model ? 1 : 3, want_hw = lenet_model ? 28 : 32;
    if (chw[0] != want_c || chw[1] != want_hw || chw[2] != want_hw) {
        /* The caller prints clrt_last_error(): set it, as a library call would. */
        clrt_set_error(CLRT_ESHAPE,
                       "model %s needs %lldx%lldx%lld inputs, the data set has %lldx%lldx%lld (use "
                       "--model lenet for Fashion-MNIST, seed-cnn for CIFAR-10)",
                       name, (long long)want_c, (long long)want_hw, (long long)want_hw,
                       (long long)chw[0], (long long)chw[1], (long long)chw[2]);
        return NULL;
    }
    /* d2l's LeNet with ReLU and max pooling (clrt_lenet prints its layers). */
    return lenet_model ? clrt_lenet(chw, 10) : clrt_seed_cnn(10);
}
