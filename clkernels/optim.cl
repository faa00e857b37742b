/* optim.cl — fused optimizer updates, one work item per parameter element.
 * Every kernel takes (p, g, state..., n, float scalars...) in that order;
 * runtime/nn/optim.c sets them generically. Hyperparameters that depend on
 * the step count (Adam's bias corrections) are computed on the host. */

/* p -= lr * (g + weight_decay * p) */
__kernel void sgd(__global float *p, __global const float *g, ulong n, float lr,
                  float weight_decay)
{
    ulong i = get_global_id(0);
    if (i >= n)
        return;
    float pi = p[i];
    p[i] = pi - lr * (g[i] + weight_decay * pi);
}

/* buf = momentum * buf + (g + weight_decay * p); p -= lr * buf.
 * buf starts at zero, which makes the first step buf = d as PyTorch's. */
__kernel void sgd_momentum(__global float *p, __global const float *g, __global float *buf,
                           ulong n, float lr, float momentum, float weight_decay)
{
    ulong i = get_global_id(0);
    if (i >= n)
        return;
    float pi = p[i];
    float b = momentum * buf[i] + (g[i] + weight_decay * pi);
    buf[i] = b;
    p[i] = pi - lr * b;
}

/* PyTorch's Adam with L2 weight decay (l2 = weight_decay, decay = 1) and
 * AdamW, whose decoupled weight decay scales the parameter first (l2 = 0,
 * decay = 1 - lr * weight_decay); step_size = lr / (1 - beta1^t) and
 * inv_sqrt_bc2 = 1 / sqrt(1 - beta2^t). */
__kernel void adam(__global float *p, __global const float *g, __global float *m,
                   __global float *v, ulong n, float step_size, float beta1, float beta2,
                   float inv_sqrt_bc2, float eps, float l2, float decay)
{
    ulong i = get_global_id(0);
    if (i >= n)
        return;
    float pi = p[i];
    float gi = g[i] + l2 * pi;
    float mi = beta1 * m[i] + (1.0f - beta1) * gi;
    float vi = beta2 * v[i] + (1.0f - beta2) * gi * gi;
    m[i] = mi;
    v[i] = vi;
    p[i] = pi * decay - step_size * mi / (sqrt(vi) * inv_sqrt_bc2 + eps);
}
