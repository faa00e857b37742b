/* Fused epilogues (epilogue_internal.h): the check of an epilogue's
 * arguments, shared by every op that takes one, and the bias-and-epilogue
 * pass of matrix products (clkernels/unary.cl). */
#include "runtime/ops/epilogue_internal.h"
#include "runtime/ops/elementwise/unary_internal.h"
#include "runtime/tensor/check_internal.h"

clrt_status clrt__check_epilogue(const char *op, const clrt__epilogue *epi, const clrt_tensor *like)
{
    if (!epi)
        return clrt__fail(CLRT_EINVAL, "%s: NULL epilogue", op);
    if (epi->kind != CLRT__EPI_MASK)
        return epi->kind == CLRT__EPI_NONE || epi->kind == CLRT__EPI_RELU ||
                       epi->kind == CLRT__EPI_RELU6
                   ? CLRT_OK
                   : clrt__fail(CLRT_EINVAL, "%s: unknown epilogue %d", op, (int)epi->kind);
    clrt__arg args[] = {{"out", like, 0}, {"mask", epi->mask, 0}};
    clrt_status st = clrt__check_args(op, 2, args);
    if (st == CLRT_OK)
        st = clrt__check_dtype(op, "mask", epi->mask, CLRT_F32);
    if (st == CLRT_OK)
        st = clrt__check_same_shape(op, like, epi->mask);
    return st != CLRT_OK ? st : clrt__check_no_alias(op, &args[0], 1, &args[1]);
}

clrt_status clrt__bias_epilogue(clrt_tensor *out, clrt_tensor *bias, const clrt__epilogue *epi)
{
    const char *op = "bias epilogue";
    clrt_status st = clrt__check_epilogue(op, epi, out);
    if (st != CLRT_OK)
        return st;
    /* out [*, cols] runs as rows = every leading index */
    int64_t ncols = out->ndim >= 1 ? out->shape[out->ndim - 1] : 0;
    int64_t nrows = ncols > 0 ? clrt_tensor_numel(out) / ncols : 0;
    if (ncols < 1 || (bias && (bias->ndim != 1 || bias->shape[0] != ncols)) || nrows > INT32_MAX ||
        ncols > INT32_MAX)
        return clrt__fail(CLRT_ESHAPE, "%s: needs out [*, cols] and bias [cols]", op);
    if (!bias && epi->kind == CLRT__EPI_NONE)
        return CLRT_OK;
    cl_int has_bias = bias != NULL, rows = (cl_int)nrows, cols = (cl_int)ncols;
    cl_int kind = (cl_int)epi->kind;
    cl_mem mo = clrt__mem(out), mb = bias ? clrt__mem(bias) : mo; /* unread without */
    cl_mem mm = epi->mask ? clrt__mem(epi->mask) : mo;
    clrt__karg args[] = {CLRT__ARG(mo),   CLRT__ARG(mb),   CLRT__ARG(has_bias), CLRT__ARG(rows),
                         CLRT__ARG(cols), CLRT__ARG(kind), CLRT__ARG(mm)};
    clrt_device *d = clrt__dev(out);
    return clrt__run_planes(d, clrt__unary_kernel(d, "bias_epi_f32"), (size_t)cols, (size_t)rows, 7,
                            args);
}
