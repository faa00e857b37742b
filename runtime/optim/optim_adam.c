/* Adam (torch.optim.Adam, amsgrad off, L2 weight decay) and AdamW
 * (torch.optim.AdamW, decoupled weight decay). */
#include "runtime/optim/optim_internal.h"

#include <math.h>

/* Bias corrections in double on the host: 1 - beta^t loses everything in
 * float once beta^t is close to 1, i.e. at the first steps. */
static int adam_scalars(const clrt_optimizer *o, float *out)
{
    double t = (double)o->steps;
    double bc1 = 1.0 - pow(o->beta1, t), bc2 = 1.0 - pow(o->beta2, t);
    out[0] = (float)(o->lr / bc1);
    out[1] = (float)o->beta1;
    out[2] = (float)o->beta2;
    out[3] = (float)(1.0 / sqrt(bc2));
    out[4] = (float)o->eps;
    out[5] = (float)o->weight_decay; /* L2, added to the gradient */
    out[6] = 1.0f;                   /* no decoupled decay */
    return 7;
}

/* AdamW: no L2; the parameter scaled by 1 - lr * weight_decay (with the lr
 * of this step, as torch.optim.AdamW multiplies by it). */
static int adamw_scalars(const clrt_optimizer *o, float *out)
{
    int n = adam_scalars(o, out);
    out[n - 2] = 0.0f;
    out[n - 1] = (float)(1.0 - o->lr * o->weight_decay);
    return n;
}

static const clrt__optim_kind adam_kind = {
    "Adam", "adam", 2, adam_scalars, {"exp_avg", "exp_avg_sq"}};
static const clrt__optim_kind adamw_kind = {
    "AdamW", "adam", 2, adamw_scalars, {"exp_avg", "exp_avg_sq"}};

static clrt_optimizer *make(const clrt__optim_kind *kind, const char *api, int n,
                            clrt_tensor *const *params, clrt_tensor *const *grads, double lr,
                            double beta1, double beta2, double eps, double weight_decay)
{
    if (clrt__check_hyper(api, "beta1", beta1, 0, 1) != CLRT_OK ||
        clrt__check_hyper(api, "beta2", beta2, 0, 1) != CLRT_OK ||
        clrt__check_hyper(api, "eps", eps, 0, INFINITY) != CLRT_OK ||
        clrt__check_hyper(api, "weight_decay", weight_decay, 0, INFINITY) != CLRT_OK)
        return NULL;
    clrt_optimizer *o = clrt__optim_new(kind, api, n, params, grads, lr);
    if (o) {
        o->beta1 = beta1;
        o->beta2 = beta2;
        o->eps = eps;
        o->weight_decay = weight_decay;
    }
    return o;
}

clrt_optimizer *clrt_adam(int n, clrt_tensor *const *params, clrt_tensor *const *grads, double lr,
                          double beta1, double beta2, double eps, double weight_decay)
{
    return make(&adam_kind, "clrt_adam", n, params, grads, lr, beta1, beta2, eps, weight_decay);
}

clrt_optimizer *clrt_adamw(int n, clrt_tensor *const *params, clrt_tensor *const *grads, double lr,
                           double beta1, double beta2, double eps, double weight_decay)
{
    return make(&adamw_kind, "clrt_adamw", n, params, grads, lr, beta1, beta2, eps, weight_decay);
}
