/* For test_optim*.c: float64 references of the optimizers, written from
 * PyTorch's docs (torch.optim.SGD, Adam, AdamW), and the accuracy
 * runner that compares clrt's optimizers with them. */
#ifndef TEST_OPTIM_REF_H
#define TEST_OPTIM_REF_H

#include "testutil.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int adam; /* 0: SGD, 1: Adam, 2: AdamW */
    double lr, momentum, weight_decay;
    double beta1, beta2, eps;
} ref_hyper;

/* One parameter's float64 state. */
typedef struct {
    double *p, *buf, *m, *v; /* buf: SGD momentum; m, v: Adam */
    size_t n;
} ref_param;

/* torch.optim.SGD, dampening 0, nesterov off: the first step with momentum
 * copies d into the buffer (no reliance on a zero start). */
static inline void ref_sgd_step(ref_param *r, const float *g, const ref_hyper *h, long t)
{
    for (size_t i = 0; i < r->n; i++) {
        double d = (double)g[i] + h->weight_decay * r->p[i];
        if (h->momentum != 0) {
            r->buf[i] = t == 1 ? d : h->momentum * r->buf[i] + d;
            d = r->buf[i];
        }
        r->p[i] -= h->lr * d;
    }
}

/* torch.optim.Adam, amsgrad off, step t >= 1; AdamW (h->adam == 2) first
 * scales p by 1 - lr * weight_decay and leaves the gradient alone. */
static inline void ref_adam_step(ref_param *r, const float *g, const ref_hyper *h, long t)
{
    double bc1 = 1 - pow(h->beta1, (double)t), bc2 = 1 - pow(h->beta2, (double)t);
    int decoupled = h->adam == 2;
    for (size_t i = 0; i < r->n; i++) {
        if (decoupled)
            r->p[i] *= 1 - h->lr * h->weight_decay;
        double gi = (double)g[i] + (decoupled ? 0 : h->weight_decay * r->p[i]);
        r->m[i] = h->beta1 * r->m[i] + (1 - h->beta1) * gi;
        r->v[i] = h->beta2 * r->v[i] + (1 - h->beta2) * gi * gi;
        double denom = sqrt(r->v[i]) / sqrt(bc2) + h->eps;
        r->p[i] -= h->lr / bc1 * r->m[i] / denom;
    }
}

static inline void ref_step(ref_param *r, const float *g, const ref_hyper *h, long t)
{
    if (h->adam)
        ref_adam_step(r, g, h, t);
    else
        ref_sgd_step(r, g, h, t);
}

/* ---- accuracy runner shared by test_optim.c and test_optim_multi.c ---- */
#define OPTIM_MAX_PARAMS 16

static inline clrt_optimizer *optim_make(const ref_hyper *h, int n, clrt_tensor **p,
                                         clrt_tensor **g)
{
    if (h->adam == 2)
        return clrt_adamw(n, p, g, h->lr, h->beta1, h->beta2, h->eps, h->weight_decay);
    if (h->adam)
        return clrt_adam(n, p, g, h->lr, h->beta1, h->beta2, h->eps, h->weight_decay);
    return clrt_sgd(n, p, g, h->lr, h->momentum, h->weight_decay);
}

/* Makes n parameters of the given 2-D shapes on d from fresh random values
 * in [-1, 1), runs `steps` steps with fresh random gradients (halving lr
 * through clrt_optimizer_set_lr half way), checks the gradients were left
 * alone, and returns the largest error of the parameters against the
 * float64 reference, relative to max(|p|, 1). */
static inline double optim_accuracy(clrt_device *d, const ref_hyper *h, int n,
                                    const int64_t (*shapes)[2], int steps, uint64_t seed)
{
    clrt_tensor *p[OPTIM_MAX_PARAMS], *g[OPTIM_MAX_PARAMS];
    ref_param r[OPTIM_MAX_PARAMS];
    float *last_g[OPTIM_MAX_PARAMS];
    ref_hyper now = *h;
    ck_assert_int_le(n, OPTIM_MAX_PARAMS);
    for (int i = 0; i < n; i++) {
        size_t size = (size_t)(shapes[i][0] * shapes[i][1]);
        float *p0 = tu_random_floats(&seed, size, -1, 1);
        p[i] = TU_NONNULL(clrt_from_host(d, CLRT_F32, 2, shapes[i], p0));
        g[i] = TU_NONNULL(clrt_empty(d, CLRT_F32, 2, shapes[i]));
        r[i] =
            (ref_param){calloc(size + 1, sizeof(double)), calloc(size + 1, sizeof(double)),
                        calloc(size + 1, sizeof(double)), calloc(size + 1, sizeof(double)), size};
        ck_assert(r[i].p && r[i].buf && r[i].m && r[i].v);
        for (size_t j = 0; j < size; j++)
            r[i].p[j] = p0[j];
        free(p0);
        last_g[i] = NULL;
    }
    clrt_optimizer *o = TU_NONNULL(optim_make(h, n, p, g));
    for (long t = 1; t <= steps; t++) {
        if (t == steps / 2 + 1) {
            now.lr = h->lr / 2;
            TU_OK(clrt_optimizer_set_lr(o, now.lr));
        }
        for (int i = 0; i < n; i++) {
            free(last_g[i]);
            last_g[i] = tu_random_floats(&seed, r[i].n, -1, 1);
            TU_OK(clrt_copy_from_host(g[i], last_g[i], r[i].n * sizeof(float)));
            ref_step(&r[i], last_g[i], &now, t);
        }
        TU_OK(clrt_optimizer_step(o));
    }
    ck_assert_int_eq(clrt_optimizer_steps(o), steps);
    double worst = 0;
    for (int i = 0; i < n; i++) {
        float *got = tu_read(p[i]), *grad = tu_read(g[i]);
        /* An empty parameter has nothing to compare; its shape is the check. */
        double err = r[i].n ? tu_rel_err(got, r[i].p, r[i].n, 1.0) : 0;
        ck_assert_msg(memcmp(grad, last_g[i], r[i].n * sizeof(float)) == 0,
                      "params[%d]: the step changed its gradient", i);
        worst = err > worst ? err : worst;
        free(got);
        free(grad);
        free(last_g[i]);
        free(r[i].p);
        free(r[i].buf);
        free(r[i].m);
        free(r[i].v);
        clrt_tensor_release(p[i]);
        clrt_tensor_release(g[i]);
    }
    clrt_optimizer_free(o);
    return worst;
}

#endif
