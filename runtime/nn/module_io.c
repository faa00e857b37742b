/* Module checkpoints: parameters to and from safetensors files under their
 * state_dict names (the format itself is in runtime/tensor/safetensors_*). */
#include "runtime/core/alloc_internal.h"
#include "runtime/nn/module_internal.h"
#include "runtime/tensor/safetensors_internal.h"

#include <stdlib.h>
#include <string.h>

/* The module's parameters in state_dict order (arrays the caller frees;
 * names borrowed from the module). */
typedef struct {
    int n;
    const char **names;
    clrt_tensor **params;
} param_list;

static clrt_status list_params(clrt_module *m, param_list *l, const char *op)
{
    memset(l, 0, sizeof *l);
    if (!m)
        return clrt__fail(CLRT_EINVAL, "%s: module is NULL", op);
    int n = clrt_module_parameters(m, NULL, NULL, NULL, 0);
    if (n < 0)
        return (clrt_status)n;
    l->names = clrt__calloc((size_t)n + 1, sizeof *l->names);
    l->params = clrt__calloc((size_t)n + 1, sizeof *l->params);
    if (!l->names || !l->params)
        return clrt__fail(CLRT_ENOMEM, "%s: out of host memory", op);
    l->n = clrt_module_parameters(m, l->names, l->params, NULL, n);
    return l->n < 0 ? (clrt_status)l->n : CLRT_OK;
}

static void free_list(param_list *l)
{
    free(l->names);
    free(l->params);
}

/* --- save --- */

clrt_status clrt__module_state_items(clrt_module *m, clrt__st_item **out, int *count,
                                     const char *op)
{
    param_list l;
    *out = NULL;
    *count = 0;
    clrt_status st = list_params(m, &l, op);
    clrt__st_item *items = st == CLRT_OK ? clrt__calloc((size_t)l.n + 1, sizeof *items) : NULL;
    if (st == CLRT_OK && !items)
        st = clrt__fail(CLRT_ENOMEM, "%s: out of host memory", op);
    for (int i = 0; st == CLRT_OK && i < l.n; i++) {
        clrt_tensor *p = l.params[i];
        size_t bytes = clrt_tensor_nbytes(p);
        void *host = clrt__malloc(bytes ? bytes : 1);
        items[i] =
            (clrt__st_item){l.names[i], clrt__st_dtype(p->dtype), p->ndim, p->shape, host, bytes};
        st = host ? clrt_to_host(p, host, bytes)
                  : clrt__fail(CLRT_ENOMEM, "%s: out of host memory", op);
    }
    if (st == CLRT_OK)
        *out = items, *count = l.n;
    else
        clrt__st_items_free(items, l.n);
    free_list(&l);
    return st;
}

clrt_status clrt_module_save(clrt_module *m, const char *path)
{
    static const char *const meta[] = {"format", "pt"}; /* what safetensors.torch writes */
    clrt__st_item *items = NULL;
    int n = 0;
    clrt_status st = path ? clrt__module_state_items(m, &items, &n, "clrt_module_save")
                          : clrt__fail(CLRT_EINVAL, "clrt_module_save: path is NULL");
    if (st == CLRT_OK)
        st = clrt__st_write(path, items, n, meta, 1, "clrt_module_save");
    clrt__st_items_free(items, n);
    return st;
}

/* --- load --- */

/* Appends ", name" (or "name" first) to out, silently truncating. */
static void append_name(char *out, size_t cap, const char *name)
{
    size_t n = strlen(out);
    if (n + 1 < cap)
        snprintf(out + n, cap - n, "%s%s", n && out[n - 1] != ' ' ? ", " : "", name);
}

/* Checks each file tensor the model has (src[i]: its data, or NULL when
 * the file lacks parameter i) and lists what either side lacks. */
static clrt_status match(const char *path, const param_list *l, const clrt__st_file *f,
                         const void **src, char *missing, char *unexpected, size_t cap)
{
    char a[128], b[128];
    for (int i = 0; i < l->n; i++) {
        const clrt_tensor *p = l->params[i];
        const clrt__st_tensor *t = clrt__st_find(f, l->names[i]);
        src[i] = t ? t->data : NULL;
        if (!t) {
            append_name(missing, cap, l->names[i]);
            continue;
        }
        if (strcmp(t->dtype, clrt__st_dtype(p->dtype)) != 0)
            return clrt__fail(CLRT_EDTYPE, "clrt_module_load: %s: '%s' is %s, the model's is %s",
                              path, t->name, t->dtype, clrt__st_dtype(p->dtype));
        if (t->ndim != p->ndim || memcmp(t->shape, p->shape, (size_t)p->ndim * sizeof *p->shape))
            return clrt__fail(CLRT_ESHAPE,
                              "clrt_module_load: %s: '%s' has shape %s, the model's is %s", path,
                              t->name, clrt_shape_str(t->ndim, t->shape, a, sizeof a),
                              clrt_shape_str(p->ndim, p->shape, b, sizeof b));
    }
    for (int i = 0; i < f->count; i++) {
        int known = 0;
        for (int k = 0; k < l->n && !known; k++)
            known = strcmp(f->tensors[i].name, l->names[k]) == 0;
        if (!known)
            append_name(unexpected, cap, f->tensors[i].name);
    }
    return CLRT_OK;
}

/* Reads the data of the file tensors the model takes (only those) and
 * points src[i] at parameter i's. */
static clrt_status fetch_sources(clrt__st_file *f, const param_list *l, const void **src)
{
    const clrt__st_tensor **want = clrt__calloc((size_t)l->n + 1, sizeof *want);
    if (!want)
        return clrt__fail(CLRT_ENOMEM, "clrt_module_load: out of host memory");
    for (int i = 0; i < l->n; i++)
        want[i] = clrt__st_find(f, l->names[i]);
    clrt_status st = clrt__st_fetch(f, l->n, want);
    for (int i = 0; st == CLRT_OK && i < l->n; i++)
        src[i] = want[i] ? want[i]->data : NULL;
    free(want);
    return st;
}

clrt_status clrt_module_load_ex(clrt_module *m, const char *path, int strict, char *skipped,
                                size_t cap)
{
    char missing[1024] = "", unexpected[1024] = "";
    clrt__st_file f = {0};
    param_list l;
    const void **src = NULL;
    if (skipped && cap)
        skipped[0] = 0;
    clrt_status st = list_params(m, &l, "clrt_module_load");
    if (st == CLRT_OK)
        st = clrt__st_read(path, &f);
    if (st == CLRT_OK && !(src = clrt__calloc((size_t)l.n + 1, sizeof *src)))
        st = clrt__fail(CLRT_ENOMEM, "clrt_module_load: out of host memory");
    if (st == CLRT_OK)
        st = match(path, &l, &f, src, missing, unexpected, sizeof missing);
    if (st == CLRT_OK && strict && (missing[0] || unexpected[0]))
        st = clrt__fail(CLRT_EFORMAT,
                        "clrt_module_load: %s does not match the model: missing: %s; "
                        "unexpected: %s%s",
                        path, missing[0] ? missing : "none", unexpected[0] ? unexpected : "none",
                        clrt_module_param_count(m) == 0 ? " (lazy layers get their "
                                                          "parameters at the first forward)"
                                                        : "");
    if (st == CLRT_OK)
        st = fetch_sources(&f, &l, src);
    if (st == CLRT_OK)
        st = clrt__tensor_replace_all(l.n, l.params, src);
    free(src);
    if (st == CLRT_OK && skipped && cap && (missing[0] || unexpected[0]))
        snprintf(skipped, cap, "missing: %s; unexpected: %s", missing[0] ? missing : "none",
                 unexpected[0] ? unexpected : "none");
    clrt__st_close(&f);
    free_list(&l);
    return st;
}

clrt_status clrt_module_load(clrt_module *m, const char *path)
{
    return clrt_module_load_ex(m, path, 1, NULL, 0);
}
