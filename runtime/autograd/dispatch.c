/* The dispatcher: every call of an op of the table goes through here,
 * the one place that knows both the table (runtime/ops/op_table.h) and the
 * tape (node_internal.h). It runs the op's forward and, when grad mode is
 * on and an input requires grad, records a node that saves what the op's
 * backward reads. */
#include "runtime/autograd/autograd_internal.h"
#include "runtime/autograd/node_internal.h"
#include "runtime/core/alloc_internal.h"

#include <stdlib.h>

/* An op node's own data: the def, its attributes, what it saved. */
typedef struct {
    const clrt__op_def *def;
    clrt__op_attrs attrs;
    int n_in;
    clrt__saved *in; /* n_in entries */
    clrt__saved out;
    clrt__saved extra[CLRT__OP_MAX_EXTRA];
} op_data;

static const char *op_name(const clrt__node *n) { return ((const op_data *)n->data)->def->name; }

static void release_data(op_data *d)
{
    for (int i = 0; d->in && i < d->n_in; i++)
        clrt__saved_release(&d->in[i]);
    clrt__saved_release(&d->out);
    for (int i = 0; i < CLRT__OP_MAX_EXTRA; i++)
        clrt__saved_release(&d->extra[i]);
}

static void op_release_saved(clrt__node *n) { release_data(n->data); }

static void op_destroy(clrt__node *n)
{
    op_data *d = n->data;
    free(d->in);
    free(d);
}

/* The saved tensors, checked against writes since the forward, into the
 * arrays a rule reads. */
static clrt_status unpack(clrt__node *n, clrt_tensor **in, clrt_tensor **extra, clrt_tensor **out)
{
    op_data *d = n->data;
    const char *name = d->def->name;
    for (int i = 0; i < d->n_in; i++)
        if (d->in[i].t && !(in[i] = clrt__saved_get(&d->in[i], name, "input")))
            return clrt_last_status();
    if (d->out.t && !(*out = clrt__saved_get(&d->out, name, "output")))
        return clrt_last_status();
    for (int i = 0; i < CLRT__OP_MAX_EXTRA; i++)
        if (d->extra[i].t && !(extra[i] = clrt__saved_get(&d->extra[i], name, "intermediate")))
            return clrt_last_status();
    return CLRT_OK;
}

static clrt_status op_backward(clrt__node *n, clrt_tensor *grad_out, const int *needs,
                               clrt_tensor **grad_in)
{
    op_data *d = n->data;
    int k = d->n_in;
    clrt_tensor **in = clrt__calloc((size_t)k + 1, sizeof *in);
    const int64_t **shapes = clrt__calloc((size_t)k + 1, sizeof *shapes);
    int *ndims = clrt__calloc((size_t)k + 1, sizeof *ndims);
    clrt_device **devs = clrt__calloc((size_t)k + 1, sizeof *devs);
    clrt_tensor *extra[CLRT__OP_MAX_EXTRA] = {NULL}, *out = NULL;
    clrt_status st = in && shapes && ndims && devs
                         ? unpack(n, in, extra, &out)
                         : clrt__fail(CLRT_ENOMEM, "autograd: out of memory");
    for (int i = 0; st == CLRT_OK && i < k; i++)
        shapes[i] = n->edges[i].shape, ndims[i] = n->edges[i].ndim, devs[i] = n->edges[i].dev;
    if (st == CLRT_OK) {
        clrt__grad_ctx c = {k, in, needs, out, extra, &d->attrs, shapes, ndims, devs};
        st = d->def->backward(&c, grad_out, grad_in);
    }
    free(in);
    free(shapes);
    free(ndims);
    free(devs);
    return st;
}

static const clrt__node_kind op_kind = {op_name, op_backward, op_release_saved, op_destroy};

/* Saves what def's backward reads into a new op_data; NULL + error. */
static op_data *save_call(const clrt__op_def *def, int n, clrt_tensor *const *in,
                          const clrt__op_attrs *a, clrt_tensor *out, clrt_tensor *const *extra)
{
    op_data *d = clrt__calloc(1, sizeof *d);
    clrt__saved *saved = clrt__calloc(n > 0 ? (size_t)n : 1, sizeof *saved);
    clrt_status st = d && saved ? CLRT_OK : clrt__fail(CLRT_ENOMEM, "autograd: out of memory");
    if (d)
        d->def = def, d->attrs = *a, d->n_in = n, d->in = saved;
    int all = def->n_in < 0 && (def->save & CLRT__SAVE_IN(0));
    for (int i = 0; st == CLRT_OK && i < n; i++)
        if (all || (i < 8 && (def->save & CLRT__SAVE_IN(i))))
            st = clrt__save(&saved[i], in[i]);
    if (st == CLRT_OK && (def->save & CLRT__SAVE_OUT))
        st = clrt__save(&d->out, out);
    for (int i = 0; st == CLRT_OK && i < CLRT__OP_MAX_EXTRA; i++)
        st = clrt__save(&d->extra[i], extra[i]);
    if (st == CLRT_OK)
        return d;
    if (d)
        release_data(d);
    free(saved);
    free(d);
    return NULL;
}

/* Records the call: a node that makes out. CLRT_OK or error (out then
 * keeps no history). */
static clrt_status record(const clrt__op_def *def, int n, clrt_tensor *const *in,
                          const clrt__op_attrs *a, clrt_tensor *out, clrt_tensor *const *extra)
{
    op_data *d = save_call(def, n, in, a, out, extra);
    clrt__node *node = d ? clrt__node_new(&op_kind, n, in, d) : NULL;
    if (!node) {
        if (d) {
            release_data(d);
            free(d->in);
            free(d);
        }
        return clrt_last_status();
    }
    clrt__node_set_output(node, out);
    clrt__graph_ref_release(&node->ref);
    return CLRT_OK;
}

/* An output that is one of the inputs (an op that found nothing to do)
 * gets a tensor of its own, so that its history is not the input's. */
static clrt_tensor *own_output(clrt_tensor *out, int n, clrt_tensor *const *in)
{
    for (int i = 0; i < n; i++)
        if (out == in[i]) {
            clrt_tensor *alias = clrt__view("autograd", out, out->ndim, out->shape);
            clrt_tensor_release(out);
            return alias;
        }
    return out;
}

clrt_tensor *clrt__dispatch(const clrt__op_def *def, int n, clrt_tensor *const *in,
                            const clrt__op_attrs *a)
{
    static const clrt__op_attrs none = {{0}, 0, {0, 0}, NULL};
    clrt_tensor *extra[CLRT__OP_MAX_EXTRA] = {NULL};
    int keep = def->backward && clrt__grad_wanted(n, in);
    int was = clrt_set_grad_enabled(0); /* a forward composed of ops records nothing itself */
    clrt_tensor *out = def->forward(n, in, a ? a : &none, keep, extra);
    clrt_set_grad_enabled(was);
    if (out && keep && out->dtype == CLRT_F32) {
        out = own_output(out, n, in);
        if (out && record(def, n, in, a ? a : &none, out, extra) != CLRT_OK) {
            clrt_tensor_release(out);
            out = NULL;
        }
    }
    for (int i = 0; i < CLRT__OP_MAX_EXTRA; i++)
        clrt_tensor_release(extra[i]);
    return out;
}
