/* Module state: the walk over parameters, buffers and counters under
 * state_dict names, parameter lookup, the list for optimizers, moves
 * between devices, zeroing and initialisation. */
#include "runtime/nn/module_internal.h"
#include "runtime/core/alloc_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *clrt__child_name(const clrt_module *m, int i, char *buf, size_t cap)
{
    if (m->child_names && m->child_names[i])
        return m->child_names[i];
    snprintf(buf, cap, "%d", i);
    return buf;
}

static clrt_status visit_own(clrt_module *m, int mask, char *name, size_t len, size_t cap,
                             clrt__state_visit visit, void *ctx)
{
    clrt_status st = CLRT_OK;
    for (int i = 0; st == CLRT_OK && (mask & CLRT__STATE_PARAMS) && i < m->nparams; i++) {
        snprintf(name + len, cap - len, "%s", m->params[i].name);
        st = visit(ctx, name, &(clrt__state){CLRT__STATE_PARAMS, &m->params[i], NULL});
    }
    for (int i = 0; st == CLRT_OK && (mask & CLRT__STATE_BUFFERS) && i < m->nbuffers; i++) {
        snprintf(name + len, cap - len, "%s", m->buffers[i].name);
        st = visit(ctx, name, &(clrt__state){CLRT__STATE_BUFFERS, &m->buffers[i], NULL});
    }
    if (st == CLRT_OK && (mask & CLRT__STATE_COUNTERS) && m->counter_name) {
        snprintf(name + len, cap - len, "%s", m->counter_name);
        st = visit(ctx, name, &(clrt__state){CLRT__STATE_COUNTERS, NULL, &m->counter});
    }
    return st;
}

static clrt_status walk(clrt_module *m, int mask, char *name, size_t len, size_t cap,
                        clrt__state_visit visit, void *ctx)
{
    clrt_status st = visit_own(m, mask, name, len, cap, visit, ctx);
    for (int c = 0; st == CLRT_OK && c < m->nchildren; c++) {
        char index[16];
        int w = snprintf(name + len, cap - len, "%s.", clrt__child_name(m, c, index, sizeof index));
        if (w < 0 || (size_t)w >= cap - len)
            return clrt__fail(CLRT_EINVAL, "module nesting too deep for state names");
        st = walk(m->children[c], mask, name, len + (size_t)w, cap, visit, ctx);
    }
    return st;
}

clrt_status clrt__state_walk(clrt_module *m, int mask, clrt__state_visit visit, void *ctx)
{
    char name[256] = "";
    return walk(m, mask, name, 0, sizeof name, visit, ctx);
}

/* Visits every parameter in state_dict order with its full name. */
typedef clrt_status (*param_visit)(void *ctx, const char *name, clrt__param *p);

typedef struct {
    param_visit visit;
    void *ctx;
} param_adapter;

static clrt_status param_only(void *ctx, const char *name, clrt__state *s)
{
    param_adapter *a = ctx;
    return a->visit(a->ctx, name, s->p);
}

static clrt_status for_each_param(clrt_module *m, param_visit visit, void *ctx)
{
    param_adapter a = {visit, ctx};
    return clrt__state_walk(m, CLRT__STATE_PARAMS, param_only, &a);
}

/* --- lookup by name --- */

typedef struct {
    const char *want;
    clrt__param *found;
} find_ctx;

static clrt_status find_visit(void *ctx, const char *name, clrt__param *p)
{
    find_ctx *f = ctx;
    if (!f->found && strcmp(name, f->want) == 0)
        f->found = p;
    return CLRT_OK;
}

static clrt__param *find_param(clrt_module *m, const char *name, const char *op)
{
    find_ctx f = {name, NULL};
    char desc[160];
    if (!m || !name) {
        clrt__fail(CLRT_EINVAL, "%s: NULL argument", op);
        return NULL;
    }
    if (for_each_param(m, find_visit, &f) == CLRT_OK && !f.found)
        clrt__fail(CLRT_EINVAL, "%s: %s has no parameter named '%s'%s", op,
                   clrt__module_brief(m, desc, sizeof desc), name,
                   clrt_module_param_count(m) == 0
                       ? " (lazy layers get theirs at the first forward)"
                       : "");
    return f.found;
}

clrt_tensor *clrt_module_param(clrt_module *m, const char *name)
{
    clrt__param *p = find_param(m, name, "clrt_module_param");
    return p ? p->value : NULL;
}

clrt_tensor *clrt_module_grad(clrt_module *m, const char *name)
{
    clrt__param *p = find_param(m, name, "clrt_module_grad");
    return p ? p->grad : NULL;
}

/* --- the list for optimizers --- */

typedef struct {
    clrt_module *root;
    const char **names;
    clrt_tensor **params, **grads;
    int capacity, count;
} list_ctx;

static clrt_status list_visit(void *ctx, const char *name, clrt__param *p)
{
    list_ctx *l = ctx;
    if (l->count < l->capacity) {
        if (l->params)
            l->params[l->count] = p->value;
        if (l->grads)
            l->grads[l->count] = p->grad;
        if (l->names) {
            char *copy = clrt__strdup(name);
            if (!copy)
                return clrt__fail(CLRT_ENOMEM, "clrt_module_parameters: out of host memory");
            l->root->name_cache[l->count] = copy;
            l->names[l->count] = copy;
        }
    }
    l->count++;
    return CLRT_OK;
}

static void drop_names(clrt_module *m)
{
    for (int i = 0; i < m->name_count; i++)
        free(m->name_cache[i]);
    free(m->name_cache);
    m->name_cache = NULL;
    m->name_count = 0;
}

int clrt_module_parameters(clrt_module *m, const char **names, clrt_tensor **params,
                           clrt_tensor **grads, int capacity)
{
    if (!m || capacity < 0)
        return clrt__fail(CLRT_EINVAL, "clrt_module_parameters: NULL module or negative capacity");
    list_ctx l = {m, names, params, grads, capacity, 0};
    if (names) {
        /* The names live in the module, replaced by the next call. */
        drop_names(m);
        m->name_cache = clrt__calloc(capacity > 0 ? (size_t)capacity : 1, sizeof *m->name_cache);
        if (!m->name_cache)
            return clrt__fail(CLRT_ENOMEM, "clrt_module_parameters: out of host memory");
        m->name_count = capacity;
    }
    clrt_status st = for_each_param(m, list_visit, &l);
    return st != CLRT_OK ? st : l.count;
}

static clrt_status buffer_visit(void *ctx, const char *name, clrt__state *s)
{
    return list_visit(ctx, name, s->p);
}

int clrt_module_buffers(clrt_module *m, const char **names, clrt_tensor **buffers, int capacity)
{
    if (!m || capacity < 0)
        return clrt__fail(CLRT_EINVAL, "clrt_module_buffers: NULL module or negative capacity");
    list_ctx l = {m, names, buffers, NULL, capacity, 0};
    if (names) {
        drop_names(m);
        m->name_cache = clrt__calloc(capacity > 0 ? (size_t)capacity : 1, sizeof *m->name_cache);
        if (!m->name_cache)
            return clrt__fail(CLRT_ENOMEM, "clrt_module_buffers: out of host memory");
        m->name_count = capacity;
    }
    clrt_status st = clrt__state_walk(m, CLRT__STATE_BUFFERS, buffer_visit, &l);
    return st != CLRT_OK ? st : l.count;
}

static clrt_status count_visit(void *ctx, const char *name, clrt__param *p)
{
    (void)name;
    *(int64_t *)ctx += p->value->numel;
    return CLRT_OK;
}

int64_t clrt_module_param_count(clrt_module *m)
{
    int64_t n = 0;
    if (m)
        for_each_param(m, count_visit, &n);
    return n;
}

static clrt_status zero_visit(void *ctx, const char *name, clrt__param *p)
{
    (void)ctx, (void)name;
    return clrt__fill(p->grad, 0.0);
}

clrt_status clrt_module_zero_grad(clrt_module *m)
{
    if (!m)
        return clrt__fail(CLRT_EINVAL, "clrt_module_zero_grad: module is NULL");
    return for_each_param(m, zero_visit, NULL);
}

/* --- moving between devices --- */

/* Collects copies of every parameter, gradient and buffer on the target
 * device first, then swaps storages, so a failure part-way leaves the module
 * untouched on its old device. */
typedef struct {
    clrt_device *to;
    clrt_tensor **orig, **copy;
    int count, capacity;
} move_ctx;

static clrt_status move_one(move_ctx *mv, clrt_tensor *t)
{
    if (mv->count == mv->capacity) {
        int cap = mv->capacity ? 2 * mv->capacity : 16;
        clrt_tensor **o = clrt__realloc(mv->orig, (size_t)cap * sizeof *o);
        if (o)
            mv->orig = o;
        clrt_tensor **c = o ? clrt__realloc(mv->copy, (size_t)cap * sizeof *c) : NULL;
        if (!c)
            return clrt__fail(CLRT_ENOMEM, "clrt_module_to: out of host memory");
        mv->copy = c;
        mv->capacity = cap;
    }
    clrt_tensor *c = clrt__tensor_to(t, mv->to); /* state moves: no history */
    if (!c)
        return clrt_last_status();
    mv->orig[mv->count] = t;
    mv->copy[mv->count++] = c;
    return CLRT_OK;
}

static clrt_status move_visit(void *ctx, const char *name, clrt__state *s)
{
    (void)name;
    clrt_status st = move_one(ctx, s->p->value);
    return st != CLRT_OK || !s->p->grad ? st : move_one(ctx, s->p->grad);
}

/* Forward buffers belong to the old device; they are rebuilt on demand. */
static void set_device(clrt_module *m, clrt_device *d)
{
    if (m->device != d) {
        clrt_tensor_release(m->out);
        clrt_tensor_release(m->grad_in);
        m->out = m->grad_in = NULL;
        clrt__module_forget(m);
    }
    m->device = d;
    for (int i = 0; i < m->nchildren; i++)
        set_device(m->children[i], d);
}

clrt_status clrt_module_to(clrt_module *m, clrt_device *d)
{
    if (!m || !d)
        return clrt__fail(CLRT_EINVAL, "clrt_module_to: NULL argument");
    move_ctx mv = {d, NULL, NULL, 0, 0};
    clrt_status st = clrt__state_walk(m, CLRT__STATE_PARAMS | CLRT__STATE_BUFFERS, move_visit, &mv);
    for (int i = 0; i < mv.count; i++) {
        if (st == CLRT_OK) /* the old buffer goes with the copy, released below */
            clrt__tensor_swap_storage(mv.orig[i], mv.copy[i]);
        clrt_tensor_release(mv.copy[i]);
    }
    free(mv.orig);
    free(mv.copy);
    if (st == CLRT_OK)
        set_device(m, d);
    return st;
}

/* --- initialisation --- */

clrt_status clrt__init_uniform(clrt_tensor *param, double bound, uint64_t seed, uint64_t stream)
{
    size_t n = (size_t)param->numel;
    float *v = clrt__malloc((n ? n : 1) * sizeof *v);
    if (!v)
        return clrt__fail(CLRT_ENOMEM, "initialising a parameter: out of host memory");
    uint64_t base = clrt__seed_mix(seed, stream);
    for (size_t i = 0; i < n; i++) {
        /* counter-based: value i depends only on (seed, stream, i) */
        double u = (double)(clrt__seed_mix(base, i) >> 11) * 0x1.0p-53; /* [0, 1) */
        v[i] = (float)((2.0 * u - 1.0) * bound);
    }
    clrt_status st = clrt_copy_from_host(param, v, n * sizeof *v);
    free(v);
    return st;
}

clrt_status clrt__init_normal(clrt_tensor *param, double std, uint64_t seed, uint64_t stream)
{
    size_t n = (size_t)param->numel;
    float *v = clrt__malloc((n ? n : 1) * sizeof *v);
    if (!v)
        return clrt__fail(CLRT_ENOMEM, "initialising a parameter: out of host memory");
    uint64_t base = clrt__seed_mix(seed, stream);
    for (size_t i = 0; i < n; i++) {
        /* two counter-based uniforms per value: u1 in (0, 1], u2 in [0, 1) */
        double u1 = (double)((clrt__seed_mix(base, 2 * i) >> 11) + 1) * 0x1.0p-53;
        double u2 = (double)(clrt__seed_mix(base, 2 * i + 1) >> 11) * 0x1.0p-53;
        v[i] = (float)(std * sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2));
    }
    clrt_status st = clrt_copy_from_host(param, v, n * sizeof *v);
    free(v);
    return st;
}

/* Pre-order over modules: each gets a seed from (seed, its position), so a
 * lazy layer built later draws the same values it would have drawn now. A
 * module's own init runs after its children's, so that it may set theirs
 * (MultiheadAttention zeroes out_proj's bias, as PyTorch's). */
static clrt_status init_walk(clrt_module *m, uint64_t seed, uint64_t *position)
{
    m->init_seed = clrt__seed_mix(seed, (*position)++);
    for (int i = 0; i < m->nchildren; i++) {
        clrt_status st = init_walk(m->children[i], seed, position);
        if (st != CLRT_OK)
            return st;
    }
    return m->vt->init && m->nparams > 0 ? m->vt->init(m) : CLRT_OK;
}

clrt_status clrt_module_init(clrt_module *m, uint64_t seed)
{
    uint64_t position = 0;
    if (!m)
        return clrt__fail(CLRT_EINVAL, "clrt_module_init: module is NULL");
    clrt_status st = init_walk(m, seed, &position);
    return st != CLRT_OK ? st : clrt_module_zero_grad(m);
}

int clrt__module_param_arrays(clrt_module *m, clrt_tensor ***params, clrt_tensor ***grads)
{
    int n = clrt_module_parameters(m, NULL, NULL, NULL, 0);
    clrt_tensor **p = params ? clrt__calloc((size_t)n + 1, sizeof *p) : NULL;
    clrt_tensor **g = grads ? clrt__calloc((size_t)n + 1, sizeof *g) : NULL;
    if (n < 0 || (params && !p) || (grads && !g)) {
        free(p);
        free(g);
        return n < 0 ? n : clrt__fail(CLRT_ENOMEM, "parameter list: out of host memory");
    }
    clrt_module_parameters(m, NULL, p, g, n);
    if (params)
        *params = p;
    if (grads)
        *grads = g;
    return n;
}

/* --- buffers and counters as arrays (data-parallel training) --- */

typedef struct {
    clrt_tensor **tensors;
    int64_t **counters;
    int count;
} collect_ctx;

static clrt_status collect_visit(void *ctx, const char *name, clrt__state *s)
{
    collect_ctx *c = ctx;
    (void)name;
    if (c->tensors && s->p)
        c->tensors[c->count] = s->p->value;
    if (c->counters && s->counter)
        c->counters[c->count] = s->counter;
    c->count++;
    return CLRT_OK;
}

/* Counts the entries of kind `mask`, or fills c's array (when set). */
static int walk_collect(clrt_module *m, int mask, collect_ctx *c)
{
    c->count = 0;
    clrt_status st = clrt__state_walk(m, mask, collect_visit, c);
    return st == CLRT_OK ? c->count : st;
}

int clrt__module_buffer_arrays(clrt_module *m, clrt_tensor ***buffers)
{
    collect_ctx c = {NULL, NULL, 0};
    int n = walk_collect(m, CLRT__STATE_BUFFERS, &c);
    if (n >= 0 && !(c.tensors = clrt__calloc((size_t)n + 1, sizeof *c.tensors)))
        n = clrt__fail(CLRT_ENOMEM, "module buffer list: out of host memory");
    if (n >= 0)
        walk_collect(m, CLRT__STATE_BUFFERS, &c), *buffers = c.tensors;
    return n;
}

int clrt__module_counter_arrays(clrt_module *m, int64_t ***counters)
{
    collect_ctx c = {NULL, NULL, 0};
    int n = walk_collect(m, CLRT__STATE_COUNTERS, &c);
    if (n >= 0 && !(c.counters = clrt__calloc((size_t)n + 1, sizeof *c.counters)))
        n = clrt__fail(CLRT_ENOMEM, "module counter list: out of host memory");
    if (n >= 0)
        walk_collect(m, CLRT__STATE_COUNTERS, &c), *counters = c.counters;
    return n;
}
