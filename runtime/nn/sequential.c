/* Sequential: runs its children in order; backward runs them in reverse and
 * stops below the first child with parameters when the caller does not
 * want the input gradient (the input of a network needs none). A ReLU is
 * fused into its neighbours where they allow (fuse.c). */
#include "runtime/nn/module_internal.h"
#include "runtime/core/alloc_internal.h"
#include "runtime/core/lookup_internal.h"
#include "runtime/core/text_internal.h"

#include <stdlib.h>
#include <string.h>

clrt_tensor *clrt__sequential_forward(clrt_module *m, clrt_tensor *x)
{
    clrt_tensor *cur = x;
    clrt_tensor_retain(cur);
    for (int i = 0, ran = 1; i < m->nchildren && cur; i += ran) {
        clrt_tensor *next = clrt__fused_forward(m, i, cur, &ran);
        clrt_tensor_release(cur);
        cur = next;
    }
    return cur;
}

/* Index of the first child that has parameters, or nchildren. */
static int first_with_params(clrt_module *m)
{
    for (int i = 0; i < m->nchildren; i++)
        if (clrt_module_param_count(m->children[i]) > 0)
            return i;
    return m->nchildren;
}

clrt_status clrt__sequential_backward(clrt_module *m, clrt_tensor *grad_out, clrt_tensor **grad_in)
{
    clrt_status st = CLRT_OK;
    int stop = grad_in ? 0 : first_with_params(m);
    clrt_tensor *g = grad_out;
    clrt_tensor_retain(g);
    for (int i = m->nchildren - 1, ran = 1; i >= stop && st == CLRT_OK; i -= ran) {
        int want = grad_in || i > stop;
        clrt_tensor *next = clrt__fused_backward(m, i, g, want, &ran, &st);
        clrt_tensor_release(g);
        g = next;
    }
    if (grad_in && st == CLRT_OK)
        *grad_in = g;
    else
        clrt_tensor_release(g);
    return st;
}

void clrt__sequential_describe(const clrt_module *m, char *buf, size_t cap)
{
    size_t used = (size_t)snprintf(buf, cap, "(");
    for (int i = 0; i < m->nchildren && used < cap; i++) {
        char index[16];
        used += (size_t)snprintf(buf + used, cap - used, "%s%s: ", i ? ", " : "",
                                 clrt__child_name(m, i, index, sizeof index));
        if (used < cap)
            clrt_module_str(m->children[i], buf + used, cap - used);
        used += strlen(buf + used);
    }
    if (used < cap)
        snprintf(buf + used, cap - used, ")");
}

static const clrt__module_vt sequential_vt = {.kind = "Sequential",
                                              .forward = clrt__sequential_forward,
                                              .backward = clrt__sequential_backward,
                                              .describe = clrt__sequential_describe};

/* Children must be adoptable (one owner each) and agree on a device; the
 * container adopts it. */
static clrt_status check_children(const char *op, int n, clrt_module **mods)
{
    clrt_status st = clrt__adopt_check(op, n, mods);
    for (int i = 0; st == CLRT_OK && i < n; i++)
        if (mods[i]->device != mods[0]->device)
            return clrt__fail(CLRT_EDEVMISMATCH,
                              "%s: module 0 is on %s but module %d is on %s; "
                              "move them with clrt_module_to()",
                              op, mods[0]->device->info.name, i, mods[i]->device->info.name);
    return st;
}

/* An attribute's name (a child's, a parameter's, a buffer's): non-empty,
 * without dots (which separate the parts of a state name), and UTF-8,
 * since state names go into safetensors headers (JSON), which PyTorch's
 * reader refuses otherwise. `what` says whose: "child 3's". */
clrt_status clrt__check_attr_name(const char *op, const char *what, const char *name)
{
    char shown[96];
    if (!name || !name[0] || strchr(name, '.'))
        return clrt__fail(CLRT_EINVAL, "%s: %s name '%s' must be non-empty and without dots", op,
                          what, name ? name : "(null)");
    long at = clrt__utf8_bad_at(name, strlen(name));
    if (at >= 0)
        return clrt__fail(CLRT_EINVAL,
                          "%s: %s name '%s' is not UTF-8 (byte 0x%02x at offset %ld): state "
                          "names go into safetensors files, whose JSON header PyTorch's reader "
                          "refuses unless it is UTF-8",
                          op, what, clrt__text_shown(name, shown, sizeof shown),
                          (unsigned char)name[at], at);
    return CLRT_OK;
}

static clrt_status check_name(int i, const char *name)
{
    char what[32];
    snprintf(what, sizeof what, "child %d's", i);
    return clrt__check_attr_name("clrt_sequential_named", what, name);
}

/* Each name valid and unique in its container (a hash index: O(n)). */
static clrt_status check_names(int n, const char *const *names)
{
    clrt__name_index seen = {0};
    clrt_status st = CLRT_OK;
    for (int i = 0; names && st == CLRT_OK && i < n; i++) {
        st = check_name(i, names[i]);
        int had = st == CLRT_OK ? clrt__name_index_put(&seen, names[i], i) : -1;
        if (had == -2)
            st = clrt__fail(CLRT_ENOMEM, "clrt_sequential_named: out of host memory");
        else if (had >= 0)
            st = clrt__fail(CLRT_EINVAL,
                            "clrt_sequential_named: two children named '%s' (%d and %d)", names[i],
                            had, i);
    }
    clrt__name_index_free(&seen);
    return st;
}

static clrt_status adopt_children(clrt_module *m, int n, clrt_module **mods,
                                  const char *const *names)
{
    m->children = clrt__calloc(n ? (size_t)n : 1, sizeof *m->children);
    if (m->children && names)
        m->child_names = clrt__calloc((size_t)n, sizeof *m->child_names);
    for (int i = 0; names && m->child_names && i < n; i++)
        if (!(m->child_names[i] = clrt__strdup(names[i]))) {
            for (int k = 0; k < i; k++)
                free(m->child_names[k]);
            free(m->child_names);
            m->child_names = NULL;
        }
    if (!m->children || (names && !m->child_names)) {
        free(m->children);
        m->children = NULL;
        return clrt__fail(CLRT_ENOMEM, "%s: out of host memory", m->vt->kind);
    }
    if (n > 0)
        memcpy(m->children, mods, (size_t)n * sizeof *m->children);
    clrt__adopt(n, mods);
    m->nchildren = n;
    if (n > 0)
        m->device = mods[0]->device;
    return CLRT_OK;
}

clrt_module *clrt__container_new(const clrt__module_vt *vt, size_t size, int n, clrt_module **mods,
                                 const char *const *names)
{
    const char *op = names ? "clrt_sequential_named" : "clrt_sequential";
    clrt_module *m = NULL;
    if (n < 0 || (n > 0 && !mods))
        clrt__fail(CLRT_EINVAL, "%s: bad module list (n = %d)", op, n);
    else if (check_children(op, n, mods) == CLRT_OK && check_names(n, names) == CLRT_OK)
        m = clrt__module_new(vt, size);
    if (m && adopt_children(m, n, mods, names) != CLRT_OK) {
        free(m);
        m = NULL;
    }
    if (!m)
        clrt__adopt_failed(n, mods);
    return m;
}

clrt_module *clrt_sequential(int n, clrt_module **mods)
{
    return clrt__container_new(&sequential_vt, sizeof(clrt_module), n, mods, NULL);
}

clrt_module *clrt_sequential_named(int n, clrt_module **mods, const char *const *names)
{
    if (!names) {
        clrt__fail(CLRT_EINVAL, "clrt_sequential_named: names is NULL (use clrt_sequential)");
        clrt__adopt_failed(n, mods);
        return NULL;
    }
    return clrt__container_new(&sequential_vt, sizeof(clrt_module), n, mods, names);
}

const char *clrt_module_child_name(const clrt_module *m, int i)
{
    static _Thread_local char index[16];
    if (!m || i < 0 || i >= m->nchildren) {
        clrt__fail(CLRT_EINVAL, "clrt_module_child_name: no child %d", i);
        return NULL;
    }
    return clrt__child_name(m, i, index, sizeof index);
}
