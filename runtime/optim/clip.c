/* Gradient clipping by the global norm (torch.nn.utils.clip_grad_norm_),
 * composed of ops on the gradients' device: nothing is read back. */
#include "runtime/core/alloc_internal.h"
#include "runtime/core/error_internal.h"
#include <clrt/clrt.h>

#include <math.h>
#include <stdlib.h>

/* Every gradient non-NULL, float32 and on grads[0]'s device, checked
 * before anything is enqueued. */
static clrt_status check_grads(const char *api, int n, clrt_tensor *const *grads)
{
    if (n < 1 || !grads)
        return clrt__fail(CLRT_EINVAL, "%s: needs at least one gradient (n = %d%s)", api, n,
                          grads ? "" : ", grads is NULL");
    for (int i = 0; i < n; i++) {
        if (!grads[i])
            return clrt__fail(CLRT_EINVAL, "%s: grads[%d] is NULL", api, i);
        if (clrt_tensor_dtype(grads[i]) != CLRT_F32)
            return clrt__fail(CLRT_EDTYPE, "%s: grads[%d] must be float32, got %s", api, i,
                              clrt_dtype_str(clrt_tensor_dtype(grads[i])));
        if (clrt_tensor_device(grads[i]) != clrt_tensor_device(grads[0]))
            return clrt__fail(CLRT_EDEVMISMATCH,
                              "%s: grads[0] is on %s but grads[%d] is on %s; all gradients "
                              "must be on one device",
                              api, clrt_device_str(clrt_tensor_device(grads[0])), i,
                              clrt_device_str(clrt_tensor_device(grads[i])));
    }
    return CLRT_OK;
}

/* The norm of the per-gradient norms, as a 0-dim tensor: a [n] tensor of
 * each gradient's norm, then its norm (clrt_norm scales, so neither sum
 * of squares overflows). */
static clrt_tensor *total_norm(int n, clrt_tensor *const *grads)
{
    clrt_tensor **norms = clrt__calloc((size_t)n, sizeof *norms);
    if (!norms) {
        clrt__fail(CLRT_ENOMEM, "clrt_clip_grad_norm: out of host memory");
        return NULL;
    }
    const int64_t one = 1;
    int made = 0;
    for (; made < n; made++) {
        clrt_tensor *nrm = clrt_norm(grads[made]);
        norms[made] = nrm ? clrt_reshape(nrm, 1, &one) : NULL;
        clrt_tensor_release(nrm);
        if (!norms[made])
            break;
    }
    clrt_tensor *all = made == n ? clrt_cat(norms, n, 0) : NULL;
    clrt_tensor *total = all ? clrt_norm(all) : NULL;
    clrt_tensor_release(all);
    for (int i = 0; i < made; i++)
        clrt_tensor_release(norms[i]);
    free(norms);
    return total;
}

/* min(max_norm / (total + 1e-6), 1), as PyTorch's clip_coef_clamped. */
static clrt_tensor *clip_coef(clrt_tensor *total, double max_norm)
{
    clrt_tensor *num = clrt_empty(clrt_tensor_device(total), CLRT_F32, 0, NULL);
    clrt_tensor *den = clrt_add_scalar(total, 1e-6);
    clrt_tensor *coef = NULL;
    if (num && den && clrt_fill_(num, max_norm) == CLRT_OK) {
        clrt_tensor *q = clrt_div(num, den);
        coef = q ? clrt_clamp(q, -INFINITY, 1.0) : NULL;
        clrt_tensor_release(q);
    }
    clrt_tensor_release(num);
    clrt_tensor_release(den);
    return coef;
}

clrt_tensor *clrt_clip_grad_norm(int n, clrt_tensor *const *grads, double max_norm)
{
    const char *api = "clrt_clip_grad_norm";
    if (check_grads(api, n, grads) != CLRT_OK)
        return NULL;
    if (!(isfinite(max_norm) && max_norm > 0)) {
        clrt__fail(CLRT_EINVAL, "%s: max_norm = %g must be finite and > 0", api, max_norm);
        return NULL;
    }
    int grad_was = clrt_set_grad_enabled(0);
    clrt_tensor *total = total_norm(n, grads);
    clrt_tensor *coef = total ? clip_coef(total, max_norm) : NULL;
    /* Every gradient is scaled, by 1 when under the limit (as PyTorch). */
    clrt_status s = coef ? CLRT_OK : clrt_last_status();
    for (int i = 0; i < n && s == CLRT_OK; i++)
        s = clrt_mul_(grads[i], coef);
    clrt_set_grad_enabled(grad_was);
    clrt_tensor_release(coef);
    if (s != CLRT_OK) {
        clrt_tensor_release(total);
        return NULL;
    }
    return total;
}
