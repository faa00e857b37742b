/* Direct convolution for one input channel (clkernels/conv_direct.cl):
 * forward in one launch, the weight gradient as per-group partial sums
 * reduced by conv.cl's row_sums and bias_grad. At LeNet's first layer on
 * PoCL this replaces im2col + BLAS + permutes, whose column matrix and
 * skinny GEMMs (k = 200704 for the weight gradient) cost more than the
 * arithmetic. With more input channels (LeNet's second layer: 6) and for
 * the input gradient the same kernels measured 1.5-3x slower than im2col +
 * OpenBLAS on PoCL 3.1, so those keep the im2col path. With the host-BLAS
 * GEMM path the weight gradient goes to im2col + one GEMM per image
 * instead (2x faster, see clrt__conv_direct_weight_ok). */
#include "runtime/ops/conv_internal.h"
#include "runtime/ops/workspace_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Limits that keep each item's accumulators in registers and the fully
 * unrolled kernels small. */
enum { MAX_CHANNELS = 32, MAX_KSIZE = 7, MAX_WEIGHT_ACC = 128, MIN_WEIGHT_ITEMS = 4096 };

static int algo_is(const char *name)
{
    const char *algo = getenv("CLRT_CONV_ALGO");
    return algo && strcmp(algo, name) == 0;
}

int clrt__conv_direct_ok(const clrt_device *d, const clrt__conv_dims *cd)
{
    if (algo_is("im2col"))
        return 0;
    int forced = algo_is("direct");
    if (!forced && d->info.kind != CLRT_DEVICE_CPU)
        return 0;
    return cd->C <= (forced ? MAX_CHANNELS : 1) && cd->O <= MAX_CHANNELS && cd->K <= MAX_KSIZE;
}

/* With the host-BLAS path, im2col + one small GEMM per image measured 2x
 * faster than conv_bwd_weight_partial at LeNet's first layer on PoCL 3.1
 * (clrt-bench conv), so the direct kernel serves only where the GEMM is
 * CLBlast's, or when forced. */
int clrt__conv_direct_weight_ok(const clrt_device *d, const clrt__conv_dims *cd)
{
    return clrt__conv_direct_ok(d, cd) &&
           (algo_is("direct") || d->info.gemm_path != CLRT_GEMM_HOST_BLAS);
}

/* Output channels per weight-gradient item: the largest divisor of O whose
 * K*K accumulators each stay within MAX_WEIGHT_ACC. */
static int out_block(const clrt__conv_dims *cd)
{
    int b = 1;
    for (int i = 1; i <= cd->O; i++)
        if (cd->O % i == 0 && i * cd->K * cd->K <= MAX_WEIGHT_ACC)
            b = i;
    return b;
}

static cl_kernel direct_kernel(clrt_device *d, const clrt__conv_dims *cd, const char *name)
{
    char options[128];
    snprintf(options, sizeof options, "-DKSIZE=%d -DSTRIDE=%d -DCIN=%d -DCOUT=%d -DOBLK=%d",
             cd->K, cd->stride, cd->C, cd->O, out_block(cd));
    return clrt__kernel(d, "conv_direct", options, name);
}

clrt_status clrt__conv_direct_forward(clrt_device *d, cl_mem x, cl_mem w, cl_mem bias, cl_mem out,
                                      const clrt__conv_dims *cd)
{
    clrt__conv_geom g = clrt__conv_geom_of(cd, 0, cd->N);
    cl_int has_bias = bias != NULL;
    cl_mem b = bias ? bias : w; /* any valid buffer: the kernel skips it */
    clrt__karg args[] = {CLRT__ARG(x),        CLRT__ARG(w),   CLRT__ARG(b),
                         CLRT__ARG(has_bias), CLRT__ARG(out), CLRT__ARG(g)};
    return clrt__run_planes(d, direct_kernel(d, cd, "conv_fwd"), (size_t)cd->OH * (size_t)cd->OW,
                            (size_t)cd->N, 6, args);
}

/* Images per group for the weight gradient: enough groups to make about
 * MIN_WEIGHT_ITEMS items, which fills a CPU device. */
static int images_per_group(const clrt__conv_dims *cd)
{
    size_t per_group = (size_t)cd->OH * cd->OW * cd->C * (size_t)(cd->O / out_block(cd));
    size_t groups = (MIN_WEIGHT_ITEMS + per_group - 1) / per_group;
    if (groups > (size_t)cd->N)
        groups = (size_t)cd->N;
    return (int)(((size_t)cd->N + groups - 1) / groups);
}

/* partial -> gw: row sums over pixels, then the sum over groups. */
static clrt_status reduce_partials(clrt_device *d, cl_mem partial, cl_mem gw, cl_int groups,
                                   cl_int per_group_rows, cl_int ohw, cl_int accumulate)
{
    cl_int rows = groups * per_group_rows;
    cl_mem sums = clrt__workspace(d, CLRT__WS_ROWS_F, (size_t)rows * sizeof(float));
    if (!sums)
        return clrt_last_status();
    clrt__karg rargs[] = {CLRT__ARG(partial), CLRT__ARG(sums), CLRT__ARG(rows), CLRT__ARG(ohw)};
    clrt_status st = clrt__run_1d(d, "conv", NULL, "row_sums", (size_t)rows, 4, rargs);
    clrt__karg bargs[] = {CLRT__ARG(sums), CLRT__ARG(gw), CLRT__ARG(groups),
                          CLRT__ARG(per_group_rows), CLRT__ARG(accumulate)};
    return st != CLRT_OK ? st
                         : clrt__run_1d(d, "conv", NULL, "bias_grad", (size_t)per_group_rows, 5,
                                        bargs);
}

clrt_status clrt__conv_direct_weight(clrt_device *d, cl_mem gy, cl_mem x, cl_mem gw,
                                     const clrt__conv_dims *cd, int accumulate)
{
    cl_int per = images_per_group(cd);
    int groups = (cd->N + per - 1) / per;
    size_t ohw = (size_t)cd->OH * cd->OW, e = (size_t)cd->O * cd->C * cd->K * cd->K;
    size_t bytes = (size_t)groups * e * ohw * sizeof(float);
    if (bytes > clrt__conv_scratch_cap(d) || (size_t)groups * e > INT32_MAX)
        return CLRT_ENOTSUP;
    clrt_status st = clrt__workspace_begin(d);
    if (st != CLRT_OK)
        return st;
    cl_mem partial = clrt__workspace(d, CLRT__WS_COL, bytes);
    clrt__conv_geom g = clrt__conv_geom_of(cd, 0, cd->N);
    clrt__karg args[] = {CLRT__ARG(gy), CLRT__ARG(x), CLRT__ARG(partial), CLRT__ARG(g),
                         CLRT__ARG(per)};
    size_t planes = (size_t)groups * cd->C * (size_t)(cd->O / out_block(cd));
    st = partial ? clrt__run_planes(d, direct_kernel(d, cd, "conv_bwd_weight_partial"), ohw, planes,
                                    5, args)
                 : clrt_last_status();
    if (st == CLRT_OK)
        st = reduce_partials(d, partial, gw, groups, (cl_int)e, (cl_int)ohw, accumulate != 0);
    clrt__workspace_end(d);
    return st;
}
