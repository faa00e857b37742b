/* Module checkpoints: the state (parameters, buffers, counters) to and from
 * safetensors files under their state_dict names (the format itself is in
 * runtime/tensor/safetensors_*). */
#include "runtime/core/alloc_internal.h"
#include "runtime/nn/module_internal.h"
#include "runtime/tensor/safetensors_internal.h"

#include <stdlib.h>
#include <string.h>

/* The module's state in state_dict order: parameters and buffers
 * (tensors[i], float32 on the device) and counters (counters[i], host
 * int64, saved as 0-dim I64 tensors); arrays the caller frees, names
 * malloc'ed. */
typedef struct {
    int n, cap;
    char **names;
    clrt_tensor **tensors; /* NULL for a counter */
    int64_t **counters;    /* NULL for a tensor */
} state_list;

static clrt_status list_visit(void *ctx, const char *name, clrt__state *s)
{
    state_list *l = ctx;
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 64;
        char **names = clrt__realloc(l->names, (size_t)cap * sizeof *names);
        if (names)
            l->names = names;
        clrt_tensor **t = names ? clrt__realloc(l->tensors, (size_t)cap * sizeof *t) : NULL;
        if (t)
            l->tensors = t;
        int64_t **c = t ? clrt__realloc(l->counters, (size_t)cap * sizeof *c) : NULL;
        if (!c)
            return clrt__fail(CLRT_ENOMEM, "module state: out of host memory");
        l->counters = c;
        l->cap = cap;
    }
    if (!(l->names[l->n] = clrt__strdup(name)))
        return clrt__fail(CLRT_ENOMEM, "module state: out of host memory");
    l->tensors[l->n] = s->p ? s->p->value : NULL;
    l->counters[l->n++] = s->counter;
    return CLRT_OK;
}

static void free_list(state_list *l)
{
    for (int i = 0; i < l->n; i++)
        free(l->names[i]);
    free(l->names);
    free(l->tensors);
    free(l->counters);
}

static clrt_status list_state(clrt_module *m, state_list *l, const char *op)
{
    memset(l, 0, sizeof *l);
    if (!m)
        return clrt__fail(CLRT_EINVAL, "%s: module is NULL", op);
    return clrt__state_walk(m, CLRT__STATE_ALL, list_visit, l);
}

/* --- save --- */

/* Entry i of l as a safetensors item owning one malloc'ed block: the data
 * read to the host, then the name (so clrt__st_items_free's free of the
 * data releases both, and the items outlive the list). Counters are 0-dim
 * int64 tensors, as PyTorch keeps them. */
static clrt_status item_of(const state_list *l, int i, clrt__st_item *item, const char *op)
{
    static const int64_t scalar[1] = {0};
    const clrt_tensor *t = l->tensors[i];
    size_t bytes = t ? clrt_tensor_nbytes(t) : sizeof(int64_t), len = strlen(l->names[i]) + 1;
    char *block = clrt__malloc(bytes + len);
    if (!block)
        return clrt__fail(CLRT_ENOMEM, "%s: out of host memory", op);
    memcpy(block + bytes, l->names[i], len);
    *item = t ? (clrt__st_item){block + bytes, clrt__st_dtype(t->dtype), t->ndim, t->shape, block,
                                bytes}
              : (clrt__st_item){block + bytes, "I64", 0, scalar, block, bytes};
    if (!t)
        memcpy(block, l->counters[i], bytes);
    return t ? clrt_to_host(t, block, bytes) : CLRT_OK;
}

clrt_status clrt__module_state_items(clrt_module *m, clrt__st_item **out, int *count,
                                     const char *op)
{
    state_list l;
    *out = NULL;
    *count = 0;
    clrt_status st = list_state(m, &l, op);
    clrt__st_item *items = st == CLRT_OK ? clrt__calloc((size_t)l.n + 1, sizeof *items) : NULL;
    if (st == CLRT_OK && !items)
        st = clrt__fail(CLRT_ENOMEM, "%s: out of host memory", op);
    for (int i = 0; st == CLRT_OK && i < l.n; i++)
        st = item_of(&l, i, &items[i], op);
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

/* The dtype, rank and shape entry i of l has in a file. */
static void expected(const state_list *l, int i, const char **dtype, int *ndim,
                     const int64_t **shape)
{
    const clrt_tensor *t = l->tensors[i];
    *dtype = t ? clrt__st_dtype(t->dtype) : "I64";
    *ndim = t ? t->ndim : 0;
    *shape = t ? t->shape : NULL;
}

/* Checks each file tensor the model has (src[i]: its data, or NULL when
 * the file lacks entry i) and lists what either side lacks. Linear: a
 * lookup per model entry, which marks the file entries it finds. */
static clrt_status match(const char *path, const state_list *l, const clrt__st_file *f,
                         const void **src, char *missing, char *unexpected, size_t cap)
{
    char a[128], b[128];
    char *taken = clrt__calloc((size_t)f->count + 1, 1);
    if (!taken)
        return clrt__fail(CLRT_ENOMEM, "clrt_module_load: out of host memory");
    for (int i = 0; i < l->n; i++) {
        const char *dtype;
        int ndim;
        const int64_t *shape;
        expected(l, i, &dtype, &ndim, &shape);
        const clrt__st_tensor *t = clrt__st_find(f, l->names[i]);
        src[i] = t ? t->data : NULL;
        if (!t) {
            append_name(missing, cap, l->names[i]);
            continue;
        }
        taken[t - f->tensors] = 1;
        clrt_status st = CLRT_OK;
        if (strcmp(t->dtype, dtype) != 0)
            st = clrt__fail(CLRT_EDTYPE, "clrt_module_load: %s: '%s' is %s, the model's is %s",
                            path, t->name, t->dtype, dtype);
        else if (t->ndim != ndim || (ndim && memcmp(t->shape, shape, (size_t)ndim * sizeof *shape)))
            st = clrt__fail(CLRT_ESHAPE,
                            "clrt_module_load: %s: '%s' has shape %s, the model's is %s", path,
                            t->name, clrt_shape_str(t->ndim, t->shape, a, sizeof a),
                            clrt_shape_str(ndim, shape, b, sizeof b));
        if (st != CLRT_OK) {
            free(taken);
            return st;
        }
    }
    for (int i = 0; i < f->count; i++)
        if (!taken[i])
            append_name(unexpected, cap, f->tensors[i].name);
    free(taken);
    return CLRT_OK;
}

/* Reads the data of the file tensors the model takes (only those) and
 * points src[i] at entry i's. */
static clrt_status fetch_sources(clrt__st_file *f, const state_list *l, const void **src)
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

/* Uploads every tensor entry the file has (all or nothing), then sets the
 * counters: nothing changes unless every upload succeeded. */
static clrt_status apply(const state_list *l, const void **src)
{
    clrt_tensor **dst = clrt__calloc((size_t)l->n + 1, sizeof *dst);
    const void **data = clrt__calloc((size_t)l->n + 1, sizeof *data);
    int n = 0;
    clrt_status st = dst && data ? CLRT_OK
                                 : clrt__fail(CLRT_ENOMEM, "clrt_module_load: out of "
                                                           "host memory");
    for (int i = 0; st == CLRT_OK && i < l->n; i++)
        if (l->tensors[i] && src[i])
            dst[n] = l->tensors[i], data[n++] = src[i];
    if (st == CLRT_OK)
        st = clrt__tensor_replace_all(n, dst, data);
    for (int i = 0; st == CLRT_OK && i < l->n; i++)
        if (l->counters[i] && src[i])
            memcpy(l->counters[i], src[i], sizeof(int64_t)); /* little-endian, as the file */
    free(dst);
    free(data);
    return st;
}

clrt_status clrt_module_load_ex(clrt_module *m, const char *path, int strict, char *skipped,
                                size_t cap)
{
    char missing[1024] = "", unexpected[1024] = "";
    clrt__st_file f = {0};
    state_list l;
    const void **src = NULL;
    if (skipped && cap)
        skipped[0] = 0;
    clrt_status st = list_state(m, &l, "clrt_module_load");
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
        st = apply(&l, src);
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
