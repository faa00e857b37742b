/* Modules: the common part every layer shares — construction, forward and
 * backward entry points (device and shape checks), modes, and freeing.
 * Parameter walks (names, to(), init) live in module_params.c. */
#include "runtime/nn/module_internal.h"
#include "runtime/core/alloc_internal.h"
#include "runtime/tensor/check_internal.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

uint64_t clrt__seed_mix(uint64_t a, uint64_t b)
{
    uint64_t z = a ^ (b + 0x9E3779B97F4A7C15ULL + (a << 6) + (a >> 2));
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* Like torch's global generator: layers built in the same order get the
 * same values in every run, and two layers built in a row differ. */
static uint64_t next_default_seed(void)
{
    static atomic_uint_fast64_t counter;
    return clrt__seed_mix(0x636c7274ULL /* "clrt" */, atomic_fetch_add(&counter, 1));
}

clrt_module *clrt__module_new(const clrt__module_vt *vt, size_t size)
{
    clrt_device *d = clrt_default_device();
    if (!d)
        return NULL;
    clrt_module *m = clrt__calloc(1, size);
    if (!m) {
        clrt__fail(CLRT_ENOMEM, "creating a %s module: out of host memory", vt->kind);
        return NULL;
    }
    m->vt = vt;
    atomic_init(&m->refs, 1);
    m->size = size;
    m->device = d;
    m->training = 1;
    m->init_seed = next_default_seed();
    return m;
}

clrt__param *clrt__module_param_slot(clrt_module *m, int buffers)
{
    clrt__param **arr = buffers ? &m->buffers : &m->params;
    int *n = buffers ? &m->nbuffers : &m->nparams,
        *cap = buffers ? &m->buffers_cap : &m->params_cap;
    if (*n == *cap) {
        int grown = *cap ? 2 * *cap : 2;
        clrt__param *more = realloc(*arr, (size_t)grown * sizeof **arr);
        if (!more) {
            clrt__fail(CLRT_ENOMEM, "%s: out of host memory for a parameter", m->vt->kind);
            return NULL;
        }
        *arr = more, *cap = grown;
    }
    memset(&(*arr)[*n], 0, sizeof **arr);
    return &(*arr)[*n];
}

clrt_status clrt__module_add_param(clrt_module *m, const char *name, int ndim, const int64_t *shape)
{
    clrt__param *p = clrt__module_param_slot(m, 0);
    if (!p)
        return clrt_last_status();
    p->value = clrt__alloc(m->device, CLRT_F32, ndim, shape);
    p->grad = p->value ? clrt_zeros(m->device, CLRT_F32, ndim, shape) : NULL;
    if (!p->grad) {
        clrt_tensor_release(p->value);
        p->value = NULL;
        return clrt_last_status();
    }
    p->name = name;
    clrt__param_link(p);
    m->nparams++;
    return CLRT_OK;
}

void clrt__param_link(clrt__param *p)
{
    p->value->requires_grad = 1;
    clrt_tensor_release(p->value->grad);
    p->value->grad = p->grad;
    clrt_tensor_retain(p->grad);
}

clrt_status clrt__module_add_buffer(clrt_module *m, const char *name, int ndim,
                                    const int64_t *shape, double value)
{
    clrt__param *b = clrt__module_param_slot(m, 1);
    if (!b)
        return clrt_last_status();
    b->value = clrt_full(m->device, CLRT_F32, ndim, shape, value);
    if (!b->value)
        return clrt_last_status();
    b->name = name;
    b->grad = NULL;
    m->nbuffers++;
    return CLRT_OK;
}

clrt_tensor *clrt__nn_share(clrt_tensor *t)
{
    clrt_tensor_retain(t);
    return t;
}

clrt_status clrt__nn_give_grad_in(clrt_module *m, clrt_status st, clrt_tensor **grad_in)
{
    if (st == CLRT_OK)
        *grad_in = clrt__nn_share(m->grad_in);
    return st;
}

void clrt__module_keep(clrt_tensor **slot, clrt_tensor *t)
{
    clrt_tensor_retain(t);
    clrt_tensor_release(*slot);
    *slot = t;
}

void clrt__module_forget(clrt_module *m)
{
    clrt_tensor_release(m->saved);
    m->saved = NULL;
}

const char *clrt_module_kind(const clrt_module *m) { return m ? m->vt->kind : "(null)"; }

char *clrt_module_str(const clrt_module *m, char *buf, size_t cap)
{
    if (!buf || cap == 0)
        return buf;
    if (!m) {
        snprintf(buf, cap, "(null)");
        return buf;
    }
    int n = snprintf(buf, cap, "%s", m->vt->kind);
    if (n >= 0 && (size_t)n < cap)
        m->vt->describe(m, buf + n, cap - (size_t)n);
    return buf;
}

char *clrt__module_brief(const clrt_module *m, char *buf, size_t cap)
{
    if (m && m->children)
        snprintf(buf, cap, "%s(%d modules)", m->vt->kind, m->nchildren);
    else
        clrt_module_str(m, buf, cap);
    return buf;
}

int clrt_module_num_children(const clrt_module *m) { return m ? m->nchildren : 0; }

clrt_module *clrt_module_child(clrt_module *m, int i)
{
    char desc[160];
    if (!m || i < 0 || i >= m->nchildren) {
        clrt__fail(CLRT_EINVAL, "clrt_module_child: %s has no child %d",
                   m ? clrt__module_brief(m, desc, sizeof desc) : "(null)", i);
        return NULL;
    }
    return m->children[i];
}

clrt_device *clrt_module_device(const clrt_module *m) { return m ? m->device : NULL; }

void clrt_module_train(clrt_module *m, int training)
{
    if (!m)
        return;
    m->training = training != 0;
    if (!m->training)
        clrt__module_forget(m);
    for (int i = 0; i < m->nchildren; i++)
        clrt_module_train(m->children[i], training);
}

int clrt_module_is_training(const clrt_module *m) { return m ? m->training : 0; }

clrt_status clrt__module_check_device(const char *op, const clrt_module *m, const clrt_tensor *t,
                                      const char *what)
{
    char desc[160];
    if (!m || !t)
        return clrt__fail(CLRT_EINVAL, "%s: %s is NULL", op, m ? what : "module");
    if (clrt__dev(t) != m->device)
        return clrt__fail(CLRT_EDEVMISMATCH,
                          "%s: %s has its parameters on %s but the %s is on %s; move one with "
                          "clrt_module_to() or clrt_tensor_to()",
                          op, clrt__module_brief(m, desc, sizeof desc), m->device->info.name, what,
                          clrt__dev(t)->info.name);
    return CLRT_OK;
}

clrt_status clrt__module_check_input(const char *op, const clrt_module *m, const clrt_tensor *t,
                                     const char *what)
{
    char desc[160];
    clrt_status st = clrt__module_check_device(op, m, t, what);
    if (st != CLRT_OK)
        return st;
    if (t->dtype != CLRT_F32)
        return clrt__fail(CLRT_EDTYPE, "%s: %s: the %s must be float32, got %s", op,
                          clrt__module_brief(m, desc, sizeof desc), what, clrt_dtype_str(t->dtype));
    return CLRT_OK;
}

/* A built-in kind's forward on x: its ops run unrecorded, and the call is
 * recorded as one node when grad mode is on and a parameter or x requires
 * grad. */
static clrt_tensor *builtin_forward(clrt_module *m, clrt_tensor *x)
{
    int record = clrt__module_records(m, x);
    int was = clrt_set_grad_enabled(0);
    clrt_tensor *y = m->vt->forward(m, x);
    clrt_set_grad_enabled(was);
    if (!y)
        return NULL;
    clrt__module_keep(&m->out, y);
    if (m->training)
        clrt__module_keep(&m->saved, x);
    if (!record)
        return y;
    clrt_tensor *out = clrt__module_record(m, x, y);
    clrt_tensor_release(y);
    return out;
}

/* A custom kind's forward: its ops record themselves (module_custom.c). */
static clrt_tensor *custom_forward(clrt_module *m, int n, clrt_tensor *const *in)
{
    clrt_tensor *y = m->vt->forward_n(m, n, in);
    if (!y)
        return NULL;
    clrt__module_keep(&m->out, y);
    if (m->training)
        clrt__module_keep(&m->saved, in[0]);
    return y;
}

/* The inputs: non-NULL, on m's device; float32 for the built-in kinds,
 * which take one. */
static clrt_status check_inputs(clrt_module *m, int n, clrt_tensor *const *in)
{
    const char *op = "clrt_module_forward";
    char desc[160];
    if (!m)
        return clrt__fail(CLRT_EINVAL, "%s: module is NULL", op);
    if (n < 1 || !in || (n > 1 && !m->vt->forward_n))
        return clrt__fail(CLRT_EINVAL, "%s: %s takes %s input(s), got %d", op,
                          clrt__module_brief(m, desc, sizeof desc),
                          m->vt->forward_n ? "1 or more" : "1", n);
    for (int i = 0; i < n; i++) {
        clrt_status st = m->vt->forward_n && in[i] && in[i]->dtype != CLRT_F32
                             ? clrt__module_check_device(op, m, in[i], "input")
                             : clrt__module_check_input(op, m, in[i], "input");
        if (st != CLRT_OK)
            return st;
    }
    return CLRT_OK;
}

clrt_tensor *clrt_module_forward_n(clrt_module *m, int n, clrt_tensor *const *in)
{
    if (check_inputs(m, n, in) != CLRT_OK || clrt__module_claim_state(m) != CLRT_OK)
        return NULL;
    return m->vt->forward_n ? custom_forward(m, n, in) : builtin_forward(m, in[0]);
}

clrt_tensor *clrt_module_forward(clrt_module *m, clrt_tensor *x)
{
    return clrt_module_forward_n(m, 1, &x);
}

/* The state a backward needs, or an ESTATE error naming the module. */
static clrt_status check_saved(const clrt_module *m, const char *op)
{
    char desc[160];
    if (!m->saved || !m->out)
        return clrt__fail(CLRT_ESTATE,
                          "%s: %s has no forward pass to differentiate (call clrt_module_forward "
                          "in training mode first)",
                          op, clrt__module_brief(m, desc, sizeof desc));
    return CLRT_OK;
}

clrt_tensor *clrt__module_backward(clrt_module *m, clrt_tensor *grad_out, int want_grad_in,
                                   const clrt__epilogue *epi, clrt_status *status)
{
    const char *op = "clrt_module_backward";
    char desc[160], a[64], b[64];
    clrt_tensor *grad_in = NULL;
    clrt_status st = clrt__module_check_input(op, m, grad_out, "gradient");
    if (st == CLRT_OK)
        st = check_saved(m, op);
    if (st == CLRT_OK && !clrt__shape_equal(grad_out, m->out))
        st = clrt__fail(CLRT_ESHAPE, "%s: %s: the gradient has shape %s, the output had %s", op,
                        clrt__module_brief(m, desc, sizeof desc),
                        clrt_shape_str(grad_out->ndim, grad_out->shape, a, sizeof a),
                        clrt_shape_str(m->out->ndim, m->out->shape, b, sizeof b));
    int was = clrt_set_grad_enabled(0);
    if (st == CLRT_OK && epi)
        st = m->vt->backward_epi(m, grad_out, want_grad_in ? &grad_in : NULL, epi);
    else if (st == CLRT_OK)
        st = m->vt->backward(m, grad_out, want_grad_in ? &grad_in : NULL);
    clrt_set_grad_enabled(was);
    *status = st;
    return grad_in;
}

clrt_tensor *clrt_module_backward(clrt_module *m, clrt_tensor *grad_out)
{
    clrt_status st;
    return clrt__module_backward(m, grad_out, 1, NULL, &st);
}

clrt_status clrt_module_backward_params(clrt_module *m, clrt_tensor *grad_out)
{
    clrt_status st;
    clrt__module_backward(m, grad_out, 0, NULL, &st);
    return st;
}

void clrt__module_retain(clrt_module *m) { atomic_fetch_add(&m->refs, 1); }

void clrt_module_free(clrt_module *m) { clrt__module_release(m); }

void clrt__module_release(clrt_module *m)
{
    if (!m || atomic_fetch_sub(&m->refs, 1) != 1)
        return;
    for (int i = 0; i < m->nchildren; i++) {
        clrt_module_free(m->children[i]);
        if (m->child_names)
            free(m->child_names[i]);
    }
    free(m->children);
    free(m->child_names);
    for (int i = 0; i < m->nbuffers; i++) {
        clrt_tensor_release(m->buffers[i].value);
        free(m->buffers[i].own_name);
    }
    for (int i = 0; i < m->nparams; i++) {
        clrt_tensor_release(m->params[i].value);
        clrt_tensor_release(m->params[i].grad);
        free(m->params[i].own_name);
    }
    free(m->params);
    free(m->buffers);
    clrt_tensor_release(m->out);
    clrt_tensor_release(m->grad_in);
    clrt_tensor_release(m->saved);
    for (int i = 0; i < m->name_count; i++)
        free(m->name_cache[i]);
    free(m->name_cache);
    if (m->vt->free_fields)
        m->vt->free_fields(m);
    free(m);
}
