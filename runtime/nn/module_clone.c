/* clrt_module_clone: a deep copy of a module on another device, the
 * replicas of data-parallel training. A kind's struct is copied byte for
 * byte (its hyperparameters), then what the copy must own is made anew:
 * parameters, gradients, children; caches and forward state start empty. */
#include "runtime/nn/module_internal.h"
#include "runtime/core/alloc_internal.h"

#include <stdlib.h>
#include <string.h>

/* The copy's parameters and buffers: values copied, gradients zeroed.
 * Entries not made are NULL, so clrt_module_free can undo a partial copy. */
/* The copy's arrays of parameters and buffers: their own, names copied,
 * tensors NULL until clone_state fills them. */
static clrt_status clone_arrays(clrt_module *copy, const clrt_module *m)
{
    copy->params = copy->buffers = NULL;
    copy->nparams = copy->nbuffers = copy->params_cap = copy->buffers_cap = 0;
    for (int b = 0; b < 2; b++)
        for (int i = 0; i < (b ? m->nbuffers : m->nparams); i++) {
            const clrt__param *from = b ? &m->buffers[i] : &m->params[i];
            clrt__param *to = clrt__module_param_slot(copy, b);
            if (!to)
                return clrt_last_status();
            to->name = from->name;
            if (from->own_name && !(to->own_name = clrt__strdup(from->own_name)))
                return clrt__fail(CLRT_ENOMEM, "clrt_module_clone: out of host memory");
            if (to->own_name)
                to->name = to->own_name;
            *(b ? &copy->nbuffers : &copy->nparams) += 1;
        }
    return CLRT_OK;
}

static clrt_status clone_state(clrt_module *copy, const clrt_module *m, clrt_device *d)
{
    clrt_status st = clone_arrays(copy, m);
    if (st != CLRT_OK)
        return st;
    for (int i = 0; i < m->nparams; i++) {
        clrt_tensor *v = m->params[i].value;
        copy->params[i].value = clrt__tensor_copy_on(v, d);
        copy->params[i].grad =
            copy->params[i].value ? clrt_zeros(d, CLRT_F32, v->ndim, v->shape) : NULL;
        if (!copy->params[i].grad)
            return clrt_last_status();
        clrt__param_link(&copy->params[i]);
    }
    for (int i = 0; i < m->nbuffers; i++)
        if (!(copy->buffers[i].value = clrt__tensor_copy_on(m->buffers[i].value, d)))
            return clrt_last_status();
    return CLRT_OK;
}

static clrt_status clone_children(clrt_module *copy, const clrt_module *m, clrt_device *d)
{
    int n = m->nchildren;
    if (n == 0)
        return CLRT_OK;
    copy->children = clrt__calloc((size_t)n, sizeof *copy->children);
    if (m->child_names && copy->children)
        copy->child_names = clrt__calloc((size_t)n, sizeof *copy->child_names);
    if (!copy->children || (m->child_names && !copy->child_names))
        return clrt__fail(CLRT_ENOMEM, "clrt_module_clone: out of host memory");
    for (int i = 0; i < n; i++) {
        if (!(copy->children[i] = clrt_module_clone(m->children[i], d)))
            return clrt_last_status();
        copy->children[i]->owned = 1;
        copy->nchildren++; /* freed with the copy from here on */
        if (m->child_names && m->child_names[i] &&
            !(copy->child_names[i] = clrt__strdup(m->child_names[i])))
            return clrt__fail(CLRT_ENOMEM, "clrt_module_clone: out of host memory");
    }
    return CLRT_OK;
}

clrt_module *clrt_module_clone(clrt_module *m, clrt_device *d)
{
    if (!m || !d) {
        clrt__fail(CLRT_EINVAL, "clrt_module_clone: NULL module or device");
        return NULL;
    }
    clrt_module *copy = clrt__malloc(m->size);
    if (!copy) {
        clrt__fail(CLRT_ENOMEM, "clrt_module_clone: out of host memory for a %s", m->vt->kind);
        return NULL;
    }
    memcpy(copy, m, m->size);
    atomic_init(&copy->refs, 1);
    copy->owner = NULL;
    copy->params = copy->buffers = NULL; /* the original's: clone_arrays makes the copy's */
    copy->nparams = copy->nbuffers = copy->params_cap = copy->buffers_cap = 0;
    copy->device = d;
    copy->owned = 0;       /* a new module; clone_children marks the copy's children */
    copy->children = NULL; /* until clone_children: a failure frees only the copy's own */
    copy->child_names = NULL;
    copy->nchildren = 0;
    copy->out = copy->grad_in = copy->saved = NULL;
    copy->name_cache = NULL;
    copy->name_count = 0;
    if (m->vt->clone_fields)
        m->vt->clone_fields(copy);
    clrt_status st = clone_state(copy, m, d);
    if (st == CLRT_OK)
        st = clone_children(copy, m, d);
    if (st != CLRT_OK) {
        clrt_module_free(copy);
        return NULL;
    }
    return copy;
}
