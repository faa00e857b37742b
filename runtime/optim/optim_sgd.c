/* SGD, with or without momentum (torch.optim.SGD, dampening 0). */
#include "runtime/optim/optim_internal.h"

#include <math.h>

static int sgd_scalars(const clrt_optimizer *o, float *out)
{
    out[0] = (float)o->lr;
    out[1] = (float)o->weight_decay;
    return 2;
}

static int momentum_scalars(const clrt_optimizer *o, float *out)
{
    out[0] = (float)o->lr;
    out[1] = (float)o->momentum;
    out[2] = (float)o->weight_decay;
    return 3;
}

static const clrt__optim_kind sgd_kind = {"SGD", "sgd", 0, sgd_scalars, {NULL}};
static const clrt__optim_kind momentum_kind = {
    "SGD", "sgd_momentum", 1, momentum_scalars, {"momentum_buffer"}};

clrt_optimizer *clrt_sgd(int n, clrt_tensor *const *params, clrt_tensor *const *grads, double lr,
                         double momentum, double weight_decay)
{
    const char *api = "clrt_sgd";
    if (clrt__check_hyper(api, "momentum", momentum, 0, INFINITY) != CLRT_OK ||
        clrt__check_hyper(api, "weight_decay", weight_decay, 0, INFINITY) != CLRT_OK)
        return NULL;
    /* Without momentum there is no buffer to keep, as in PyTorch. */
    clrt_optimizer *o =
        clrt__optim_new(momentum > 0 ? &momentum_kind : &sgd_kind, api, n, params, grads, lr);
    if (o) {
        o->momentum = momentum;
        o->weight_decay = weight_decay;
    }
    return o;
}
