/* clrt/ops_gemm.h — matrix products.
 *
 * GEMM runs through CLBlast on GPUs. On CPU devices with host-unified memory
 * it runs the host's BLAS (OpenBLAS) on the device's buffers in queue order,
 * about 10x faster than CLBlast on PoCL; CLRT_GEMM=clblast picks CLBlast
 * there too. clrt_device_info.gemm_path says which path a device uses. */
#ifndef CLRT_OPS_GEMM_H
#define CLRT_OPS_GEMM_H
#include <clrt/tensor.h>
#ifdef __cplusplus
extern "C" {
#endif

/* a [m,k] x b [k,n] -> [m,n]; or batched a [B,m,k] x b [B,k,n] -> [B,m,n].
 * float32 only. */
clrt_tensor *clrt_matmul(clrt_tensor *a, clrt_tensor *b);
clrt_status clrt_matmul_out(clrt_tensor *out, clrt_tensor *a, clrt_tensor *b);

/* c = alpha * op(a) * op(b) + beta * c, op transposing the last two dims
 * when trans_* is nonzero; 2-D, or 3-D with equal batch sizes. c must not
 * alias a or b. */
clrt_status clrt_gemm(clrt_tensor *c, int trans_a, int trans_b, float alpha, clrt_tensor *a,
                      clrt_tensor *b, float beta);

const char *clrt_gemm_path_str(clrt_gemm_path p); /* "clblast" "host-blas" */

#ifdef __cplusplus
}
#endif
#endif
