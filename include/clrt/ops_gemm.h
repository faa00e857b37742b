/* clrt/ops_gemm.h — matrix products.
 *
 * GEMM runs through CLBlast on GPUs. On CPU devices with host-unified memory
 * and native-kernel support it runs the host's BLAS (OpenBLAS) on the
 * device's buffers in queue order, without blocking the caller, an order of
 * magnitude faster than CLBlast on PoCL (clrt-bench matmul); CLRT_GEMM=clblast
 * picks CLBlast there too. A CPU driver without native kernels,
 * or a build without OpenBLAS, stays on CLBlast. clrt_device_info.gemm_path
 * (shown by clrt-smi) says which path a device uses.
 *
 * All calls are float32 only, take tensors on one device, enqueue the work
 * and return at once. On bad input they change nothing and return an error
 * whose message shows the shapes, dtypes or devices involved. */
#ifndef CLRT_OPS_GEMM_H
#define CLRT_OPS_GEMM_H
#include <clrt/tensor.h>
#ifdef __cplusplus
extern "C" {
#endif

/* a [m,k] x b [k,n] -> [m,n]; batched a [B,m,k] x b [B,k,n] -> [B,m,n],
 * where either operand may instead be 2-D or [1,..,..] and is then used for
 * every batch entry (as in torch.matmul). k = 0 gives zeros. Returns a new
 * tensor. */
CLRT_API clrt_tensor *clrt_matmul(clrt_tensor *a, clrt_tensor *b);
/* The same into out, which must have the product's shape and must not
 * share its buffer with a or b. */
CLRT_API clrt_status clrt_matmul_out(clrt_tensor *out, clrt_tensor *a, clrt_tensor *b);

/* Whether clrt_gemm uses an operand as stored or transposed (its last two
 * dims swapped), like BLAS's CblasNoTrans / CblasTrans. */
typedef enum { CLRT_NO_TRANS = 0, CLRT_TRANS = 1 } clrt_trans;

/* c = alpha * op(a) * op(b) + beta * c, op transposing the last two dims
 * for CLRT_TRANS; 2-D, or 3-D with equal batch sizes (an a or b that is 2-D
 * or has a batch of one is used for every batch entry). c must not share
 * its storage with a or b; a and b may be one tensor. With beta = 0, c's
 * old contents (even NaN) are ignored. */
CLRT_API clrt_status clrt_gemm(clrt_tensor *c, clrt_trans trans_a, clrt_trans trans_b, float alpha,
                               clrt_tensor *a, clrt_tensor *b, float beta);

CLRT_API const char *clrt_gemm_path_str(clrt_gemm_path p); /* "clblast" "host-blas" */

/* CLBlast's tuning for a device (shown by clrt-smi): its built-in database
 * has parameters tuned for this device model, or for its architecture
 * (NVIDIA's compute capability), or it runs the vendor's or CLBlast's own
 * defaults. UNKNOWN when libclblast cannot be read (then also an error). */
typedef enum {
    CLRT_CLBLAST_TUNED_DEVICE,
    CLRT_CLBLAST_TUNED_ARCHITECTURE,
    CLRT_CLBLAST_DEFAULTS,
    CLRT_CLBLAST_TUNING_UNKNOWN
} clrt_clblast_tuning;
CLRT_API clrt_clblast_tuning clrt_clblast_tuning_of(const clrt_device *d);
/* "device" "architecture" "defaults" "unknown" */
CLRT_API const char *clrt_clblast_tuning_str(clrt_clblast_tuning t);

/* Hands CLBlast tuned float32 parameters for one of its kernels on d, as
 * CLBlast's tuners print them: kernel "Xgemm" (clblast_tuner_xgemm) or
 * "XgemmDirect" (clblast_tuner_xgemm_direct), params their JSON file's
 * best_parameters, e.g. "GEMMK=0 KREG=1 KWG=32 ... VWN=2" (PRECISION=32 is
 * skipped). The next GEMM recompiles CLBlast's kernel with them, for the
 * rest of the process (CLBlastOverrideParameters). CLRT_EINVAL when the text
 * is not NAME=VALUE pairs or CLBlast refuses them (a kernel it does not know,
 * a parameter missing). clrt-bench clblast compares the two. */
CLRT_API clrt_status clrt_clblast_override(clrt_device *d, const char *kernel, const char *params);

#ifdef __cplusplus
}
#endif
#endif
