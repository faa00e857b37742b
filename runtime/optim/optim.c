/* Optimizers: argument checks, state, and the step loop shared by every
 * kind: one launch per CLRT__OPTIM_SLOTS parameter tensors (the kind's
 * _multi kernel), or one per tensor on a device whose kernels take too few
 * argument bytes for it. */
#include "runtime/optim/optim_internal.h"
#include "runtime/core/alloc_internal.h"
#include "runtime/core/lookup_internal.h"
#include "runtime/tensor/check_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

clrt_status clrt__check_hyper(const char *api, const char *what, double v, double lo, double hi)
{
    if (isfinite(v) && v >= lo && v < hi)
        return CLRT_OK;
    if (isinf(hi))
        return clrt__fail(CLRT_EINVAL, "%s: %s = %g must be finite and >= %g", api, what, v, lo);
    return clrt__fail(CLRT_EINVAL, "%s: %s = %g must be in [%g, %g)", api, what, v, lo, hi);
}

/* One parameter/gradient pair: non-NULL, float32, equal shapes, on dev. */
static clrt_status check_pair(const char *api, int i, const clrt_tensor *p, const clrt_tensor *g,
                              const clrt_device *dev)
{
    char a[128], b[128];
    if (!p || !g)
        return clrt__fail(CLRT_EINVAL, "%s: %s[%d] is NULL", api, p ? "grads" : "params", i);
    if (p->dtype != CLRT_F32 || g->dtype != CLRT_F32)
        return clrt__fail(CLRT_EDTYPE,
                          "%s: params[%d] and grads[%d] must be float32, got %s and %s", api, i, i,
                          clrt_dtype_str(p->dtype), clrt_dtype_str(g->dtype));
    if (!clrt__shape_equal(p, g))
        return clrt__fail(CLRT_ESHAPE, "%s: params[%d] has shape %s but grads[%d] has shape %s",
                          api, i, clrt_shape_str(p->ndim, p->shape, a, sizeof a), i,
                          clrt_shape_str(g->ndim, g->shape, b, sizeof b));
    const clrt_tensor *off = clrt__dev(p) != dev ? p : clrt__dev(g) != dev ? g : NULL;
    if (off)
        return clrt__fail(CLRT_EDEVMISMATCH,
                          "%s: params[0] is on %s but %s[%d] is on %s; all parameters and "
                          "gradients must be on one device: move them with clrt_tensor_to()",
                          api, dev->info.name, off == p ? "params" : "grads", i,
                          clrt__dev(off)->info.name);
    return CLRT_OK;
}

static clrt_status check_tensors(const char *api, int n, clrt_tensor *const *params,
                                 clrt_tensor *const *grads)
{
    if (n <= 0)
        return clrt__fail(CLRT_EINVAL, "%s: n = %d, needs at least one parameter", api, n);
    if (!params || !grads)
        return clrt__fail(CLRT_EINVAL, "%s: %s is NULL", api, params ? "grads" : "params");
    if (!params[0])
        return clrt__fail(CLRT_EINVAL, "%s: params[0] is NULL", api);
    for (int i = 0; i < n; i++) {
        clrt_status s = check_pair(api, i, params[i], grads[i], clrt__dev(params[0]));
        if (s != CLRT_OK)
            return s;
    }
    /* A parameter listed twice would be updated twice per step (a sort,
     * not a pairwise loop: a model may have 10^5 parameter tensors). */
    const void **storage = clrt__malloc((size_t)n * sizeof *storage);
    if (!storage)
        return clrt__fail(CLRT_ENOMEM, "%s: out of host memory", api);
    for (int i = 0; i < n; i++)
        storage[i] = params[i]->storage;
    int j = 0, i = 0, again = clrt__first_repeat(n, storage, &j, &i);
    free(storage);
    if (again < 0)
        return clrt__fail(CLRT_ENOMEM, "%s: out of host memory", api);
    if (again)
        return clrt__fail(CLRT_EINVAL,
                          "%s: params[%d] and params[%d] share storage (a parameter listed twice)",
                          api, j, i);
    return CLRT_OK;
}

static clrt_status alloc_state(clrt_optimizer *o)
{
    int per = o->kind->n_state;
    if (per == 0)
        return CLRT_OK;
    o->state = clrt__calloc((size_t)o->n * (size_t)per, sizeof *o->state);
    if (!o->state)
        return clrt__fail(CLRT_ENOMEM, "out of host memory creating an optimizer");
    for (int i = 0; i < o->n * per; i++) {
        const clrt_tensor *p = o->params[i / per];
        o->state[i] = clrt_zeros(o->dev, CLRT_F32, p->ndim, p->shape);
        if (!o->state[i])
            return clrt_last_status();
    }
    return CLRT_OK;
}

/* Retains the tensors, then allocates state and fetches the kernel. */
static clrt_status init(clrt_optimizer *o, clrt_tensor *const *params, clrt_tensor *const *grads)
{
    o->params = clrt__calloc((size_t)o->n, sizeof *o->params);
    o->grads = clrt__calloc((size_t)o->n, sizeof *o->grads);
    if (!o->params || !o->grads)
        return clrt__fail(CLRT_ENOMEM, "out of host memory creating an optimizer");
    for (int i = 0; i < o->n; i++) {
        clrt_tensor_retain(o->params[i] = params[i]);
        clrt_tensor_retain(o->grads[i] = grads[i]);
    }
    clrt_status s = alloc_state(o);
    if (s != CLRT_OK)
        return s;
    o->kernel = clrt__kernel(o->dev, "optim", NULL, o->kind->kernel);
    if (!o->kernel)
        return clrt_last_status();
    size_t arg_bytes =
        CLRT__OPTIM_SLOTS * ((2 + (size_t)o->kind->n_state) * sizeof(cl_mem) + sizeof(cl_ulong)) +
        CLRT__OPTIM_MAX_SCALARS * sizeof(float);
    if (arg_bytes > o->dev->max_arg_bytes)
        return CLRT_OK;
    char name[64];
    snprintf(name, sizeof name, "%s_multi", o->kind->kernel);
    o->multi_kernel = clrt__kernel(o->dev, "optim", NULL, name);
    return o->multi_kernel ? CLRT_OK : clrt_last_status();
}

clrt_optimizer *clrt__optim_new(const clrt__optim_kind *kind, const char *api, int n,
                                clrt_tensor *const *params, clrt_tensor *const *grads, double lr)
{
    if (check_tensors(api, n, params, grads) != CLRT_OK ||
        clrt__check_hyper(api, "lr", lr, 0, INFINITY) != CLRT_OK)
        return NULL;
    clrt_optimizer *o = clrt__calloc(1, sizeof *o);
    if (!o) {
        clrt__fail(CLRT_ENOMEM, "%s: out of host memory", api);
        return NULL;
    }
    o->kind = kind;
    o->n = n;
    o->dev = clrt__dev(params[0]);
    o->lr = lr;
    if (init(o, params, grads) != CLRT_OK) {
        clrt_status s = clrt_last_status();
        clrt__fail(s, "%s: %s", api, clrt_last_error());
        clrt_optimizer_free(o);
        return NULL;
    }
    return o;
}

/* Replaces r's zeroed state with copies of o's (same shapes, any devices). */
static clrt_status copy_state(clrt_optimizer *r, const clrt_optimizer *o)
{
    for (int i = 0; i < o->n * o->kind->n_state; i++) {
        clrt_tensor *copy = clrt__tensor_copy_on(o->state[i], r->dev);
        if (!copy)
            return clrt_last_status();
        clrt_tensor_release(r->state[i]);
        r->state[i] = copy;
    }
    return CLRT_OK;
}

clrt_optimizer *clrt__optim_replica(const clrt_optimizer *o, int n, clrt_tensor *const *params,
                                    clrt_tensor *const *grads)
{
    const char *api = "data-parallel optimizer replica";
    for (int i = 0; i < n && i < o->n && params && params[i]; i++)
        if (!clrt__shape_equal(params[i], o->params[i]))
            n = -1;
    if (n != o->n) {
        clrt__fail(CLRT_EINVAL, "%s: the replica's parameters do not match the optimizer's %d", api,
                   o->n);
        return NULL;
    }
    clrt_optimizer *r = clrt__optim_new(o->kind, api, n, params, grads, o->lr);
    if (!r)
        return NULL;
    r->momentum = o->momentum, r->beta1 = o->beta1, r->beta2 = o->beta2;
    r->eps = o->eps, r->weight_decay = o->weight_decay, r->steps = o->steps;
    if (copy_state(r, o) != CLRT_OK) {
        clrt_optimizer_free(r);
        return NULL;
    }
    return r;
}

void clrt_optimizer_free(clrt_optimizer *o)
{
    if (!o)
        return;
    for (int i = 0; i < o->n; i++) {
        if (o->params)
            clrt_tensor_release(o->params[i]);
        if (o->grads)
            clrt_tensor_release(o->grads[i]);
        for (int j = 0; o->state && j < o->kind->n_state; j++)
            clrt_tensor_release(o->state[i * o->kind->n_state + j]);
    }
    free(o->params);
    free(o->grads);
    free(o->state);
    free(o);
}

/* Sets (p, g, state..., n, scalars...) and enqueues parameter i. */
static clrt_status launch_one(clrt_optimizer *o, int i, const float *scalars, int n_scalars)
{
    clrt__karg args[2 + CLRT__OPTIM_MAX_STATE + 1 + CLRT__OPTIM_MAX_SCALARS];
    cl_mem mems[2 + CLRT__OPTIM_MAX_STATE];
    int n_mems = 0, k = 0;
    mems[n_mems++] = clrt__mem(o->params[i]);
    mems[n_mems++] = clrt__mem(o->grads[i]);
    for (int j = 0; j < o->kind->n_state; j++)
        mems[n_mems++] = clrt__mem(o->state[i * o->kind->n_state + j]);
    for (int j = 0; j < n_mems; j++)
        args[k++] = CLRT__ARG(mems[j]);
    cl_ulong numel = (cl_ulong)o->params[i]->numel;
    args[k++] = CLRT__ARG(numel);
    for (int j = 0; j < n_scalars; j++)
        args[k++] = CLRT__ARG(scalars[j]);
    return clrt__launch_1d(o->dev, o->kernel, (size_t)numel, k, args);
}

/* Sets ((p, g, state...) per slot, the slots' ends, scalars...) and
 * enqueues parameters first .. first + count - 1 in one launch; the slots
 * past count repeat the first tensor's buffers and end where the last
 * used one does, so no item reaches them. */
static clrt_status launch_group(clrt_optimizer *o, int first, int count, const float *scalars,
                                int n_scalars)
{
    enum { PER = 2 + CLRT__OPTIM_MAX_STATE };
    clrt__karg args[CLRT__OPTIM_SLOTS * (PER + 1) + CLRT__OPTIM_MAX_SCALARS];
    cl_mem mems[CLRT__OPTIM_SLOTS * PER];
    cl_ulong ends[CLRT__OPTIM_SLOTS], total = 0;
    int per = 2 + o->kind->n_state, k = 0;
    for (int s = 0; s < CLRT__OPTIM_SLOTS; s++) {
        int i = first + (s < count ? s : 0);
        cl_mem *m = mems + s * per;
        m[0] = clrt__mem(o->params[i]);
        m[1] = clrt__mem(o->grads[i]);
        for (int j = 0; j < o->kind->n_state; j++)
            m[2 + j] = clrt__mem(o->state[i * o->kind->n_state + j]);
        for (int j = 0; j < per; j++)
            args[k++] = CLRT__ARG(m[j]);
        total += s < count ? (cl_ulong)o->params[i]->numel : 0;
        ends[s] = total;
    }
    for (int s = 0; s < CLRT__OPTIM_SLOTS; s++)
        args[k++] = CLRT__ARG(ends[s]);
    for (int j = 0; j < n_scalars; j++)
        args[k++] = CLRT__ARG(scalars[j]);
    return total == 0 ? CLRT_OK : clrt__launch_1d(o->dev, o->multi_kernel, (size_t)total, k, args);
}

/* The optimizer's state and kernel belong to o->dev: a parameter (or its
 * gradient) moved since, by clrt_module_to, is an error the user can act
 * on, never a launch of one device's kernel on another's buffers (which
 * drivers answer with an abort). */
static clrt_status check_not_moved(const clrt_optimizer *o)
{
    for (int i = 0; i < o->n; i++) {
        const clrt_tensor *off = clrt__dev(o->params[i]) != o->dev  ? o->params[i]
                                 : clrt__dev(o->grads[i]) != o->dev ? o->grads[i]
                                                                    : NULL;
        if (off)
            return clrt__fail(
                CLRT_EDEVMISMATCH,
                "clrt_optimizer_step (%s): %s[%d] is on %s but the optimizer's state and kernels "
                "are on %s (where the parameters were when it was made): the parameters moved "
                "after the optimizer was created, e.g. by clrt_module_to. Create the optimizer "
                "after moving the model (as in PyTorch), or move the model back to %s",
                o->kind->name, off == o->params[i] ? "params" : "grads", i,
                clrt__dev(off)->info.name, o->dev->info.name, o->dev->info.name);
    }
    return CLRT_OK;
}

clrt_status clrt__optim_check_device(const clrt_optimizer *o, const clrt_device *d, const char *api)
{
    if (d == o->dev)
        return CLRT_OK;
    return clrt__fail(CLRT_EDEVMISMATCH,
                      "%s: training would run on %s but the optimizer (%s) and its state are on "
                      "%s (where its parameters were when it was made). Move the model to %s "
                      "(clrt_module_to) before creating the optimizer, or train on %s",
                      api, d->info.name, o->kind->name, o->dev->info.name, d->info.name,
                      o->dev->info.name);
}

clrt_status clrt_optimizer_step(clrt_optimizer *o)
{
    if (!o)
        return clrt__fail(CLRT_EINVAL, "clrt_optimizer_step: optimizer is NULL");
    clrt_status moved = check_not_moved(o);
    if (moved != CLRT_OK)
        return moved;
    float scalars[CLRT__OPTIM_MAX_SCALARS];
    o->steps++;
    /* In-place writes: what was computed from the parameters (a backward
     * still pending, the ONNX importer's folded weights) sees them. */
    for (int i = 0; i < o->n; i++)
        clrt__bump_version(o->params[i]);
    int n_scalars = o->kind->scalars(o, scalars);
    int group = o->multi_kernel ? CLRT__OPTIM_SLOTS : 1;
    for (int i = 0; i < o->n; i += group) {
        int count = o->n - i < group ? o->n - i : group;
        clrt_status s = o->multi_kernel ? launch_group(o, i, count, scalars, n_scalars)
                                        : launch_one(o, i, scalars, n_scalars);
        if (s != CLRT_OK)
            return clrt__fail(s, "clrt_optimizer_step (%s, params[%d..%d]): %s", o->kind->name, i,
                              i + count - 1, clrt_last_error());
    }
    return CLRT_OK;
}

clrt_status clrt_optimizer_set_lr(clrt_optimizer *o, double lr)
{
    if (!o)
        return clrt__fail(CLRT_EINVAL, "clrt_optimizer_set_lr: optimizer is NULL");
    clrt_status s = clrt__check_hyper("clrt_optimizer_set_lr", "lr", lr, 0, INFINITY);
    if (s == CLRT_OK)
        o->lr = lr;
    return s;
}

double clrt_optimizer_lr(const clrt_optimizer *o) { return o ? o->lr : NAN; }

int64_t clrt_optimizer_steps(const clrt_optimizer *o) { return o ? o->steps : -1; }

const char *clrt_optimizer_name(const clrt_optimizer *o) { return o ? o->kind->name : "(null)"; }
