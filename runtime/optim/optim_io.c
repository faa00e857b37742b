/* Optimizer checkpoints: state buffers and the step count to and from a
 * safetensors file (the format is in runtime/tensor/safetensors_*, the
 * metadata in optim_meta.c). */
#include "runtime/core/alloc_internal.h"
#include "runtime/optim/optim_io_internal.h"
#include "runtime/optim/optim_meta_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NAME_CAP CLRT__OPTIM_NAME_CAP

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

clrt_status clrt__optim_state_get(const clrt_optimizer *o, clrt__optim_state *s, const char *op)
{
    memset(s, 0, sizeof *s);
    if (!o)
        return clrt__fail(CLRT_EINVAL, "%s: optimizer is NULL", op);
    int count = o->n * o->kind->n_state;
    snprintf(s->params, sizeof s->params, "%d", o->n);
    snprintf(s->steps, sizeof s->steps, "%" PRId64, o->steps);
    const char *const meta[CLRT__OPTIM_META] = {"optimizer",     o->kind->name, "variant",
                                                o->kind->kernel, "params",      s->params,
                                                "step",          s->steps};
    memcpy(s->meta, meta, sizeof meta);
    s->names = state_names(o);
    s->items = clrt__calloc((size_t)count + 1, sizeof *s->items);
    clrt_status st =
        s->names && s->items ? CLRT_OK : clrt__fail(CLRT_ENOMEM, "%s: out of host memory", op);
    for (int k = 0; st == CLRT_OK && k < count; k++) {
        const clrt_tensor *t = o->state[k];
        size_t bytes = clrt_tensor_nbytes(t);
        void *host = clrt__malloc(bytes ? bytes : 1);
        s->items[k] = (clrt__st_item){s->names[k], "F32", t->ndim, t->shape, host, bytes};
        s->n = k + 1;
        st = host ? clrt_to_host(t, host, bytes)
                  : clrt__fail(CLRT_ENOMEM, "%s: out of host memory", op);
    }
    if (st != CLRT_OK)
        clrt__optim_state_free(s);
    return st;
}

void clrt__optim_state_free(clrt__optim_state *s)
{
    clrt__st_items_free(s->items, s->n);
    free(s->names);
    memset(s, 0, sizeof *s);
}

clrt_status clrt_optimizer_save(const clrt_optimizer *o, const char *path)
{
    clrt__optim_state s;
    if (!o || !path)
        return clrt__fail(CLRT_EINVAL, "clrt_optimizer_save: NULL argument");
    clrt_status st = clrt__optim_state_get(o, &s, "clrt_optimizer_save");
    if (st == CLRT_OK)
        st =
            clrt__st_write(path, s.items, s.n, s.meta, CLRT__OPTIM_META / 2, "clrt_optimizer_save");
    clrt__optim_state_free(&s);
    return st;
}

/* The file's metadata names this optimizer; *steps gets its step count. */
static clrt_status check_meta(const clrt_optimizer *o, const clrt__st_file *f, const char *path,
                              int64_t *steps)
{
    clrt__optim_meta m;
    clrt_status st = clrt__optim_meta_read(f, path, &m);
    if (st != CLRT_OK)
        return st;
    if (strcmp(m.optimizer, o->kind->name) != 0 || strcmp(m.variant, o->kind->kernel) != 0)
        return clrt__fail(CLRT_EINVAL,
                          "clrt_optimizer_load: %s holds %s (%s) state, this optimizer is %s (%s)",
                          path, m.optimizer, m.variant, o->kind->name, o->kind->kernel);
    if (m.params != o->n)
        return clrt__fail(CLRT_EINVAL,
                          "clrt_optimizer_load: %s has state for %d parameters, this optimizer "
                          "has %d",
                          path, m.params, o->n);
    *steps = m.steps;
    return CLRT_OK;
}

/* Every state buffer is in the file with the right dtype and shape, and
 * the file holds nothing else. want[k] is buffer k's entry. */
static clrt_status match(const clrt_optimizer *o, const clrt__st_file *f, const char *path,
                         char (*names)[NAME_CAP], const clrt__st_tensor **want)
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
        want[k] = e;
    }
    if (f->count != count)
        return clrt__fail(CLRT_EFORMAT,
                          "clrt_optimizer_load: %s holds %d tensors, the optimizer has %d", path,
                          f->count, count);
    return CLRT_OK;
}

/* Reads the matched buffers and puts them in the optimizer's state. */
static clrt_status load_state(clrt_optimizer *o, clrt__st_file *f, const clrt__st_tensor **want)
{
    int count = o->n * o->kind->n_state;
    const void **src = clrt__calloc((size_t)count + 1, sizeof *src);
    clrt_status st = src ? clrt__st_fetch(f, count, want)
                         : clrt__fail(CLRT_ENOMEM, "clrt_optimizer_load: out of host memory");
    for (int k = 0; st == CLRT_OK && k < count; k++)
        src[k] = want[k]->data;
    if (st == CLRT_OK)
        st = clrt__tensor_replace_all(count, o->state, src);
    free(src);
    return st;
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
    const clrt__st_tensor **want = names ? clrt__calloc((size_t)count + 1, sizeof *want) : NULL;
    if (st == CLRT_OK && !want)
        st = clrt__fail(CLRT_ENOMEM, "clrt_optimizer_load: out of host memory");
    if (st == CLRT_OK)
        st = check_meta(o, &f, path, &steps);
    if (st == CLRT_OK)
        st = match(o, &f, path, names, want);
    if (st == CLRT_OK)
        st = load_state(o, &f, want);
    if (st == CLRT_OK)
        o->steps = steps;
    free(want);
    free(names);
    clrt__st_close(&f);
    return st;
}
