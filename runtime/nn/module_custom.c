/* Modules written outside the library (clrt/module.h): a forward composed
 * of ops and modules, whose backward is autograd's.
 *
 * The forward's ops are recorded (grad mode on while training). When the
 * caller records too and an input requires grad, they join the caller's
 * graph through it; otherwise each float input is replaced by a leaf over
 * the same storage that requires grad, so that the explicit backward
 * (clrt_module_backward, what containers and the trainer call) can run the
 * recorded graph from the output and hand back the input's gradient. */
#include "runtime/nn/module_internal.h"
#include "runtime/core/alloc_internal.h"

#include <clrt/module.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    clrt_module base;
    clrt__module_vt vt; /* its own: the kind's name is the def's */
    const clrt_module_def *def;
    void *user;
    int n_leaves;
    clrt_tensor **leaves; /* the last call's inputs as the graph saw them */
} custom;

static void release_leaves(custom *c)
{
    for (int i = 0; i < c->n_leaves; i++)
        clrt_tensor_release(c->leaves[i]);
    free(c->leaves);
    c->leaves = NULL;
    c->n_leaves = 0;
}

/* The inputs as the forward sees them: the caller's where they join its
 * graph, else leaves over them that require grad (float32 only). */
static clrt_status make_leaves(custom *c, int n, clrt_tensor *const *in, int joins)
{
    release_leaves(c);
    c->leaves = clrt__calloc((size_t)n, sizeof *c->leaves);
    if (!c->leaves)
        return clrt__fail(CLRT_ENOMEM, "%s: out of host memory", c->def->kind);
    c->n_leaves = n;
    for (int i = 0; i < n; i++) {
        if ((joins && in[i]->requires_grad) || in[i]->dtype != CLRT_F32) {
            clrt_tensor_retain(in[i]);
            c->leaves[i] = in[i];
            continue;
        }
        if (!(c->leaves[i] = clrt__view(c->def->kind, in[i], in[i]->ndim, in[i]->shape)))
            return clrt_last_status();
        c->leaves[i]->requires_grad = 1;
    }
    return CLRT_OK;
}

static clrt_tensor *custom_forward_n(clrt_module *m, int n, clrt_tensor *const *in)
{
    custom *c = (custom *)m;
    int outer = clrt_is_grad_enabled(), record = outer || m->training;
    if (record && make_leaves(c, n, in, outer) != CLRT_OK)
        return NULL;
    int was = clrt_set_grad_enabled(record);
    clrt_tensor *y = c->def->forward(m, n, record ? c->leaves : in, c->user);
    clrt_set_grad_enabled(was);
    if (!y && clrt_last_status() == CLRT_OK)
        clrt__fail(CLRT_EINVAL, "%s: its forward returned NULL without an error", c->def->kind);
    return y;
}

static clrt_tensor *custom_forward(clrt_module *m, clrt_tensor *x)
{
    return custom_forward_n(m, 1, &x);
}

/* The input's gradient after the graph ran: the leaf's, or zeros where the
 * output did not depend on the input. */
static clrt_status input_grad(custom *c, clrt_tensor *like, clrt_tensor **grad_in)
{
    clrt_tensor *leaf = c->n_leaves > 0 ? c->leaves[0] : NULL;
    if (leaf && leaf->grad_fn)
        return clrt__fail(CLRT_EINVAL,
                          "clrt_module_backward: %s's input required grad when it ran, so its "
                          "gradient went to the graph that made it (use clrt_backward there)",
                          c->def->kind);
    if (leaf && leaf->grad) {
        clrt_tensor_retain(leaf->grad);
        *grad_in = leaf->grad;
        return CLRT_OK;
    }
    *grad_in = clrt_zeros(like->storage->dev, CLRT_F32, like->ndim, like->shape);
    return *grad_in ? CLRT_OK : clrt_last_status();
}

/* The explicit backward: the recorded graph run from the output. */
static clrt_status custom_backward(clrt_module *m, clrt_tensor *grad_out, clrt_tensor **grad_in)
{
    custom *c = (custom *)m;
    clrt_status st = CLRT_OK;
    if (m->out->requires_grad) {
        int was = clrt_set_grad_enabled(1);
        st = clrt_backward_with(m->out, grad_out);
        clrt_set_grad_enabled(was);
    }
    return st == CLRT_OK && grad_in ? input_grad(c, m->saved, grad_in) : st;
}

static void custom_describe(const clrt_module *m, char *buf, size_t cap)
{
    const custom *c = (const custom *)m;
    if (c->def->describe)
        c->def->describe(m, c->user, buf, cap);
    else
        snprintf(buf, cap, "()");
}

static void custom_free_fields(clrt_module *m)
{
    custom *c = (custom *)m;
    release_leaves(c);
    if (c->def->free_user)
        c->def->free_user(c->user);
}

static void custom_clone_fields(clrt_module *copy)
{
    custom *c = (custom *)copy;
    copy->vt = &c->vt;
    c->leaves = NULL;
    c->n_leaves = 0;
    if (c->def->clone_user)
        c->user = c->def->clone_user(c->user);
}

clrt_module *clrt_module_new(const clrt_module_def *def, void *user)
{
    if (!def || !def->forward || !def->kind || !def->kind[0]) {
        clrt__fail(CLRT_EINVAL, "clrt_module_new: the def must give a kind and a forward");
        return NULL;
    }
    return clrt__module_composed(def, user, NULL);
}

clrt_module *clrt__module_composed(const clrt_module_def *def, void *user,
                                   clrt_status (*init)(clrt_module *m))
{
    static const clrt__module_vt base = {.forward = custom_forward,
                                         .backward = custom_backward,
                                         .describe = custom_describe,
                                         .free_fields = custom_free_fields,
                                         .clone_fields = custom_clone_fields,
                                         .forward_n = custom_forward_n};
    clrt__module_vt vt = base;
    vt.kind = def->kind;
    vt.init = init;
    custom *c = (custom *)clrt__module_new(&base, sizeof(custom));
    if (!c)
        return NULL;
    c->vt = vt;
    c->base.vt = &c->vt;
    c->def = def;
    c->user = user;
    return &c->base;
}

void *clrt_module_user(const clrt_module *m)
{
    return m && m->vt->forward_n == custom_forward_n ? ((const custom *)m)->user : NULL;
}

clrt_module *clrt__module_with_children(clrt_module *m, int n, const char *const *names,
                                        clrt_module *(*make)(const void *ctx, int i),
                                        const void *ctx)
{
    for (int i = 0; i < n; i++) {
        clrt_module *c = make(ctx, i);
        if (!c || clrt_module_add_child(m, names[i], c) != CLRT_OK) {
            clrt_module_free(m);
            return NULL;
        }
    }
    return m;
}
