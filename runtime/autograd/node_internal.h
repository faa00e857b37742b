/* The autograd graph's nodes: one per recorded call (an op of the table,
 * or a module's forward), linked to the nodes or leaves that made their
 * inputs. A node is owned by the tensors it made (their grad_fn) and by
 * the nodes that consume them (their edges); it owns what it saved. The
 * kinds (op, module) say how to run its backward and free what it saved.
 * Used by one thread at a time, as its graph is. */
#ifndef CLRT_NODE_INTERNAL_H
#define CLRT_NODE_INTERNAL_H

#include "runtime/tensor/tensor_internal.h"

typedef struct clrt__node clrt__node;

/* Where one input came from: the node that computed it (its output nr),
 * or a leaf that requires grad, or neither (a constant: no gradient). */
typedef struct {
    clrt__node *node; /* counted reference */
    int nr;
    clrt_tensor *leaf; /* counted reference */
    int64_t shape[CLRT_MAX_DIMS]; /* the input's shape and device, saved or not */
    int ndim;
    clrt_device *dev;
} clrt__edge;

typedef struct {
    const char *(*name)(const clrt__node *n); /* for messages: "clrt_mul" */
    /* grad_in[i] (new references) for the inputs with needs[i]; the node's
     * saved state is still there. */
    clrt_status (*backward)(clrt__node *n, clrt_tensor *grad_out, const int *needs,
                            clrt_tensor **grad_in);
    /* Frees what the node saved for backward (after its backward, or when
     * the graph goes); may run twice. */
    void (*release_saved)(clrt__node *n);
    /* Frees the kind's data (after release_saved), when the node goes. */
    void (*destroy)(clrt__node *n);
} clrt__node_kind;

struct clrt__node {
    clrt__graph_ref ref; /* first: tensors hold nodes through it */
    const clrt__node_kind *kind;
    int released; /* its saved state is gone: a second backward fails */
    int n_in;
    clrt__edge *edges;   /* n_in entries */
    void *data;          /* the kind's own */
    clrt__node *next;    /* the engine's work lists */
    int deps;            /* the engine's count of consumers still to run */
    clrt_tensor *grad;   /* the engine's sum of the gradients reaching it */
    unsigned long visit; /* the engine's traversal mark */
};

/* A node of `kind` with n inputs taken from in[] (NULL entries: no
 * input), data its kind's (freed by its release_saved or destroy).
 * Refcount 1 (the caller's). NULL + CLRT_ENOMEM. */
clrt__node *clrt__node_new(const clrt__node_kind *kind, int n, clrt_tensor *const *in,
                           void *data);
/* Makes out a result of node (its output 0): requires grad, grad_fn a
 * new reference to node. out must have no history of its own. */
void clrt__node_set_output(clrt__node *node, clrt_tensor *out);
/* Whether input i's gradient is wanted: it came from a node, or from a
 * leaf that requires grad. */
int clrt__edge_needs(const clrt__edge *e);

/* A tensor saved for backward: an alias of t's storage (no history, so
 * no cycle through the node) and the storage's version when saved. */
typedef struct {
    clrt_tensor *t;
    unsigned version;
} clrt__saved;

/* CLRT_OK, or CLRT_ENOMEM (nothing saved). t may be NULL (saves nothing). */
clrt_status clrt__save(clrt__saved *s, clrt_tensor *t);
/* The saved tensor, or NULL + CLRT_EINVAL naming op when it was written
 * in place since it was saved. */
clrt_tensor *clrt__saved_get(const clrt__saved *s, const char *op, const char *what);
void clrt__saved_release(clrt__saved *s);

#endif
