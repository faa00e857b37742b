/* Dropout (nn.Dropout): in training, out = x * mask / (1 - p) with a fresh
 * mask per training forward; in evaluation, the input itself. The mask is
 * a function of (seed, step, index) (clrt/ops_dropout.h): the seed is the
 * module's init seed, the step counts its training forwards in a field of
 * its own (not state: nn.Dropout has none), and the backward redraws the
 * last forward's mask from them. A clone, a byte copy, keeps both. */
#include "runtime/nn/module_internal.h"

#include <clrt/ops_dropout.h>

typedef struct {
    clrt_module base;
    double p;
    uint64_t seed;     /* the init seed the step count belongs to */
    int64_t step;      /* training forwards so far: the next mask's step */
    int64_t last_step; /* the mask of the last training forward */
    clrt_tensor *y;    /* training output, reused across steps */
} dropout;

static clrt_tensor *dropout_forward(clrt_module *m, clrt_tensor *x)
{
    dropout *d = (dropout *)m;
    if (!m->training)
        return clrt__nn_share(x);
    if (d->seed != m->init_seed) { /* clrt_module_init gave a new seed: count from 0 */
        d->seed = m->init_seed;
        d->step = 0;
    }
    d->last_step = d->step++;
    if (d->p == 0.0)
        return clrt__nn_share(x);
    if (clrt__tensor_reuse(&d->y, m->device, CLRT_F32, x->ndim, x->shape) != CLRT_OK ||
        clrt_f_dropout_out(d->y, x, d->p, d->seed, (uint64_t)d->last_step) != CLRT_OK)
        return NULL;
    return clrt__nn_share(d->y);
}

static clrt_status dropout_backward(clrt_module *m, clrt_tensor *grad_out, clrt_tensor **grad_in)
{
    dropout *d = (dropout *)m;
    if (!grad_in)
        return CLRT_OK; /* no parameters */
    if (d->p == 0.0) {
        *grad_in = clrt__nn_share(grad_out);
        return CLRT_OK;
    }
    clrt_status st =
        clrt__tensor_reuse(&m->grad_in, m->device, CLRT_F32, grad_out->ndim, grad_out->shape);
    if (st == CLRT_OK)
        st = clrt_f_dropout_backward_out(m->grad_in, grad_out, d->p, d->seed,
                                         (uint64_t)d->last_step);
    return clrt__nn_give_grad_in(m, st, grad_in);
}

static void dropout_describe(const clrt_module *m, char *buf, size_t cap)
{
    snprintf(buf, cap, "(p=%g, inplace=False)", ((const dropout *)m)->p);
}

static void dropout_free_fields(clrt_module *m) { clrt_tensor_release(((dropout *)m)->y); }

/* Per call: the output buffer and the step of its mask. */
typedef struct {
    clrt_tensor *y;
    int64_t last_step;
} dropout_call;

static void swap_call(clrt_module *m, void *stash)
{
    dropout *d = (dropout *)m;
    dropout_call *c = stash, was = {d->y, d->last_step};
    d->y = c->y, d->last_step = c->last_step;
    *c = was;
}

static void release_call(void *stash) { clrt_tensor_release(((dropout_call *)stash)->y); }
static void dropout_clone_fields(clrt_module *copy) { ((dropout *)copy)->y = NULL; }

static const clrt__module_vt dropout_vt = {.kind = "Dropout",
                                           .forward = dropout_forward,
                                           .backward = dropout_backward,
                                           .describe = dropout_describe,
                                           .free_fields = dropout_free_fields,
                                           .clone_fields = dropout_clone_fields,
                                           .call_state_size = sizeof(dropout_call),
                                           .swap_call_state = swap_call,
                                           .release_call_state = release_call};

clrt_module *clrt_dropout(double p)
{
    if (!(p >= 0.0 && p < 1.0)) {
        clrt__fail(CLRT_EINVAL,
                   "clrt_dropout(p=%g): p must be in [0, 1) (p = 1 would drop every element)", p);
        return NULL;
    }
    dropout *d = (dropout *)clrt__module_new(&dropout_vt, sizeof(dropout));
    if (d) {
        d->p = p;
        d->seed = d->base.init_seed;
    }
    return d ? &d->base : NULL;
}
