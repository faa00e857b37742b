/* Residual block: out = relu(body(x) + shortcut(x)), shortcut the identity
 * or a module (torchvision's BasicBlock: body conv1, bn1, relu, conv2,
 * bn2; shortcut "downsample", a strided 1x1 convolution and a BatchNorm).
 *
 * The block's children are the body's, in order and under their names,
 * then the shortcut: so its state names are torchvision's
 * ("conv1.weight", "bn2.running_var", "downsample.1.weight").
 * Forward runs the body like a Sequential (a ReLU fused into the layer
 * before it); a last body layer that offers forward_residual (BatchNorm)
 * adds the shortcut and applies the block's ReLU in its own output pass,
 * when the shortcut has its output's shape. A shortcut that broadcasts to
 * the body's output (an identity with one channel where the body makes
 * four) is added as PyTorch adds it, and its gradient is summed back over
 * the broadcast dims. Backward masks the gradient by the output once,
 * runs both branches on it, and sums their input gradients. */
#include "runtime/nn/module_internal.h"
#include "runtime/core/alloc_internal.h"
#include "runtime/ops/reduce/reduce_internal.h"

#include <clrt/ops_elementwise.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    clrt_module base;
    int n_body;       /* children [0, n_body) are the body */
    int has_shortcut; /* child n_body is the shortcut */
    clrt_tensor *g;   /* the gradient through the block's ReLU */
    clrt_tensor *gs;  /* the shortcut's gradient summed to its shape, when it broadcast */
} residual;

static clrt_module *shortcut_of(clrt_module *m)
{
    residual *r = (residual *)m;
    return r->has_shortcut ? m->children[r->n_body] : NULL;
}

static int same_shape(const clrt_tensor *a, const clrt_tensor *b)
{
    int same = a->ndim == b->ndim;
    for (int i = 0; same && i < a->ndim; i++)
        same = a->shape[i] == b->shape[i];
    return same;
}

/* The shortcut's output s must broadcast to the body's y (PyTorch would
 * also broadcast y to a larger s: refused here, naming the block). */
static clrt_status check_shortcut(const clrt_module *m, const clrt_tensor *y, const clrt_tensor *s)
{
    int ok = s->ndim <= y->ndim;
    for (int i = 0; ok && i < s->ndim; i++) {
        int64_t sd = s->shape[s->ndim - 1 - i], yd = y->shape[y->ndim - 1 - i];
        ok = sd == yd || sd == 1;
    }
    char b[256], ys[128], ss[128];
    return ok ? CLRT_OK
              : clrt__fail(CLRT_ESHAPE,
                           "%s: the shortcut's output %s does not broadcast to the body's "
                           "output %s (the sum must have the body's shape)",
                           clrt__module_brief(m, b, sizeof b),
                           clrt_shape_str(s->ndim, s->shape, ss, sizeof ss),
                           clrt_shape_str(y->ndim, y->shape, ys, sizeof ys));
}

/* The body's last child on cur, with the shortcut s added and the ReLU
 * applied: in the child's own output pass where it offers that
 * (forward_residual keeps the shape, so s must have cur's), else as a sum
 * (broadcasting s) and a ReLU of their own. */
static clrt_tensor *finish_forward(clrt_module *m, clrt_tensor *cur, clrt_tensor *s)
{
    clrt_module *last = m->children[((residual *)m)->n_body - 1];
    if (last->vt->forward_residual && same_shape(cur, s))
        return last->vt->forward_residual(last, cur, s);
    clrt_tensor *y = clrt_module_forward(last, cur);
    clrt_status st = y ? check_shortcut(m, y, s) : clrt_last_status();
    if (st == CLRT_OK)
        st = clrt__tensor_reuse(&m->out, m->device, CLRT_F32, y->ndim, y->shape);
    if (st == CLRT_OK)
        st = clrt_add_out(m->out, y, s);
    if (st == CLRT_OK)
        st = clrt_f_relu_out(m->out, m->out);
    clrt_tensor_release(y);
    return st == CLRT_OK ? clrt__nn_share(m->out) : NULL;
}

static clrt_tensor *residual_forward(clrt_module *m, clrt_tensor *x)
{
    residual *r = (residual *)m;
    clrt_module *sc = shortcut_of(m);
    clrt_tensor *s = sc ? clrt_module_forward(sc, x) : x, *cur = x;
    if (!s)
        return NULL;
    if (!sc)
        clrt_tensor_retain(s);
    clrt_tensor_retain(cur);
    for (int i = 0, ran = 1; i < r->n_body - 1 && cur; i += ran) {
        clrt_tensor *next = clrt__fused_forward(m, i, cur, &ran);
        clrt_tensor_release(cur);
        cur = next;
    }
    clrt_tensor *out = cur ? finish_forward(m, cur, s) : NULL;
    clrt_tensor_release(cur);
    clrt_tensor_release(s);
    return out;
}

/* The body's backward from g: its input gradient into *gb when want. */
static clrt_status body_backward(clrt_module *m, clrt_tensor *g, int want, clrt_tensor **gb)
{
    residual *r = (residual *)m;
    clrt_status st = CLRT_OK;
    clrt_tensor *cur = g;
    clrt_tensor_retain(cur);
    for (int i = r->n_body - 1, ran = 1; i >= 0 && st == CLRT_OK; i -= ran) {
        clrt_tensor *next = clrt__fused_backward(m, i, cur, want || i > 0, &ran, &st);
        clrt_tensor_release(cur);
        cur = next;
    }
    if (want && st == CLRT_OK)
        *gb = cur;
    else
        clrt_tensor_release(cur);
    return st;
}

static clrt_status residual_backward(clrt_module *m, clrt_tensor *grad_out, clrt_tensor **grad_in)
{
    residual *r = (residual *)m;
    clrt_module *sc = shortcut_of(m);
    clrt_tensor *gb = NULL, *gs = NULL;
    clrt_status st =
        clrt__tensor_reuse(&r->g, m->device, CLRT_F32, grad_out->ndim, grad_out->shape);
    if (st == CLRT_OK) /* through the block's ReLU: out > 0 is where its input was */
        st = clrt_f_relu_backward_out(r->g, grad_out, m->out);
    if (st == CLRT_OK)
        st = body_backward(m, r->g, grad_in != NULL, &gb);
    if (st == CLRT_OK && sc && grad_in && !(gs = clrt_module_backward(sc, r->g)))
        st = clrt_last_status();
    else if (st == CLRT_OK && sc && !grad_in)
        st = clrt_module_backward_params(sc, r->g);
    if (st == CLRT_OK && grad_in) {
        st = clrt__tensor_reuse(&m->grad_in, m->device, CLRT_F32, gb->ndim, gb->shape);
        clrt_tensor *through = sc ? gs : r->g;           /* the shortcut's gradient */
        if (st == CLRT_OK && !same_shape(through, gb)) { /* the identity broadcast */
            st = clrt__tensor_reuse(&r->gs, m->device, CLRT_F32, gb->ndim, gb->shape);
            st = st == CLRT_OK ? clrt__sum_to_shape(r->gs, through) : st;
            through = r->gs;
        }
        if (st == CLRT_OK)
            st = clrt_add_out(m->grad_in, gb, through);
        st = clrt__nn_give_grad_in(m, st, grad_in);
    }
    clrt_tensor_release(gb);
    clrt_tensor_release(gs);
    return st;
}

static void residual_free_fields(clrt_module *m)
{
    clrt_tensor_release(((residual *)m)->g);
    clrt_tensor_release(((residual *)m)->gs);
}

static void residual_clone_fields(clrt_module *copy)
{
    ((residual *)copy)->g = NULL;
    ((residual *)copy)->gs = NULL;
}

static const clrt__module_vt residual_vt = {.kind = "BasicBlock",
                                            .forward = residual_forward,
                                            .backward = residual_backward,
                                            .describe = clrt__sequential_describe,
                                            .free_fields = residual_free_fields,
                                            .clone_fields = residual_clone_fields};

/* The children the block takes from body: a container's own (then its
 * shell is freed), or body itself as child "0". */
static int body_children(clrt_module *body, clrt_module ***mods, char ***names)
{
    int n = body->children ? body->nchildren : 1;
    *mods = clrt__calloc((size_t)n + 1, sizeof **mods);
    *names = clrt__calloc((size_t)n + 1, sizeof **names);
    if (!*mods || !*names)
        return -1;
    for (int i = 0; i < n; i++) {
        char index[16];
        (*mods)[i] = body->children ? body->children[i] : body;
        (*names)[i] =
            (char *)(body->children ? clrt__child_name(body, i, index, sizeof index) : "0");
        if (!((*names)[i] = clrt__strdup((*names)[i])))
            return -1;
    }
    return n;
}

/* Frees body's container shell, its children handed on to the block. */
static void free_shell(clrt_module *body)
{
    if (!body->children)
        return;
    for (int i = 0; i < body->nchildren; i++) {
        body->children[i]->owned = 0;
        if (body->child_names) /* copied into the block's own names */
            free(body->child_names[i]);
    }
    body->nchildren = 0;
    clrt_module_free(body);
}

clrt_module *clrt_residual(clrt_module *body, clrt_module *shortcut)
{
    clrt_module **mods = NULL, *m = NULL, *given[2] = {body, shortcut};
    char **names = NULL;
    if (body && clrt__adopt_check("clrt_residual", shortcut ? 2 : 1, given) != CLRT_OK) {
        clrt__adopt_failed(shortcut ? 2 : 1, given);
        return NULL;
    }
    int n = body ? body_children(body, &mods, &names) : 0;
    if (!body || (body->children && body->nchildren < 1))
        clrt__fail(CLRT_EINVAL, "clrt_residual: the body is NULL or empty");
    else if (n < 0)
        clrt__fail(CLRT_ENOMEM, "clrt_residual: out of host memory");
    else {
        if (shortcut)
            mods[n] = shortcut, names[n] = clrt__strdup("downsample");
        if (!shortcut || names[n]) {
            free_shell(body);
            body = NULL;
            m = clrt__container_new(&residual_vt, sizeof(residual), n + (shortcut != NULL), mods,
                                    (const char *const *)names);
            shortcut = NULL; /* owned (or freed) by the container now */
        }
    }
    if (m)
        ((residual *)m)->n_body = n, ((residual *)m)->has_shortcut = names[n] != NULL;
    for (int i = 0; names && i <= n; i++)
        free(names[i]);
    free(names);
    free(mods);
    clrt_module_free(body);
    clrt_module_free(shortcut);
    return m;
}
