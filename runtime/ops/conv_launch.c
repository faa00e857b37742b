/* Launch shapes and batch chunking for the convolution and pooling kernels. */
#include "runtime/ops/conv_internal.h"
#include "runtime/ops/gemm_internal.h"

#include <stdlib.h>

/* The column matrices are kept below this even where the device would
 * allow more: larger chunks only cost memory. CLRT_CONV_SCRATCH_BYTES
 * overrides it, for tests of the chunked path and for tuning. */
#define CONV_SCRATCH_CAP ((size_t)256 << 20)

size_t clrt__conv_scratch_cap(const clrt_device *d)
{
    size_t cap = CONV_SCRATCH_CAP;
    const char *env = getenv("CLRT_CONV_SCRATCH_BYTES");
    if (env && *env)
        cap = (size_t)strtoull(env, NULL, 10);
    return d->info.max_alloc_bytes < cap ? d->info.max_alloc_bytes : cap;
}

static size_t round_up(size_t x, size_t m) { return (x + m - 1) / m * m; }

static size_t preferred_multiple(clrt_device *d, cl_kernel k)
{
    size_t m = 0;
    if (clGetKernelWorkGroupInfo(k, d->id, CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE, sizeof m,
                                 &m, NULL) != CL_SUCCESS ||
        m == 0)
        m = 1;
    return m;
}

/* The device's limit on the work-group's extent along dim 1. */
static size_t max_items_dim1(clrt_device *d)
{
    size_t sizes[16] = {0};
    if (clGetDeviceInfo(d->id, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof sizes, sizes, NULL) !=
            CL_SUCCESS ||
        sizes[1] == 0)
        return 1;
    return sizes[1];
}

clrt_status clrt__launch_planes(clrt_device *d, cl_kernel k, size_t items, size_t planes)
{
    if (items == 0 || planes == 0)
        return CLRT_OK;
    size_t wg = clrt__wg_size(d, k), mult = preferred_multiple(d, k);
    if (mult > wg)
        mult = 1;
    /* Split a plane into as few groups as wg allows, then even them out:
     * 784 items with wg 256 gives 4 groups of 200, not 1024 items. */
    size_t groups = (items + wg - 1) / wg;
    size_t l0 = round_up((items + groups - 1) / groups, mult);
    if (l0 > wg)
        l0 = wg;
    /* Small planes share a work-group. */
    size_t l1 = wg / l0, lim1 = max_items_dim1(d);
    if (l1 > planes)
        l1 = planes;
    if (l1 > lim1)
        l1 = lim1;
    if (l1 == 0)
        l1 = 1;
    size_t global[2] = {round_up(items, l0), round_up(planes, l1)};
    size_t local[2] = {l0, l1};
    return clrt__launch(d, k, 2, global, local);
}

int clrt__conv_chunk(const char *op, const clrt_device *d, const clrt__conv_dims *cd)
{
    size_t rows = (size_t)cd->C * (size_t)cd->K * (size_t)cd->K;
    if ((size_t)cd->O > rows)
        rows = (size_t)cd->O;
    size_t per_image = rows * (size_t)cd->OH * (size_t)cd->OW;
    size_t partial = (size_t)cd->O * (size_t)cd->C * (size_t)cd->K * (size_t)cd->K;
    per_image = (per_image > partial ? per_image : partial) * sizeof(float); /* weight_chunk */
    size_t cap = clrt__conv_scratch_cap(d);
    if (per_image > d->info.max_alloc_bytes) {
        clrt__fail(CLRT_ENOMEM,
                   "%s: the column matrix of one image needs %zu bytes, more than the "
                   "largest allocation on %s (CL_DEVICE_MAX_MEM_ALLOC_SIZE = %llu bytes)",
                   op, per_image, d->info.name, (unsigned long long)d->info.max_alloc_bytes);
        return 0;
    }
    size_t n = per_image > 0 ? cap / per_image : (size_t)cd->N;
    if (n > (size_t)cd->N)
        n = (size_t)cd->N;
    return n < 1 ? 1 : (int)n;
}

clrt_status clrt__conv_gemm(clrt_device *d, int trans_a, int trans_b, size_t m, size_t n, size_t k,
                            cl_mem a, cl_mem b, float beta, cl_mem c)
{
    clrt__gemm_args g = {.trans_a = trans_a,
                         .trans_b = trans_b,
                         .m = m,
                         .n = n,
                         .k = k,
                         .alpha = 1.0f,
                         .beta = beta,
                         .a = a,
                         .b = b,
                         .c = c,
                         .lda = trans_a ? m : k,
                         .ldb = trans_b ? k : n,
                         .ldc = n,
                         .batch = 1};
    return clrt__gemm(d, &g);
}
