/* Batch normalization forward and backward (clrt/ops_norm.h; kernels in
 * clkernels/batchnorm.cl, which says how the passes go). */
#include "runtime/ops/norm/norm_internal.h"
#include "runtime/device/launch_internal.h"
#include "runtime/ops/workspace_internal.h"
#include "runtime/tensor/check_internal.h"

#include <clrt/ops_norm.h>
#include <stddef.h>
#include <stdio.h>

/* Must match bn_geom in clkernels/batchnorm.cl. */
typedef struct {
    cl_int N, C, HW, G, chunk;
    clrt__divisor c, hw;
} bn_geom_arg;
_Static_assert(sizeof(bn_geom_arg) == 9 * sizeof(cl_int) && offsetof(bn_geom_arg, c) == 20 &&
                   offsetof(bn_geom_arg, hw) == 28,
               "bn_geom_arg must match bn_geom in clkernels/batchnorm.cl");

/* x [N, C, ...]: its sizes, or an error naming op. */
static clrt_status dims_of(const char *op, const clrt_tensor *x, int64_t *n, int64_t *c,
                           int64_t *hw)
{
    char s[128];
    clrt_status st = clrt__check_dtype(op, "x", x, CLRT_F32);
    if (st != CLRT_OK)
        return st;
    if (x->ndim < 2)
        return clrt__fail(CLRT_ESHAPE, "%s: x must be [N, C, ...], got %s", op,
                          clrt_shape_str(x->ndim, x->shape, s, sizeof s));
    *n = x->shape[0], *c = x->shape[1], *hw = 1;
    for (int i = 2; i < x->ndim; i++)
        *hw *= x->shape[i];
    if (*n * *c > INT32_MAX || *n * *hw > INT32_MAX)
        return clrt__fail(CLRT_ENOTSUP, "%s: x %s is too large for 32-bit indexing", op,
                          clrt_shape_str(x->ndim, x->shape, s, sizeof s));
    return CLRT_OK;
}

/* A [C] float32 argument (NULL when optional and absent). */
static clrt_status check_channel_vec(const char *op, const char *name, const clrt_tensor *t,
                                     int64_t c)
{
    char s[128];
    if (!t)
        return CLRT_OK;
    clrt_status st = clrt__check_dtype(op, name, t, CLRT_F32);
    if (st == CLRT_OK && (t->ndim != 1 || t->shape[0] != c))
        st = clrt__fail(CLRT_ESHAPE, "%s: %s must be [%lld] (one per channel), got %s", op, name,
                        (long long)c, clrt_shape_str(t->ndim, t->shape, s, sizeof s));
    return st;
}

/* save: float32 [C, 2], (mean, invstd) per channel. */
static clrt_status check_save(const char *op, const clrt_tensor *save, int64_t c)
{
    int64_t shape[2] = {c, 2};
    return clrt__check_out(op, save, CLRT_F32, 2, shape);
}

/* BLOCK in batchnorm.cl: values a block of the CPU path's statistics. */
#define BN_BLOCK 256

/* Loop back edges of a partial-sum item over `chunk` images of planes of
 * hw values in work-groups of wg, a margin included: with WG 1 blocks of
 * BN_BLOCK values (pieces of a plane, or several planes), two passes over
 * each, four values a step, a tail of up to three and a step a plane;
 * else its share of the values (every WG-th), the tree (at most 7 steps).
 * The gradient's partial sums take one pass, fewer. */
static size_t partial_cost(size_t wg, int64_t chunk, int64_t hw)
{
    if (wg == 1)
        return (size_t)chunk * (2 * clrt__ceil_div((size_t)hw, 4) +
                                8 * clrt__ceil_div((size_t)hw, BN_BLOCK) + 10) +
               16;
    return clrt__ceil_div((size_t)chunk * (size_t)hw, wg) + 24;
}

/* The work-group of the partial-sum kernels for planes of hw values: a
 * power of two within the device's limit, at most 128 (the plane loops
 * need no more to stream); 1 on CPU devices (one item streams its run of
 * planes: batchnorm.cl), unless one plane is longer than an item's loops
 * run there (llvmpipe, clrt__loop_budget), where the tree's items share
 * it. */
static int reduce_wg(const clrt_device *d, int64_t hw)
{
    if (d->info.kind == CLRT_DEVICE_CPU && partial_cost(1, 1, hw) <= clrt__loop_budget(d))
        return 1;
    size_t wg = clrt__pow2_floor(d->info.max_work_group_size ? d->info.max_work_group_size : 1);
    return (int)(wg > 128 ? 128 : wg);
}

/* The launch geometry: G groups of `chunk` images per channel, enough
 * work-groups for every compute unit a few times over, and on a device
 * with a loop budget (llvmpipe ends a work item's loops early,
 * clrt__loop_budget) no more images a group than its items' loops cover
 * (at least one: partial_fits says whether that does). */
static bn_geom_arg geom_of(const clrt_device *d, int64_t n, int64_t c, int64_t hw)
{
    int64_t target = 4 * (int64_t)(d->info.compute_units ? d->info.compute_units : 1);
    int64_t groups = (target + c - 1) / c;
    groups = groups < 1 ? 1 : groups > n ? n : groups;
    int64_t chunk = n ? (n + groups - 1) / groups : 1;
    while (chunk > 1 && partial_cost((size_t)reduce_wg(d, hw), chunk, hw) > clrt__loop_budget(d))
        chunk = (chunk + 1) / 2;
    groups = n ? (n + chunk - 1) / chunk : 1;
    return (bn_geom_arg){(cl_int)n,
                         (cl_int)c,
                         (cl_int)hw,
                         (cl_int)groups,
                         (cl_int)chunk,
                         clrt__divisor_of((uint32_t)(c ? c : 1)),
                         clrt__divisor_of((uint32_t)(hw ? hw : 1))};
}

/* Whether g's partial sums (and the finalizing loop over its G groups) keep
 * within d's loop budget; CLRT_ENOTSUP naming op when not even one image a
 * group does, rather than statistics of part of the batch. */
static clrt_status partial_fits(const char *op, const clrt_device *d, const bn_geom_arg *g)
{
    size_t budget = clrt__loop_budget(d);
    if (partial_cost((size_t)reduce_wg(d, g->HW), g->chunk, g->HW) <= budget &&
        (size_t)g->G + 8 <= budget)
        return CLRT_OK;
    return clrt__fail(CLRT_ENOTSUP,
                      "%s: %d images of %d values per channel on %s take longer loops per work "
                      "item than it runs (its driver ends a work item's loops after %u "
                      "iterations)",
                      op, g->N, g->HW, d->info.name, d->loop_cap);
}

static cl_kernel bn_kernel(clrt_device *d, const bn_geom_arg *g, const char *name, int epi,
                           int residual)
{
    char options[80];
    snprintf(options, sizeof options, "-DWG=%d -DEPI=%d -DRESIDUAL=%d", reduce_wg(d, g->HW), epi,
             residual);
    return clrt__kernel(d, "batchnorm", options, name);
}

/* Runs a partial-sum kernel: one work-group per (channel, image group). */
static clrt_status run_partial(clrt_device *d, const char *name, const bn_geom_arg *g, int nargs,
                               const clrt__karg *args)
{
    cl_kernel k = bn_kernel(d, g, name, 0, 0);
    if (!k)
        return clrt_last_status();
    size_t local = (size_t)reduce_wg(d, g->HW), global = local * (size_t)g->C * (size_t)g->G;
    return clrt__launch(d, k, nargs, args, 1, &global, &local);
}

/* Runs a per-channel kernel: one item per channel. */
static clrt_status run_channels(clrt_device *d, const char *name, const bn_geom_arg *g, int nargs,
                                const clrt__karg *args)
{
    cl_kernel k = bn_kernel(d, g, name, 0, 0);
    return k ? clrt__launch_1d(d, k, (size_t)g->C, nargs, args) : clrt_last_status();
}

/* Runs an elementwise pass (bn_apply, bn_apply_grad): with WG 1 one item
 * streams each plane, else one item per value (batchnorm.cl). */
static clrt_status run_planes(clrt_device *d, cl_kernel k, const bn_geom_arg *g, int nargs,
                              const clrt__karg *args)
{
    size_t planes = (size_t)g->N * (size_t)g->C;
    if (k && reduce_wg(d, g->HW) == 1)
        return clrt__launch_1d(d, k, planes, nargs, args);
    return clrt__run_planes(d, k, (size_t)g->HW, planes, nargs, args);
}

typedef struct {
    clrt_tensor *out, *x, *weight, *bias, *run_mean, *run_var, *save, *residual;
    int training;
    double momentum, eps;
} bn_fwd;

static clrt_status check_forward(const char *op, const bn_fwd *f, const clrt__epilogue *epi,
                                 int64_t *n, int64_t *c, int64_t *hw)
{
    clrt__arg args[] = {{"x", f->x, 0},
                        {"weight", f->weight, 1},
                        {"bias", f->bias, 1},
                        {"running_mean", f->run_mean, 1},
                        {"running_var", f->run_var, 1},
                        {"save", f->save, !f->training},
                        {"residual", f->residual, 1},
                        {"out", f->out, 0}};
    clrt_status st = clrt__check_args(op, 8, args);
    if (st == CLRT_OK)
        st = dims_of(op, f->x, n, c, hw);
    if (st == CLRT_OK && (!f->weight != !f->bias || !f->run_mean != !f->run_var))
        st = clrt__fail(CLRT_EINVAL,
                        "%s: weight and bias, and running_mean and running_var, "
                        "come in pairs (both or neither)",
                        op);
    if (st == CLRT_OK && !f->training && !f->run_mean)
        st = clrt__fail(CLRT_EINVAL, "%s: evaluation needs running_mean and running_var", op);
    if (st == CLRT_OK && (!(f->eps > 0) || !(f->momentum >= 0 && f->momentum <= 1)))
        st = clrt__fail(CLRT_EINVAL, "%s: eps %g must be > 0 and momentum %g in [0, 1]", op, f->eps,
                        f->momentum);
    if (st == CLRT_OK && f->training && *n * *hw < 2)
        st = clrt__fail(CLRT_ESHAPE, "%s: training needs more than 1 value per channel, got %lld",
                        op, (long long)(*n * *hw));
    const char *vec[] = {"weight", "bias", "running_mean", "running_var"};
    const clrt_tensor *vt[] = {f->weight, f->bias, f->run_mean, f->run_var};
    for (int i = 0; i < 4 && st == CLRT_OK; i++)
        st = check_channel_vec(op, vec[i], vt[i], *c);
    if (st == CLRT_OK && f->save)
        st = check_save(op, f->save, *c);
    if (st == CLRT_OK)
        st = clrt__check_out(op, f->out, CLRT_F32, f->x->ndim, f->x->shape);
    if (st == CLRT_OK && f->residual)
        st = clrt__check_same_shape(op, f->residual, f->x);
    if (st == CLRT_OK)
        st = clrt__check_no_alias(op, &args[7], 7, args); /* out: every input */
    if (st == CLRT_OK)
        st = clrt__check_epilogue(op, epi, f->out);
    return st;
}

/* The statistics (training) or the running ones (evaluation) into coef. */
static clrt_status coefficients(clrt_device *d, const bn_fwd *f, const bn_geom_arg *g, cl_mem coef)
{
    cl_mem mx = clrt__mem(f->x), dummy = coef;
    cl_mem w = f->weight ? clrt__mem(f->weight) : dummy, b = f->bias ? clrt__mem(f->bias) : dummy;
    cl_mem rm = f->run_mean ? clrt__mem(f->run_mean) : dummy;
    cl_mem rv = f->run_var ? clrt__mem(f->run_var) : dummy;
    cl_int affine = f->weight != NULL, running = f->run_mean != NULL;
    cl_float momentum = (cl_float)f->momentum, eps = (cl_float)f->eps;
    if (!f->training) {
        clrt__karg args[] = {CLRT__ARG(coef), CLRT__ARG(w),      CLRT__ARG(b),   CLRT__ARG(rm),
                             CLRT__ARG(rv),   CLRT__ARG(affine), CLRT__ARG(eps), CLRT__ARG(*g)};
        return run_channels(d, "bn_eval_coef", g, 8, args);
    }
    cl_mem partial =
        clrt__workspace(d, CLRT__WS_ROWS_F, 4 * sizeof(float) * (size_t)g->C * (size_t)g->G);
    if (!partial)
        return clrt_last_status();
    cl_mem save = clrt__mem(f->save);
    clrt__karg pargs[] = {CLRT__ARG(mx), CLRT__ARG(partial), CLRT__ARG(*g)};
    clrt_status st = run_partial(d, "bn_stats_partial", g, 3, pargs);
    clrt__karg fargs[] = {CLRT__ARG(partial),  CLRT__ARG(save),   CLRT__ARG(coef),
                          CLRT__ARG(w),        CLRT__ARG(b),      CLRT__ARG(rm),
                          CLRT__ARG(rv),       CLRT__ARG(affine), CLRT__ARG(running),
                          CLRT__ARG(momentum), CLRT__ARG(eps),    CLRT__ARG(*g)};
    return st == CLRT_OK ? run_channels(d, "bn_stats_finalize", g, 12, fargs) : st;
}

static clrt_status forward(const bn_fwd *f, const clrt__epilogue *epi)
{
    const char *op = "clrt_f_batch_norm_out";
    int64_t n, c, hw;
    clrt_status st = check_forward(op, f, epi, &n, &c, &hw);
    if (st != CLRT_OK || n * c * hw == 0)
        return st;
    clrt_device *d = clrt__dev(f->x);
    bn_geom_arg g = geom_of(d, n, c, hw);
    if ((f->training && (st = partial_fits(op, d, &g)) != CLRT_OK) ||
        (st = clrt__workspace_begin(d)) != CLRT_OK)
        return st;
    cl_mem coef = clrt__workspace(d, CLRT__WS_MAT, 4 * sizeof(float) * (size_t)c);
    st = coef ? coefficients(d, f, &g, coef) : clrt_last_status();
    cl_mem mx = clrt__mem(f->x), my = clrt__mem(f->out);
    cl_mem mr = f->residual ? clrt__mem(f->residual) : mx; /* unread without one */
    clrt__karg args[] = {CLRT__ARG(mx), CLRT__ARG(my), CLRT__ARG(coef), CLRT__ARG(mr),
                         CLRT__ARG(g)};
    if (st == CLRT_OK)
        st = run_planes(d, bn_kernel(d, &g, "bn_apply", (int)epi->kind, f->residual != NULL), &g, 5,
                        args);
    clrt__workspace_end(d);
    return st;
}

clrt_status clrt__batch_norm_fused_out(clrt_tensor *out, clrt_tensor *x, clrt_tensor *weight,
                                       clrt_tensor *bias, clrt_tensor *running_mean,
                                       clrt_tensor *running_var, int training, double momentum,
                                       double eps, clrt_tensor *save, clrt_tensor *residual,
                                       const clrt__epilogue *epi)
{
    bn_fwd f = {out,  x,        weight,        bias,     running_mean, running_var,
                save, residual, training != 0, momentum, eps};
    return forward(&f, epi);
}

clrt_status clrt_f_batch_norm_out(clrt_tensor *out, clrt_tensor *x, clrt_tensor *weight,
                                  clrt_tensor *bias, clrt_tensor *running_mean,
                                  clrt_tensor *running_var, int training, double momentum,
                                  double eps, clrt_tensor *save)
{
    clrt_status st = clrt__unrecorded_write("clrt_f_batch_norm_out", out, "out", 3, x, "x", weight,
                                            "weight", bias, "bias");
    return st != CLRT_OK ? st
                         : clrt__batch_norm_fused_out(out, x, weight, bias, running_mean,
                                                      running_var, training, momentum, eps, save,
                                                      NULL, &CLRT__NO_EPILOGUE);
}

/* --- backward --- */

typedef struct {
    clrt_tensor *grad_x, *grad_w, *grad_b, *grad_out, *x, *weight, *save;
    int accumulate;
} bn_bwd;

static clrt_status check_backward(const char *op, const bn_bwd *b, int64_t *n, int64_t *c,
                                  int64_t *hw)
{
    clrt__arg args[] = {{"grad_out", b->grad_out, 0}, {"x", b->x, 0},
                        {"weight", b->weight, 1},     {"save", b->save, 0},
                        {"grad_x", b->grad_x, 1},     {"grad_weight", b->grad_w, 1},
                        {"grad_bias", b->grad_b, 1}};
    clrt_status st = clrt__check_args(op, 7, args);
    if (st == CLRT_OK)
        st = dims_of(op, b->x, n, c, hw);
    if (st == CLRT_OK && (!b->weight != !b->grad_w || !b->weight != !b->grad_b))
        st = clrt__fail(CLRT_EINVAL,
                        "%s: grad_weight and grad_bias go with weight (all three "
                        "or none)",
                        op);
    if (st == CLRT_OK)
        st = clrt__check_same_shape(op, b->grad_out, b->x);
    if (st == CLRT_OK)
        st = clrt__check_dtype(op, "grad_out", b->grad_out, CLRT_F32);
    const char *vec[] = {"weight", "grad_weight", "grad_bias"};
    const clrt_tensor *vt[] = {b->weight, b->grad_w, b->grad_b};
    for (int i = 0; i < 3 && st == CLRT_OK; i++)
        st = check_channel_vec(op, vec[i], vt[i], *c);
    if (st == CLRT_OK)
        st = check_save(op, b->save, *c);
    if (st == CLRT_OK && b->grad_x)
        st = clrt__check_out(op, b->grad_x, CLRT_F32, b->x->ndim, b->x->shape);
    for (int i = 4; i < 7 && st == CLRT_OK; i++) /* each output: the inputs, earlier outputs */
        st = clrt__check_no_alias(op, &args[i], i, args);
    return st;
}

static clrt_status backward(const bn_bwd *b)
{
    const char *op = "clrt_f_batch_norm_backward_out";
    int64_t n, c, hw;
    clrt_status st = check_backward(op, b, &n, &c, &hw);
    if (st != CLRT_OK || n * c * hw == 0)
        return st;
    clrt_device *d = clrt__dev(b->x);
    bn_geom_arg g = geom_of(d, n, c, hw);
    if ((st = partial_fits(op, d, &g)) != CLRT_OK || (st = clrt__workspace_begin(d)) != CLRT_OK)
        return st;
    cl_mem partial = clrt__workspace(d, CLRT__WS_ROWS_F, 2 * sizeof(float) * (size_t)c * g.G);
    cl_mem coef = partial ? clrt__workspace(d, CLRT__WS_MAT, 4 * sizeof(float) * (size_t)c) : NULL;
    st = coef ? CLRT_OK : clrt_last_status();
    cl_mem gy = clrt__mem(b->grad_out), mx = clrt__mem(b->x), save = clrt__mem(b->save);
    cl_mem w = b->weight ? clrt__mem(b->weight) : coef;
    cl_mem gw = b->grad_w ? clrt__mem(b->grad_w) : coef,
           gb = b->grad_b ? clrt__mem(b->grad_b) : coef;
    cl_int affine = b->weight != NULL, accumulate = b->accumulate != 0;
    clrt__karg pargs[] = {CLRT__ARG(gy), CLRT__ARG(mx), CLRT__ARG(save), CLRT__ARG(partial),
                          CLRT__ARG(g)};
    if (st == CLRT_OK)
        st = run_partial(d, "bn_grad_partial", &g, 5, pargs);
    clrt__karg fargs[] = {CLRT__ARG(partial), CLRT__ARG(save),       CLRT__ARG(w),
                          CLRT__ARG(gw),      CLRT__ARG(gb),         CLRT__ARG(coef),
                          CLRT__ARG(affine),  CLRT__ARG(accumulate), CLRT__ARG(g)};
    if (st == CLRT_OK)
        st = run_channels(d, "bn_grad_finalize", &g, 9, fargs);
    if (st == CLRT_OK && b->grad_x) {
        cl_mem gx = clrt__mem(b->grad_x);
        clrt__karg args[] = {CLRT__ARG(gy), CLRT__ARG(mx), CLRT__ARG(gx), CLRT__ARG(coef),
                             CLRT__ARG(g)};
        st = run_planes(d, bn_kernel(d, &g, "bn_apply_grad", 0, 0), &g, 5, args);
    }
    clrt__workspace_end(d);
    return st;
}

clrt_status clrt_f_batch_norm_backward_out(clrt_tensor *grad_x, clrt_tensor *grad_weight,
                                           clrt_tensor *grad_bias, clrt_tensor *grad_out,
                                           clrt_tensor *x, clrt_tensor *weight, clrt_tensor *save,
                                           int accumulate)
{
    bn_bwd b = {grad_x, grad_weight, grad_bias, grad_out, x, weight, save, accumulate};
    clrt_status st = clrt__check_unrecorded("clrt_f_batch_norm_backward_out", 3,
                                            (clrt_tensor *[]){grad_out, x, weight},
                                            (const char *const[]){"grad_out", "x", "weight"});
    return st != CLRT_OK ? st : backward(&b);
}
