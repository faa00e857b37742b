/* Optimizer checkpoints: state buffers and the step count to and from a
 * safetensors file (the format is in runtime/tensor/safetensors_*). */
#include "runtime/core/alloc_internal.h"
#include "runtime/optim/optim_internal.h"
#include "runtime/tensor/safetensors_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NAME_CAP 64

/* names[k] = "state.<i>.<name>" for state buffer k = i * n_state + j. */
static char (*state_names(const clrt_optimizer *o))[NAME_CAP]
{
    int ns = o->kind->n_state;
    char(*names)[NAME_CAP] = clrt__calloc((size_t)(o->n * ns) + 1, NAME_CAP);
    for (int k = 0; names && k < o->n * ns; k++)
        snprintf(names[k], NAME_CAP, "state.%d.%s", k / ns, o->kind->state_names[k % ns]);
    if (!names)
        clrt__fail(CLRT_ENOMEM, "optimizer checkpoint: out of host memory");
    return names;
}

clrt_status clrt_optimizer_save(const clrt_optimizer *o, const char *path)
{
    if (!o || !path)
        return clrt__fail(CLRT_EINVAL, "clrt_optimizer_save: NULL argument");
    int count = o->n * o->kind->n_state;
    char params[24], steps[24];
    snprintf(params, sizeof params, "%d", o->n);
    snprintf(steps, sizeof steps, "%" PRId64, o->steps);
    const char *const meta[] = {"optimizer", o->kind->name, "variant", o->kind->kernel,
                                "params",    params,        "step",    steps};
    char(*names)[NAME_CAP] = state_names(o);
    clrt__st_item *items = clrt__calloc((size_t)count + 1, sizeof *items);
    clrt_status st =
        names && items ? CLRT_OK : clrt__fail(CLRT_ENOMEM, "clrt_optimizer_save: out of memory");
    for (int k = 0; st == CLRT_OK && k < count; k++) {
        const clrt_tensor *t = o->state[k];
        size_t bytes = clrt_tensor_nbytes(t);
        void *host = clrt__malloc(bytes ? bytes : 1);
        items[k] = (clrt__st_item){names[k], "F32", t->ndim, t->shape, host, bytes};
        st = host ? clrt_to_host(t, host, bytes)
                  : clrt__fail(CLRT_ENOMEM, "clrt_optimizer_save: out of host memory");
    }
    if (st == CLRT_OK)
        st = clrt__st_write(path, items, count, meta, 4);
    for (int k = 0; items && k < count; k++)
        free((void *)items[k].data);
    free(items);
    free(names);
    return st;
}

/* The file's metadata names this optimizer; *steps gets its step count. */
static clrt_status check_meta(const clrt_optimizer *o, const clrt__st_file *f, const char *path,
                              int64_t *steps)
{
    const char *kind = clrt__st_meta(f, "optimizer"), *variant = clrt__st_meta(f, "variant");
    const char *params = clrt__st_meta(f, "params"), *step = clrt__st_meta(f, "step");
    char *end = NULL;
    if (!kind || !variant || !params || !step)
        return clrt__fail(CLRT_EFORMAT,
                          "clrt_optimizer_load: %s: not an optimizer checkpoint (its metadata "
                          "lacks optimizer, variant, params or step)",
                          path);
    if (strcmp(kind, o->kind->name) != 0 || strcmp(variant, o->kind->kernel) != 0)
        return clrt__fail(CLRT_EINVAL,
                          "clrt_optimizer_load: %s holds %s (%s) state, this optimizer is %s (%s)",
                          path, kind, variant, o->kind->name, o->kind->kernel);
    if (strcmp(params, "") == 0 || strtol(params, &end, 10) != o->n || *end)
        return clrt__fail(CLRT_EINVAL,
                          "clrt_optimizer_load: %s has state for %s parameters, this optimizer "
                          "has %d",
                          path, params, o->n);
    long long s = strtoll(step, &end, 10);
    if (strcmp(step, "") == 0 || *end || s < 0)
        return clrt__fail(CLRT_EFORMAT, "clrt_optimizer_load: %s: bad step count '%s'", path, step);
    *steps = s;
    return CLRT_OK;
}

/* Every state buffer is in the file with the right dtype and shape, and
 * the file holds nothing else. src[k] points at buffer k's data. */
static clrt_status match(const clrt_optimizer *o, const clrt__st_file *f, const char *path,
                         char (*names)[NAME_CAP], const void **src)
{
    char a[128], b[128];
    int count = o->n * o->kind->n_state;
    for (int k = 0; k < count; k++) {
        const clrt_tensor *t = o->state[k];
        const clrt__st_tensor *e = clrt__st_find(f, names[k]);
        if (!e)
            return clrt__fail(CLRT_EFORMAT, "clrt_optimizer_load: %s lacks '%s'", path, names[k]);
        if (strcmp(e->dtype, "F32") != 0 || e->ndim != t->ndim ||
            memcmp(e->shape, t->shape, (size_t)t->ndim * sizeof *t->shape) != 0)
            return clrt__fail(
                CLRT_ESHAPE, "clrt_optimizer_load: %s: '%s' is %s %s, the optimizer's is F32 %s",
                path, names[k], e->dtype, clrt_shape_str(e->ndim, e->shape, a, sizeof a),
                clrt_shape_str(t->ndim, t->shape, b, sizeof b));
        src[k] = e->data;
    }
    if (f->count != count)
        return clrt__fail(CLRT_EFORMAT,
                          "clrt_optimizer_load: %s holds %d tensors, the optimizer has %d", path,
                          f->count, count);
    return CLRT_OK;
}

clrt_status clrt_optimizer_load(clrt_optimizer *o, const char *path)
{
    if (!o || !path)
        return clrt__fail(CLRT_EINVAL, "clrt_optimizer_load: NULL argument");
    int count = o->n * o->kind->n_state;
    int64_t steps = 0;
    clrt__st_file f;
    clrt_status st = clrt__st_read(path, &f);
    char(*names)[NAME_CAP] = st == CLRT_OK ? state_names(o) : NULL;
    const void **src = names ? clrt__calloc((size_t)count + 1, sizeof *src) : NULL;
    if (st == CLRT_OK && !src)
        st = clrt__fail(CLRT_ENOMEM, "clrt_optimizer_load: out of host memory");
    if (st == CLRT_OK)
        st = check_meta(o, &f, path, &steps);
    if (st == CLRT_OK)
        st = match(o, &f, path, names, src);
    if (st == CLRT_OK)
        st = clrt__tensor_replace_all(count, o->state, src);
    if (st == CLRT_OK)
        o->steps = steps;
    free(src);
    free(names);
    clrt__st_close(&f);
    return st;
}
