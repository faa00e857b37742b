/* clrt_rand / clrt_randn: Philox4x32-10 on the device (clkernels/random.cl). */
#include "runtime/tensor/tensor_internal.h"

static clrt_tensor *generate(const char *kernel, clrt_device *d, int ndim, const int64_t *shape,
                             uint64_t seed)
{
    clrt_tensor *x = clrt__alloc(d, CLRT_F32, ndim, shape);
    if (!x)
        return NULL;
    cl_ulong n = (cl_ulong)x->numel;
    cl_uint lo = (cl_uint)seed, hi = (cl_uint)(seed >> 32);
    cl_mem m = clrt__mem(x);
    clrt__karg args[] = {CLRT__ARG(m), CLRT__ARG(n), CLRT__ARG(lo), CLRT__ARG(hi)};
    if (clrt__run_1d(d, "random", NULL, kernel, (size_t)((n + 3) / 4), 4, args) != CLRT_OK) {
        clrt_tensor_release(x);
        return NULL;
    }
    return x;
}

clrt_tensor *clrt_rand(clrt_device *d, int ndim, const int64_t *shape, uint64_t seed)
{
    return generate("rand_uniform", d, ndim, shape, seed);
}

clrt_tensor *clrt_randn(clrt_device *d, int ndim, const int64_t *shape, uint64_t seed)
{
    return generate("rand_normal", d, ndim, shape, seed);
}
