/* clrt_backward: runs a recorded graph in reverse (clrt/autograd.h).
 * The nodes reachable from the root are counted by how many of them
 * consume each one; a node runs once every consumer has handed it its
 * gradient (their sum), then hands its inputs theirs: to the node that
 * made each, or into a leaf's .grad. Each node's saved state is freed as
 * soon as it has run. Grad mode is off throughout: rules record nothing. */
#include "runtime/autograd/autograd_internal.h"
#include "runtime/autograd/node_internal.h"
#include "runtime/core/alloc_internal.h"
#include "runtime/tensor/check_internal.h"

#include <clrt/ops_elementwise.h>
#include <stdlib.h>

/* The reachable nodes, in discovery order, with a stack for the walk. */
typedef struct {
    clrt__node **all;
    size_t n, cap;
} node_list;

static clrt_status list_push(node_list *l, clrt__node *n)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 64;
        clrt__node **all = realloc(l->all, cap * sizeof *all);
        if (!all)
            return clrt__fail(CLRT_ENOMEM, "clrt_backward: out of host memory");
        l->all = all, l->cap = cap;
    }
    l->all[l->n++] = n;
    return CLRT_OK;
}

/* Every node reachable from root, each counted (deps) by its consumers
 * among them; a node whose saved state a backward already freed is an
 * error. */
static clrt_status collect(clrt__node *root, node_list *l)
{
    static atomic_ulong epochs;
    unsigned long epoch = atomic_fetch_add(&epochs, 1) + 1;
    root->visit = epoch;
    root->deps = 0;
    clrt_status st = list_push(l, root);
    for (size_t k = 0; st == CLRT_OK && k < l->n; k++) {
        clrt__node *u = l->all[k];
        if (u->released)
            return clrt__fail(CLRT_EINVAL,
                              "clrt_backward: the graph through %s was already run backward "
                              "and freed; run the forward again to record a new one",
                              u->kind->name(u));
        for (int i = 0; st == CLRT_OK && i < u->n_in; i++) {
            clrt__node *v = u->edges[i].node;
            if (!v)
                continue;
            if (v->visit != epoch) {
                v->visit = epoch;
                v->deps = 0;
                st = list_push(l, v);
            }
            v->deps++;
        }
    }
    return st;
}

/* into (+)= g: *into takes g itself the first time, else their sum. */
static clrt_status add_into(clrt_tensor **into, clrt_tensor *g)
{
    if (!*into) {
        clrt_tensor_retain(g);
        *into = g;
        return CLRT_OK;
    }
    clrt_tensor *sum = clrt_add(*into, g);
    if (!sum)
        return clrt_last_status();
    clrt_tensor_release(*into);
    *into = sum;
    return CLRT_OK;
}

/* A leaf's .grad (+)= g: a copy of its own the first time. */
static clrt_status accumulate_leaf(clrt_tensor *leaf, clrt_tensor *g)
{
    if (leaf->grad)
        return clrt_add_(leaf->grad, g);
    clrt_tensor *copy = clrt__clone(g);
    if (!copy)
        return clrt_last_status();
    leaf->grad = copy;
    return CLRT_OK;
}

/* A rule's gradient for input i must have the input's shape. */
static clrt_status check_grad(const clrt__node *u, int i, const clrt_tensor *g)
{
    const clrt__edge *e = &u->edges[i];
    char want[128], got[128];
    int same = g && g->ndim == e->ndim && g->dtype == CLRT_F32;
    for (int d = 0; same && d < e->ndim; d++)
        same = g->shape[d] == e->shape[d];
    if (same)
        return CLRT_OK;
    return clrt__fail(CLRT_EINVAL,
                      "clrt_backward: %s's backward gave input %d a gradient of shape %s, not "
                      "its shape %s (a defect in its rule)",
                      u->kind->name(u), i,
                      g ? clrt_shape_str(g->ndim, g->shape, got, sizeof got) : "(none)",
                      clrt_shape_str(e->ndim, e->shape, want, sizeof want));
}

/* Hands gradient g of u's input i on: into the node that made it (which
 * becomes ready once all its consumers did so), or into its leaf. */
static clrt_status hand_on(clrt__node *u, int i, clrt_tensor *g, node_list *ready)
{
    clrt__edge *e = &u->edges[i];
    if (e->leaf)
        return accumulate_leaf(e->leaf, g);
    clrt_status st = add_into(&e->node->grad, g);
    if (st == CLRT_OK && --e->node->deps == 0)
        st = list_push(ready, e->node);
    return st;
}

/* Runs node u's backward from its summed gradient, hands its inputs
 * theirs, frees what it saved. */
static clrt_status run_node(clrt__node *u, node_list *ready)
{
    int n = u->n_in;
    int *needs = clrt__calloc(n > 0 ? (size_t)n : 1, sizeof *needs);
    clrt_tensor **grads = clrt__calloc(n > 0 ? (size_t)n : 1, sizeof *grads);
    clrt_status st =
        needs && grads ? CLRT_OK : clrt__fail(CLRT_ENOMEM, "clrt_backward: out of memory");
    for (int i = 0; st == CLRT_OK && i < n; i++)
        needs[i] = clrt__edge_needs(&u->edges[i]);
    if (st == CLRT_OK)
        st = u->kind->backward(u, u->grad, needs, grads);
    for (int i = 0; st == CLRT_OK && i < n; i++)
        if (needs[i] && (st = check_grad(u, i, grads[i])) == CLRT_OK)
            st = hand_on(u, i, grads[i], ready);
    for (int i = 0; grads && i < n; i++)
        clrt_tensor_release(grads[i]);
    free(needs);
    free(grads);
    clrt_tensor_release(u->grad);
    u->grad = NULL;
    u->kind->release_saved(u);
    u->released = 1;
    return st;
}

static clrt_status check_call(clrt_tensor *t, clrt_tensor *grad)
{
    const char *op = "clrt_backward";
    clrt__arg args[] = {{"tensor", t, 0}, {"grad", grad, 0}};
    clrt_status st = clrt__check_args(op, 2, args);
    if (st == CLRT_OK)
        st = clrt__check_dtype(op, "tensor", t, CLRT_F32);
    if (st == CLRT_OK)
        st = clrt__check_out(op, grad, CLRT_F32, t->ndim, t->shape);
    if (st == CLRT_OK && !t->requires_grad)
        st = clrt__fail(CLRT_EINVAL,
                        "%s: the tensor does not require grad (no leaf it was computed from "
                        "requires grad, or grad mode was off when it was computed)",
                        op);
    return st;
}

static clrt_status run_graph(clrt__node *root, clrt_tensor *grad)
{
    node_list all = {0}, ready = {0};
    clrt_status st = collect(root, &all);
    if (st == CLRT_OK) {
        clrt_tensor_retain(grad);
        root->grad = grad;
        st = list_push(&ready, root);
    }
    while (st == CLRT_OK && ready.n > 0)
        st = run_node(ready.all[--ready.n], &ready);
    for (size_t k = 0; k < all.n; k++) { /* what a failure left behind */
        clrt_tensor_release(all.all[k]->grad);
        all.all[k]->grad = NULL;
    }
    free(all.all);
    free(ready.all);
    return st;
}

clrt_status clrt_backward_with(clrt_tensor *t, clrt_tensor *grad)
{
    clrt_status st = check_call(t, grad);
    if (st != CLRT_OK)
        return st;
    int was = clrt_set_grad_enabled(0);
    if (t->grad_fn)
        st = run_graph((clrt__node *)t->grad_fn, grad);
    else
        st = accumulate_leaf(t, grad);
    clrt_set_grad_enabled(was);
    return st;
}

clrt_status clrt_backward(clrt_tensor *loss)
{
    if (loss && loss->numel != 1) {
        char s[128];
        return clrt__fail(CLRT_ESHAPE,
                          "clrt_backward: the loss must have one element, got shape %s (for "
                          "another tensor pass its gradient to clrt_backward_with)",
                          clrt_shape_str(loss->ndim, loss->shape, s, sizeof s));
    }
    if (!loss || loss->dtype != CLRT_F32)
        return check_call(loss, loss);
    clrt_tensor *one = clrt_ones(clrt__dev(loss), CLRT_F32, loss->ndim, loss->shape);
    clrt_status st = one ? clrt_backward_with(loss, one) : clrt_last_status();
    clrt_tensor_release(one);
    return st;
}
