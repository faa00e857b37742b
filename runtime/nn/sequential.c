/* Sequential: runs its children in order; backward runs them in reverse and
 * stops below the first child with parameters when the caller does not
 * want the input gradient (the input of a network needs none). A ReLU is
 * fused into its neighbours where they allow (fuse.c). */
#include "runtime/nn/module_internal.h"
#include "runtime/core/alloc_internal.h"

#include <stdlib.h>
#include <string.h>

static clrt_tensor *sequential_forward(clrt_module *m, clrt_tensor *x)
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

static clrt_status sequential_backward(clrt_module *m, clrt_tensor *grad_out, clrt_tensor **grad_in)
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

static void sequential_describe(const clrt_module *m, char *buf, size_t cap)
{
    size_t used = (size_t)snprintf(buf, cap, "(");
    for (int i = 0; i < m->nchildren && used < cap; i++) {
        used += (size_t)snprintf(buf + used, cap - used, "%s%d: ", i ? ", " : "", i);
        if (used < cap)
            clrt_module_str(m->children[i], buf + used, cap - used);
        used += strlen(buf + used);
    }
    if (used < cap)
        snprintf(buf + used, cap - used, ")");
}

static const clrt__module_vt sequential_vt = {.kind = "Sequential",
                                              .forward = sequential_forward,
                                              .backward = sequential_backward,
                                              .describe = sequential_describe};

/* Children must be adoptable and agree on a device; the Sequential adopts it. */
static clrt_status check_children(int n, clrt_module **mods)
{
    clrt_status st = clrt__adopt_check("clrt_sequential", n, mods);
    for (int i = 0; st == CLRT_OK && i < n; i++)
        if (mods[i]->device != mods[0]->device)
            return clrt__fail(CLRT_EDEVMISMATCH,
                              "clrt_sequential: module 0 is on %s but module %d is on %s; "
                              "move them with clrt_module_to()",
                              mods[0]->device->info.name, i, mods[i]->device->info.name);
    return st;
}

clrt_module *clrt_sequential(int n, clrt_module **mods)
{
    if (n < 0 || (n > 0 && !mods)) {
        clrt__fail(CLRT_EINVAL, "clrt_sequential: bad module list (n = %d)", n);
        return NULL;
    }
    clrt_module *m = check_children(n, mods) == CLRT_OK
                         ? clrt__module_new(&sequential_vt, sizeof(clrt_module))
                         : NULL;
    clrt_module **children = m ? clrt__malloc((n ? (size_t)n : 1) * sizeof *children) : NULL;
    if (!children) {
        if (m)
            clrt__fail(CLRT_ENOMEM, "clrt_sequential: out of host memory");
        free(m);
        clrt__adopt_failed(n, mods);
        return NULL;
    }
    if (n > 0)
        memcpy(children, mods, (size_t)n * sizeof *children);
    clrt__adopt(n, mods);
    m->children = children;
    m->nchildren = n;
    if (n > 0)
        m->device = mods[0]->device;
    return m;
}
