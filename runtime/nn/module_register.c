/* Registering a module's attributes by name (clrt/module.h): parameters,
 * buffers and children, as a PyTorch module's attributes, so that every
 * state walk (module_params.c) finds them. */
#include "runtime/nn/module_internal.h"
#include "runtime/core/alloc_internal.h"

#include <stdlib.h>
#include <string.h>

/* Whether one of m's parameters, buffers or children has this name. */
static int name_taken(const clrt_module *m, const char *name)
{
    for (int i = 0; i < m->nparams; i++)
        if (strcmp(m->params[i].name, name) == 0)
            return 1;
    for (int i = 0; i < m->nbuffers; i++)
        if (strcmp(m->buffers[i].name, name) == 0)
            return 1;
    for (int i = 0; m->child_names && i < m->nchildren; i++)
        if (m->child_names[i] && strcmp(m->child_names[i], name) == 0)
            return 1;
    return 0;
}

static clrt_status check_attr(const char *op, clrt_module *m, const char *name)
{
    if (!m)
        return clrt__fail(CLRT_EINVAL, "%s: module is NULL", op);
    clrt_status st = clrt__check_attr_name(op, "the", name);
    if (st == CLRT_OK && name_taken(m, name))
        st = clrt__fail(CLRT_EINVAL, "%s: %s already has a parameter, buffer or child named '%s'",
                        op, m->vt->kind, name);
    return st;
}

/* A registered tensor: float32, on m's device, a leaf. */
static clrt_status check_tensor(const char *op, clrt_module *m, const char *name, clrt_tensor *t)
{
    clrt_status st = clrt__module_check_input(op, m, t, name);
    if (st == CLRT_OK && t->grad_fn)
        st = clrt__fail(CLRT_EINVAL,
                        "%s: '%s' was computed by a recorded op; a module's state is made of "
                        "leaves (clrt_detach gives one)",
                        op, name);
    return st;
}

/* Adds t as a parameter (buffers: 0) or buffer (1) named name. */
static clrt_status add_tensor(const char *op, clrt_module *m, const char *name, clrt_tensor *t,
                              int buffer)
{
    clrt_status st = check_attr(op, m, name);
    if (st == CLRT_OK)
        st = check_tensor(op, m, name, t);
    clrt__param *p = st == CLRT_OK ? clrt__module_param_slot(m, buffer) : NULL;
    if (!p)
        return st != CLRT_OK ? st : clrt_last_status();
    if (!(p->own_name = clrt__strdup(name)))
        return clrt__fail(CLRT_ENOMEM, "%s: out of host memory", op);
    if (!buffer) { /* shared with another module (tied weights): the same gradient */
        p->grad = t->grad ? t->grad : clrt_zeros(m->device, CLRT_F32, t->ndim, t->shape);
        if (!p->grad) {
            free(p->own_name);
            p->own_name = NULL;
            return clrt_last_status();
        }
        if (t->grad)
            clrt_tensor_retain(t->grad);
    }
    clrt_tensor_retain(t);
    p->name = p->own_name;
    p->value = t;
    if (buffer)
        m->nbuffers++;
    else {
        clrt__param_link(p);
        m->nparams++;
    }
    return CLRT_OK;
}

clrt_status clrt_module_add_parameter(clrt_module *m, const char *name, clrt_tensor *value)
{
    return add_tensor("clrt_module_add_parameter", m, name, value, 0);
}

clrt_status clrt_module_add_buffer(clrt_module *m, const char *name, clrt_tensor *value)
{
    return add_tensor("clrt_module_add_buffer", m, name, value, 1);
}

/* Grows m's children (and their names: NULL for those named by index) by
 * one slot. */
static clrt_status grow_children(clrt_module *m)
{
    size_t n = (size_t)m->nchildren + 1;
    clrt_module **kids = realloc(m->children, n * sizeof *kids);
    if (kids)
        m->children = kids;
    char **names = kids ? realloc(m->child_names, n * sizeof *names) : NULL;
    if (names && !m->child_names) /* children named by index until now */
        memset(names, 0, n * sizeof *names);
    if (names)
        m->child_names = names;
    return kids && names ? CLRT_OK : clrt__fail(CLRT_ENOMEM, "out of host memory");
}

clrt_status clrt_module_add_child(clrt_module *m, const char *name, clrt_module *child)
{
    const char *op = "clrt_module_add_child";
    clrt_module *given[1] = {child};
    clrt_status st = check_attr(op, m, name);
    if (st == CLRT_OK)
        st = clrt__adopt_check(op, 1, given);
    if (st == CLRT_OK && child->device != m->device)
        st = clrt__fail(CLRT_EDEVMISMATCH, "%s: '%s' is on %s, %s on %s", op, name,
                        child->device->info.name, m->vt->kind, m->device->info.name);
    char *copy = st == CLRT_OK ? clrt__strdup(name) : NULL;
    if (st == CLRT_OK && !copy)
        st = clrt__fail(CLRT_ENOMEM, "%s: out of host memory", op);
    if (st == CLRT_OK)
        st = grow_children(m);
    if (st != CLRT_OK) {
        free(copy);
        clrt__adopt_failed(1, given);
        return st;
    }
    m->children[m->nchildren] = child;
    m->child_names[m->nchildren++] = copy;
    clrt__adopt(1, given);
    return CLRT_OK;
}

clrt_module *clrt_module_child_named(clrt_module *m, const char *name)
{
    for (int i = 0; m && name && m->child_names && i < m->nchildren; i++)
        if (m->child_names[i] && strcmp(m->child_names[i], name) == 0)
            return m->children[i];
    clrt__fail(CLRT_EINVAL, "clrt_module_child_named: %s has no child named '%s'",
               m ? m->vt->kind : "(null)", name ? name : "(null)");
    return NULL;
}
