/* The ONNX importer's elementwise float32 maps (clrt__abs, clrt__erf,
 * clrt__hardsigmoid, clrt__hardswish: clkernels/unary.cl) and Pow with
 * NumPy broadcasting (clrt__pow: binary.cl's broadcast kernels). Forward
 * only, never recorded (runtime/ops/onnx_ops_internal.h). */
#include "runtime/ops/onnx_ops_internal.h"

#include "runtime/ops/elementwise/binary_internal.h"
#include "runtime/ops/elementwise/unary_internal.h"
#include "runtime/tensor/check_internal.h"

/* out = name(x[, alpha, beta]) for a float32 x; nparams is 0 or 2. */
static clrt_tensor *map_new(const char *api, const char *kernel, clrt_tensor *x, int nparams,
                            double alpha, double beta)
{
    clrt__arg args[] = {{"x", x, 0}};
    if (clrt__check_args(api, 1, args) != CLRT_OK ||
        clrt__check_dtype(api, "x", x, CLRT_F32) != CLRT_OK)
        return NULL;
    clrt_tensor *out = clrt__alloc_like(x);
    if (!out || x->numel == 0)
        return out;
    cl_mem mx = clrt__mem(x), mo = clrt__mem(out);
    cl_ulong n = (cl_ulong)x->numel;
    cl_float fa = (cl_float)alpha, fb = (cl_float)beta;
    clrt__karg kargs[] = {CLRT__ARG(mx), CLRT__ARG(mo), CLRT__ARG(n), CLRT__ARG(fa), CLRT__ARG(fb)};
    if (clrt__run_unary(clrt__dev(x), kernel, (size_t)n, 3 + nparams, kargs) != CLRT_OK) {
        clrt_tensor_release(out);
        return NULL;
    }
    return out;
}

clrt_tensor *clrt__abs(clrt_tensor *x) { return map_new("clrt__abs", "abs_f32", x, 0, 0, 0); }

clrt_tensor *clrt__erf(clrt_tensor *x) { return map_new("clrt__erf", "erf_f32", x, 0, 0, 0); }

clrt_tensor *clrt__hardsigmoid(clrt_tensor *x, double alpha, double beta)
{
    return map_new("clrt__hardsigmoid", "hardsigmoid_f32", x, 2, alpha, beta);
}

clrt_tensor *clrt__hardswish(clrt_tensor *x)
{
    return map_new("clrt__hardswish", "hardswish_f32", x, 0, 0, 0);
}

clrt_tensor *clrt__pow(clrt_tensor *a, clrt_tensor *b)
{
    const char *api = "clrt__pow";
    clrt__arg args[] = {{"a", a, 0}, {"b", b, 0}};
    int64_t shape[CLRT_MAX_DIMS];
    int ndim = 0;
    if (clrt__check_args(api, 2, args) != CLRT_OK ||
        clrt__check_dtype(api, "a", a, CLRT_F32) != CLRT_OK ||
        clrt__check_dtype(api, "b", b, CLRT_F32) != CLRT_OK ||
        clrt__broadcast_shape(api, a, b, &ndim, shape) != CLRT_OK)
        return NULL;
    clrt_tensor *out = clrt__alloc(clrt__dev(a), CLRT_F32, ndim, shape);
    if (out && clrt__binary_into(CLRT__POW, a, b, out) != CLRT_OK) {
        clrt_tensor_release(out);
        return NULL;
    }
    return out;
}
