/* clrt/ops_gemm.h — matrix products.
 *
 * GEMM runs through CLBlast on GPUs. On CPU devices (CPU-style kernels,
 * CLRT_KERNEL_STYLE) clrt's own kernels (clkernels/gemm_cpu.cl) multiply
 * on the driver's threads, as every other kernel runs: a register-blocked
 * tile per work item, its size from the device's vector width and
 * registers (or the tuning store). Products too small to keep the
 * device's cores busy go to the device's GEMM path instead: on CPU
 * devices with host-unified memory and native-kernel support the host's
 * BLAS (OpenBLAS) on the device's buffers in queue order, without blocking
 * the caller; elsewhere CLBlast. CLRT_GEMM=host-blas sends every product
 * to the device's path, =clblast every product to CLBlast, =kernel every
 * product to clrt's kernels. clrt_device_info.gemm_path (shown by
 * clrt-smi) names the device's path.
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

/* torch.matmul: a [m,k] x b [k,n] -> [m,n]; with more dims, the last two
 * of each are the matrices and the others batch dims that broadcast
 * NumPy-style: [B,H,T,D] x [B,H,D,T] -> [B,H,T,T], [B,1,T,D] x [H,D,E] ->
 * [B,H,T,E], [B,T,D] x [D,E] -> [B,T,E]. A 1-D a is a row [1,k] and a 1-D
 * b a column [k,1], the added dim dropped from the result (1-D x 1-D is
 * their dot product, a 0-dim tensor). k = 0 gives zeros. Returns a new
 * tensor (the caller's reference), or NULL with an error naming both
 * shapes: 0-dim operands, inner dims that differ, batch dims that do not
 * broadcast (CLRT_ESHAPE), a result beyond the device's largest
 * allocation (CLRT_ENOMEM). Each product is one strided-batched GEMM; an
 * operand broadcast along some batch dims but not all is copied out to
 * the full batch first. Recorded by autograd: gradients g b^T and a^T g,
 * summed over the batch dims an operand was broadcast along. */
CLRT_API clrt_tensor *clrt_matmul(clrt_tensor *a, clrt_tensor *b);
/* The product of 2-D or 3-D operands ([B,m,k] x [B,k,n], either operand
 * 2-D or of batch 1 shared by every entry) into out, which must have the
 * product's shape and must not share its buffer with a or b. */
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

/* CLBlast's float32 GEMM parameters on a device. CLBlast picks its own
 * (its database's entry for the device model, else its architecture or
 * vendor, else its defaults) unless clrt hands it others:
 *  - parameters tuned on this device: `clrt-smi --tune DEVICE` runs
 *    CLBlast's tuners there and stores the best parameters in clrt's
 *    tuning store (clrt_clblast_tuning_store), in the cache folder
 *    (CLRT_CACHE_DIR ..., with the program cache's trust rules), keyed by
 *    the device model, its driver and platform versions and clrt's version.
 *    clrt hands them to CLBlast at the first CLBlast GEMM on such a device
 *    in every later process (CLRT_CLBLAST_TUNED=0 leaves them unused).
 *    Stored parameters that CLBlast refuses (a corrupt record, a CLBlast
 *    whose kernels take other parameters, values beyond its constraints)
 *    are never skipped silently: that
 *    GEMM and every later CLBlast GEMM on the device fail with CLRT_EINVAL
 *    naming them and the way out (tune again, or CLRT_CLBLAST_TUNED=0),
 *    and a CLBlast GEMM that fails otherwise names them in its message.
 *  - parameters a program gives (clrt_clblast_override), which win over
 *    stored ones for that kernel.
 * The host-BLAS path (CPU devices, clrt_device_info.gemm_path) and clrt's
 * own kernels run none of them. All calls here are thread-safe. */

/* What d's CLBlast GEMMs run with (clrt-smi's CLBLAST TUNED column):
 * TUNED_HERE: parameters from clrt's store, for at least one of CLBlast's
 * two GEMM kernels; BUILT_IN: CLBlast's own (or a program's
 * clrt_clblast_override); REFUSED: stored parameters CLBlast refuses, with
 * the error set as the next GEMM would set it; UNKNOWN: d is NULL (error
 * set). Asking hands the stored parameters over, as a first GEMM does. */
typedef enum {
    CLRT_CLBLAST_BUILT_IN,
    CLRT_CLBLAST_TUNED_HERE,
    CLRT_CLBLAST_REFUSED,
    CLRT_CLBLAST_TUNING_UNKNOWN
} clrt_clblast_tuning;
CLRT_API clrt_clblast_tuning clrt_clblast_tuning_of(const clrt_device *d);
/* "built-in" "tuned here" "refused" "unknown" */
CLRT_API const char *clrt_clblast_tuning_str(clrt_clblast_tuning t);

/* Stores tuned parameters for CLBlast's kernel "Xgemm" or "XgemmDirect" on
 * d's model and driver (see above), as clrt_clblast_override takes them,
 * and hands them to CLBlast at once: d's later CLBlast GEMMs in this
 * process and in every later one run with them. clrt-smi --tune calls it
 * with the tuners' best. CLRT_EINVAL (nothing stored): another kernel,
 * text that is not NAME=VALUE pairs, names CLBlast refuses, or values
 * beyond CLBlast's constraints (those of its tuners: multiples and
 * divisibility among the parameters, vector widths 1 to 16, flags 0 or 1,
 * the work group and local memory within d's limits, and no value over
 * twice the largest its tuners try, e.g. MWG <= 256); CLRT_EIO
 * when the cache folder is off (CLRT_CACHE=0) or cannot be written: then
 * they hold in this process only. */
CLRT_API clrt_status clrt_clblast_tuning_store(clrt_device *d, const char *kernel,
                                               const char *params);
/* The parameters stored for d's kernel ("Xgemm", "XgemmDirect"), copied
 * into out as snprintf does (cap bytes, NUL-terminated): returns their
 * length, 0 when none are stored (CLRT_CLBLAST_TUNED does not matter), or
 * a negative status (CLRT_EINVAL for a corrupt record, naming it). */
CLRT_API int clrt_clblast_tuning_load(const clrt_device *d, const char *kernel, char *out,
                                      size_t cap);

/* Hands CLBlast tuned float32 parameters for one of its kernels on d, as
 * CLBlast's tuners print them: kernel "Xgemm" (clblast_tuner_xgemm) or
 * "XgemmDirect" (clblast_tuner_xgemm_direct), or another of CLBlast's
 * (e.g. "GemmRoutine"), params their JSON file's best_parameters, e.g.
 * "GEMMK=0 KREG=1 KWG=32 ... VWN=2" (PRECISION=32 is skipped). The next
 * GEMM recompiles CLBlast's kernel with them, for the rest of the process
 * (CLBlastOverrideParameters), whatever clrt's store holds. Nothing is
 * stored. CLRT_EINVAL when the text is not NAME=VALUE pairs, CLBlast
 * refuses them (a kernel it does not know, a parameter missing), or, for
 * Xgemm and XgemmDirect, the values are beyond CLBlast's constraints or
 * d's limits (as clrt_clblast_tuning_store checks them): then CLBlast's
 * parameters are left as they were. */
CLRT_API clrt_status clrt_clblast_override(clrt_device *d, const char *kernel, const char *params);

/* Releases the programs CLBlast compiled and keeps for the rest of the
 * process (one cache for every device; tuned and overridden parameters
 * stay). The next CLBlast GEMM compiles its kernel again. Optional; a
 * program may call it before it exits, and must on Oclgrind 21.10, which
 * frees its per-thread state before libraries' exit-time destructors run:
 * CLBlast releasing its programs at exit then writes to freed memory
 * (glibc aborts with "corrupted double-linked list"). CLRT_EINVAL with
 * CLBlast's code when it fails. */
CLRT_API clrt_status clrt_clblast_release_programs(void);

#ifdef __cplusplus
}
#endif
#endif
