/* Grad mode, per thread, as torch.is_grad_enabled / torch.no_grad: the
 * switch autograd's recording and the refusal of unrecorded forms read
 * (tensor_internal.h, clrt/autograd.h). */
#include "runtime/tensor/tensor_internal.h"

#include <clrt/autograd.h>
#include <stdarg.h>

static _Thread_local int grad_disabled; /* 0: on (the default of every thread) */

int clrt_is_grad_enabled(void) { return !grad_disabled; }

int clrt_set_grad_enabled(int on)
{
    int was = !grad_disabled;
    grad_disabled = !on;
    return was;
}

int clrt__grad_wanted(int n, clrt_tensor *const *ts)
{
    if (grad_disabled)
        return 0;
    for (int i = 0; i < n; i++)
        if (ts[i] && ts[i]->requires_grad)
            return 1;
    return 0;
}

clrt_status clrt__check_unrecorded(const char *op, int n, clrt_tensor *const *ts,
                                   const char *const *names)
{
    if (grad_disabled)
        return CLRT_OK;
    for (int i = 0; i < n; i++)
        if (ts[i] && ts[i]->requires_grad)
            return clrt__fail(CLRT_EINVAL,
                              "%s: %s requires grad, and autograd does not record this form "
                              "(out= and in-place ops, as in PyTorch): use the form that returns "
                              "a new tensor, or turn grad mode off around it "
                              "(clrt_set_grad_enabled(0))",
                              op, names[i]);
    return CLRT_OK;
}

clrt_status clrt__unrecorded_write(const char *op, clrt_tensor *out, const char *out_name, int n,
                                   ...)
{
    clrt_tensor *ts[8] = {out};
    const char *names[8] = {out_name};
    va_list ap;
    va_start(ap, n);
    for (int i = 1; i <= n && i < 8; i++) {
        ts[i] = va_arg(ap, clrt_tensor *);
        names[i] = va_arg(ap, const char *);
    }
    va_end(ap);
    clrt_status st = clrt__check_unrecorded(op, n + 1 < 8 ? n + 1 : 8, ts, names);
    if (st == CLRT_OK)
        clrt__bump_version(out);
    return st;
}
