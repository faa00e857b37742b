/* Autograd nodes: creation from a call's inputs, the link to its output,
 * saved tensors, and freeing (node_internal.h). */
#include "runtime/autograd/node_internal.h"
#include "runtime/core/alloc_internal.h"

#include <stdlib.h>
#include <string.h>

static void node_destroy(clrt__graph_ref *r)
{
    clrt__node *n = (clrt__node *)r;
    n->kind->release_saved(n);
    n->kind->destroy(n);
    for (int i = 0; i < n->n_in; i++) {
        clrt__graph_ref_release(n->edges[i].node ? &n->edges[i].node->ref : NULL);
        clrt_tensor_release(n->edges[i].leaf);
    }
    clrt_tensor_release(n->grad);
    free(n->edges);
    free(n);
}

clrt__node *clrt__node_new(const clrt__node_kind *kind, int n, clrt_tensor *const *in, void *data)
{
    clrt__node *node = clrt__calloc(1, sizeof *node);
    clrt__edge *edges = clrt__calloc(n > 0 ? (size_t)n : 1, sizeof *edges);
    if (!node || !edges) {
        free(node);
        free(edges);
        clrt__fail(CLRT_ENOMEM, "autograd: out of host memory for a graph node");
        return NULL;
    }
    atomic_init(&node->ref.refcount, 1);
    node->ref.destroy = node_destroy;
    node->kind = kind;
    node->n_in = n;
    node->edges = edges;
    node->data = data;
    for (int i = 0; i < n; i++) {
        clrt_tensor *t = in[i];
        if (!t)
            continue;
        edges[i].ndim = t->ndim;
        edges[i].dev = clrt__dev(t);
        memcpy(edges[i].shape, t->shape, sizeof t->shape);
        if (t->grad_fn) {
            edges[i].node = (clrt__node *)t->grad_fn;
            edges[i].nr = t->output_nr;
            clrt__graph_ref_retain(t->grad_fn);
        } else if (t->requires_grad) {
            edges[i].leaf = t;
            clrt_tensor_retain(t);
        }
    }
    return node;
}

void clrt__node_set_output(clrt__node *node, clrt_tensor *out)
{
    clrt__graph_ref_retain(&node->ref);
    out->grad_fn = &node->ref;
    out->output_nr = 0;
    out->requires_grad = 1;
}

int clrt__edge_needs(const clrt__edge *e) { return e->node || e->leaf; }

clrt_status clrt__save(clrt__saved *s, clrt_tensor *t)
{
    s->t = t ? clrt__view("autograd", t, t->ndim, t->shape) : NULL;
    s->version = t ? atomic_load(&t->storage->version) : 0;
    return !t || s->t ? CLRT_OK : clrt_last_status();
}

clrt_tensor *clrt__saved_get(const clrt__saved *s, const char *op, const char *what)
{
    if (s->t && atomic_load(&s->t->storage->version) != s->version) {
        clrt__fail(CLRT_EINVAL,
                   "%s's backward: its %s was written in place (an _out or in-place op, a fill, "
                   "an upload) after the forward saved it; its gradient would use the new values",
                   op, what);
        return NULL;
    }
    return s->t;
}

void clrt__saved_release(clrt__saved *s)
{
    clrt_tensor_release(s->t);
    s->t = NULL;
}
