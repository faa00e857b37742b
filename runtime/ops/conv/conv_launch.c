/* Batch chunking of the convolutions: the scratch cap, the chunk size, the
 * loop over chunks, and the GEMM shape the im2col path uses. */
#include "runtime/ops/conv/conv_internal.h"
#include "runtime/core/env_internal.h"
#include "runtime/ops/gemm/gemm_internal.h"
#include "runtime/ops/workspace_internal.h"

#include <stdlib.h>

/* The column matrices are kept below this even where the device would
 * allow more: larger chunks only cost memory. CLRT_CONV_SCRATCH_BYTES
 * overrides it, for tests of the chunked path and for tuning. */
#define CONV_SCRATCH_CAP ((size_t)256 << 20)

size_t clrt__conv_scratch_cap(const clrt_device *d)
{
    size_t cap =
        clrt__env()->conv_scratch_bytes ? clrt__env()->conv_scratch_bytes : CONV_SCRATCH_CAP;
    return d->info.max_alloc_bytes < cap ? d->info.max_alloc_bytes : cap;
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

clrt_status clrt__conv_over_chunks(clrt_device *d, int images, int chunk, clrt__conv_chunk_fn fn,
                                   void *ctx)
{
    clrt_status st = clrt__workspace_begin(d);
    if (st != CLRT_OK)
        return st;
    for (int img0 = 0; img0 < images && st == CLRT_OK; img0 += chunk)
        st = fn(d, ctx, img0, images - img0 < chunk ? images - img0 : chunk);
    clrt__workspace_end(d);
    return st;
}
