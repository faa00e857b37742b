/* A module's forward as one node of the autograd graph, with the module's
 * own (fused) backward (module_internal.h).
 *
 * A module keeps what its backward needs (its output, its input, the
 * kind's own: BatchNorm's statistics, MaxPool's indices) in its fields,
 * reused from call to call. The node of the latest recorded call owns
 * them while they are there (every module of its subtree points to it),
 * and its backward runs on them in place. When the module runs again
 * while that node still waits for its backward (weight sharing: one layer
 * called twice in a step), they are first moved into the node (a stash),
 * and its backward swaps them back in for its run: each call keeps its own
 * output and saved tensors, and the gradients of both calls add up in the
 * parameters' gradients. */
#include "runtime/nn/module_internal.h"
#include "runtime/autograd/node_internal.h"
#include "runtime/core/alloc_internal.h"

#include <stdlib.h>
#include <string.h>

/* One module's per-call state, moved out of it. */
typedef struct {
    clrt_tensor *out, *saved, *grad_in;
    unsigned char kind[]; /* vt->call_state_size bytes (swap_call_state) */
} call_state;

typedef struct {
    clrt_module *root;  /* counted reference (clrt__module_retain) */
    int n_modules;      /* of root's subtree */
    call_state **stash; /* NULL while the state is in the modules */
} module_data;

/* The modules of m's subtree in a fixed order (pre-order); returns how
 * many, writing at most cap (all of them when list is NULL: counting). */
static int subtree(clrt_module *m, clrt_module **list, int cap, int at)
{
    if (list && at < cap)
        list[at] = m;
    at++;
    for (int i = 0; i < m->nchildren; i++)
        at = subtree(m->children[i], list, cap, at);
    return at;
}

static void swap_ptr(clrt_tensor **a, clrt_tensor **b)
{
    clrt_tensor *t = *a;
    *a = *b;
    *b = t;
}

/* Exchanges module m's per-call state with s. */
static void swap_state(clrt_module *m, call_state *s)
{
    swap_ptr(&m->out, &s->out);
    swap_ptr(&m->saved, &s->saved);
    swap_ptr(&m->grad_in, &s->grad_in);
    if (m->vt->swap_call_state)
        m->vt->swap_call_state(m, s->kind);
}

static void free_state(clrt_module *m, call_state *s)
{
    if (!s)
        return;
    clrt_tensor_release(s->out);
    clrt_tensor_release(s->saved);
    clrt_tensor_release(s->grad_in);
    if (m->vt->release_call_state)
        m->vt->release_call_state(s->kind);
    free(s);
}

/* Swaps the node's stash with the subtree's live state (both ways: the
 * same call again puts them back). */
static clrt_status swap_stash(module_data *d)
{
    clrt_module **mods = clrt__calloc((size_t)d->n_modules, sizeof *mods);
    if (!mods)
        return clrt__fail(CLRT_ENOMEM, "module backward: out of host memory");
    subtree(d->root, mods, d->n_modules, 0);
    for (int i = 0; i < d->n_modules; i++)
        swap_state(mods[i], d->stash[i]);
    free(mods);
    return CLRT_OK;
}

static void set_owner(clrt_module *m, clrt__node *owner)
{
    m->owner = owner;
    for (int i = 0; i < m->nchildren; i++)
        set_owner(m->children[i], owner);
}

/* Moves the live state of node n's subtree into its stash. */
static clrt_status stash_state(clrt__node *n)
{
    module_data *d = n->data;
    call_state **stash = clrt__calloc((size_t)d->n_modules, sizeof *stash);
    clrt_module **mods = clrt__calloc((size_t)d->n_modules, sizeof *mods);
    clrt_status st = stash && mods ? CLRT_OK : clrt__fail(CLRT_ENOMEM, "out of host memory");
    if (st == CLRT_OK)
        subtree(d->root, mods, d->n_modules, 0);
    for (int i = 0; st == CLRT_OK && i < d->n_modules; i++) {
        size_t kind = mods[i]->vt->call_state_size;
        if (!(stash[i] = clrt__calloc(1, sizeof(call_state) + kind)))
            st = clrt__fail(CLRT_ENOMEM, "out of host memory");
        else
            swap_state(mods[i], stash[i]);
    }
    if (st == CLRT_OK) {
        d->stash = stash;
        set_owner(d->root, NULL);
    } else if (stash) { /* put back what moved */
        for (int i = 0; i < d->n_modules; i++)
            if (stash[i])
                swap_state(mods[i], stash[i]), free(stash[i]);
        free(stash);
    }
    free(mods);
    return st;
}

static const char *module_name(const clrt__node *n)
{
    const module_data *d = n->data;
    return d->root ? d->root->vt->kind : "module (backward done)";
}

static clrt_status module_backward(clrt__node *n, clrt_tensor *grad_out, const int *needs,
                                   clrt_tensor **grad_in)
{
    module_data *d = n->data;
    clrt_status st = d->stash ? swap_stash(d) : CLRT_OK;
    if (st != CLRT_OK)
        return st;
    grad_in[0] = clrt__module_backward(d->root, grad_out, needs[0], NULL, &st);
    if (d->stash) {
        clrt_status back = swap_stash(d); /* the stash holds this call's again */
        st = st == CLRT_OK ? back : st;
    }
    return st;
}

/* After its backward (or when the graph goes) the node needs neither the
 * call's state nor the module: its reference goes too. A module called
 * twice keeps the second call's input, which leads back to the first
 * call's node: that node holding the module would be a cycle. */
static void module_release_saved(clrt__node *n)
{
    module_data *d = n->data;
    if (!d->root)
        return;
    if (d->stash) {
        clrt_module **mods = clrt__calloc((size_t)d->n_modules, sizeof *mods);
        if (mods)
            subtree(d->root, mods, d->n_modules, 0);
        for (int i = 0; i < d->n_modules; i++)
            free_state(mods ? mods[i] : d->root, d->stash[i]);
        free(mods);
        free(d->stash);
        d->stash = NULL;
    } else if (d->root->owner == n)
        set_owner(d->root, NULL); /* the state stays, for the explicit backward */
    clrt_module *root = d->root;
    d->root = NULL;
    clrt__module_release(root);
}

static void module_destroy(clrt__node *n) { free(n->data); }

static const clrt__node_kind module_kind = {module_name, module_backward, module_release_saved,
                                            module_destroy};

clrt_status clrt__module_claim_state(clrt_module *m)
{
    clrt_status st = CLRT_OK;
    if (m->owner) /* the whole subtree of the owner's call, which holds m's */
        st = stash_state(m->owner);
    for (int i = 0; st == CLRT_OK && i < m->nchildren; i++)
        st = clrt__module_claim_state(m->children[i]);
    return st;
}

static int has_params(const clrt_module *m)
{
    int any = m->nparams > 0;
    for (int i = 0; !any && i < m->nchildren; i++)
        any = has_params(m->children[i]);
    return any;
}

int clrt__module_records(const clrt_module *m, clrt_tensor *x)
{
    return clrt_is_grad_enabled() && (x->requires_grad || has_params(m));
}

clrt_tensor *clrt__module_record(clrt_module *m, clrt_tensor *x, clrt_tensor *y)
{
    module_data *d = clrt__calloc(1, sizeof *d);
    clrt_tensor *out = clrt__view("clrt_module_forward", y, y->ndim, y->shape);
    clrt__node *n = d && out ? clrt__node_new(&module_kind, 1, &x, d) : NULL;
    if (!n) {
        free(d);
        clrt_tensor_release(out);
        if (clrt_last_status() == CLRT_OK)
            clrt__fail(CLRT_ENOMEM, "clrt_module_forward: out of host memory");
        return NULL;
    }
    clrt__module_retain(m);
    d->root = m;
    d->n_modules = subtree(m, NULL, 0, 0);
    set_owner(m, n);
    clrt__node_set_output(n, out);
    clrt__graph_ref_release(&n->ref);
    return out;
}
