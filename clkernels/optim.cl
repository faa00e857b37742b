/* optim.cl — fused optimizer updates, one work item per parameter element.
 * Every kernel takes (p, g, state..., n, float scalars...) in that order;
 * runtime/optim/optim.c sets them generically. Hyperparameters that depend
 * on the step count (Adam's bias corrections) are computed on the host.
 * Each has a _multi form that updates up to SLOTS tensors in one launch
 * (as PyTorch's multi-tensor optimizers do): (p, g, state...) per slot,
 * then each slot's end in the launch's element range, then the scalars. */

/* p -= lr * (g + weight_decay * p) */
inline void sgd_at(__global float *p, __global const float *g, ulong i, float lr,
                   float weight_decay)
{
    float pi = p[i];
    p[i] = pi - lr * (g[i] + weight_decay * pi);
}

/* buf = momentum * buf + (g + weight_decay * p); p -= lr * buf.
 * buf starts at zero, which makes the first step buf = d as PyTorch's. */
inline void sgd_momentum_at(__global float *p, __global const float *g, __global float *buf,
                            ulong i, float lr, float momentum, float weight_decay)
{
    float pi = p[i];
    float b = momentum * buf[i] + (g[i] + weight_decay * pi);
    buf[i] = b;
    p[i] = pi - lr * b;
}

/* PyTorch's Adam with L2 weight decay (l2 = weight_decay, decay = 1) and
 * AdamW, whose decoupled weight decay scales the parameter first (l2 = 0,
 * decay = 1 - lr * weight_decay); step_size = lr / (1 - beta1^t) and
 * inv_sqrt_bc2 = 1 / sqrt(1 - beta2^t). */
inline void adam_at(__global float *p, __global const float *g, __global float *m,
                    __global float *v, ulong i, float step_size, float beta1, float beta2,
                    float inv_sqrt_bc2, float eps, float l2, float decay)
{
    float pi = p[i];
    float gi = g[i] + l2 * pi;
    float mi = beta1 * m[i] + (1.0f - beta1) * gi;
    float vi = beta2 * v[i] + (1.0f - beta2) * gi * gi;
    m[i] = mi;
    v[i] = vi;
    p[i] = pi * decay - step_size * mi / (sqrt(vi) * inv_sqrt_bc2 + eps);
}

#define SGD_SCALARS float lr, float weight_decay
#define MOMENTUM_SCALARS float lr, float momentum, float weight_decay
#define ADAM_SCALARS                                                                       \
    float step_size, float beta1, float beta2, float inv_sqrt_bc2, float eps, float l2,    \
        float decay

__kernel void sgd(__global float *p, __global const float *g, ulong n, SGD_SCALARS)
{
    ulong i = get_global_id(0);
    if (i < n)
        sgd_at(p, g, i, lr, weight_decay);
}

__kernel void sgd_momentum(__global float *p, __global const float *g, __global float *buf,
                           ulong n, MOMENTUM_SCALARS)
{
    ulong i = get_global_id(0);
    if (i < n)
        sgd_momentum_at(p, g, buf, i, lr, momentum, weight_decay);
}

__kernel void adam(__global float *p, __global const float *g, __global float *m,
                   __global float *v, ulong n, ADAM_SCALARS)
{
    ulong i = get_global_id(0);
    if (i < n)
        adam_at(p, g, m, v, i, step_size, beta1, beta2, inv_sqrt_bc2, eps, l2, decay);
}

/* The multi-tensor forms. Slot k holds elements [e(k-1), e(k)) of the
 * launch (e(-1) = 0); unused slots end where the last used one does. */
#define FOR_SLOTS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)
#define END_ARG(k) ulong e##k,
/* The item's slot: UPDATE(k, j) there, j the element within its tensor. */
#define PICK(k)                                                                            \
    if (i < e##k) {                                                                        \
        UPDATE(k, i - start);                                                              \
        return;                                                                            \
    }                                                                                      \
    start = e##k;
#define DISPATCH                                                                           \
    ulong i = get_global_id(0), start = 0;                                                 \
    FOR_SLOTS(PICK)

#define SGD_ARGS(k) __global float *p##k, __global const float *g##k,
#define UPDATE(k, j) sgd_at(p##k, g##k, j, lr, weight_decay)
__kernel void sgd_multi(FOR_SLOTS(SGD_ARGS) FOR_SLOTS(END_ARG) SGD_SCALARS) { DISPATCH }
#undef UPDATE

#define MOMENTUM_ARGS(k) __global float *p##k, __global const float *g##k, __global float *b##k,
#define UPDATE(k, j) sgd_momentum_at(p##k, g##k, b##k, j, lr, momentum, weight_decay)
__kernel void sgd_momentum_multi(FOR_SLOTS(MOMENTUM_ARGS) FOR_SLOTS(END_ARG) MOMENTUM_SCALARS)
{
    DISPATCH
}
#undef UPDATE

#define ADAM_ARGS(k)                                                                       \
    __global float *p##k, __global const float *g##k, __global float *m##k,                \
        __global float *v##k,
#define UPDATE(k, j)                                                                       \
    adam_at(p##k, g##k, m##k, v##k, j, step_size, beta1, beta2, inv_sqrt_bc2, eps, l2, decay)
__kernel void adam_multi(FOR_SLOTS(ADAM_ARGS) FOR_SLOTS(END_ARG) ADAM_SCALARS) { DISPATCH }
#undef UPDATE
