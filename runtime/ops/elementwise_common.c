/* Checks and device queries shared by the elementwise and reduce ops. */
#include "runtime/ops/elementwise_internal.h"

clrt_status clrt__check_out(const char *op, const clrt_tensor *out, clrt_dtype dtype, int ndim,
                            const int64_t *shape)
{
    char want[128], got[128];
    if (!out)
        return clrt__fail(CLRT_EINVAL, "%s: out is NULL", op);
    if (out->dtype != dtype)
        return clrt__fail(CLRT_EDTYPE, "%s: out must be %s, got %s", op, clrt_dtype_str(dtype),
                          clrt_dtype_str(out->dtype));
    int same = out->ndim == ndim;
    for (int i = 0; same && i < ndim; i++)
        same = out->shape[i] == shape[i];
    if (!same)
        return clrt__fail(CLRT_ESHAPE, "%s: out has shape %s, the result has shape %s", op,
                          clrt_shape_str(out->ndim, out->shape, got, sizeof got),
                          clrt_shape_str(ndim, shape, want, sizeof want));
    return CLRT_OK;
}

clrt_status clrt__check_out_device(const char *op, const clrt_tensor *out, const clrt_tensor *x)
{
    if (!out)
        return clrt__fail(CLRT_EINVAL, "%s: out is NULL", op);
    if (clrt__dev(out) != clrt__dev(x))
        return clrt__fail(CLRT_EDEVMISMATCH,
                          "%s: expected all tensors on one device, but the input is on %s and "
                          "out is on %s; move one with clrt_tensor_to()",
                          op, clrt__dev(x)->info.name, clrt__dev(out)->info.name);
    return CLRT_OK;
}

clrt_status clrt__max_item_sizes(clrt_device *d, size_t sizes[3])
{
    size_t all[16] = {0};
    size_t bytes = 0;
    cl_int err = clGetDeviceInfo(d->id, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof all, all, &bytes);
    if (err != CL_SUCCESS)
        return clrt__fail_cl(err, "clGetDeviceInfo(CL_DEVICE_MAX_WORK_ITEM_SIZES)");
    size_t dims = bytes / sizeof all[0];
    for (size_t i = 0; i < 3; i++)
        sizes[i] = i < dims && all[i] > 0 ? all[i] : 1;
    return CLRT_OK;
}
