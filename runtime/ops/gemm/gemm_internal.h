/* GEMM on device buffers, shared by matmul, conv and linear layers. */
#ifndef CLRT_GEMM_INTERNAL_H
#define CLRT_GEMM_INTERNAL_H

#include "runtime/ops/kparams_internal.h"
#include "runtime/tensor/tensor_internal.h"

/* Row-major, strided-batched:
 *   C_i[m,n] = alpha * op(A_i)[m,k] * op(B_i)[k,n] + beta * C_i,  i < batch,
 * where X_i starts at element x_off + i * stride_x of buffer x and op()
 * transposes when trans_x is nonzero. Offsets, leading dims and strides are
 * in elements; a stride of 0 for a or b reuses one matrix for the whole
 * batch. Leading dims must be >= 1 and >= the stored row length (for a
 * non-transposed A that is k, for a transposed one m). C must not overlap A
 * or B. Enqueued on d's queue in order; never blocks. The path (CLBlast or
 * host BLAS) follows d->info.gemm_path. */
typedef struct {
    int trans_a, trans_b;
    size_t m, n, k;
    float alpha, beta;
    cl_mem a, b, c;
    size_t a_off, b_off, c_off;
    size_t lda, ldb, ldc;
    size_t batch;
    size_t stride_a, stride_b, stride_c;
} clrt__gemm_args;

clrt_status clrt__gemm(clrt_device *d, const clrt__gemm_args *g);

/* The largest inner dimension k a GEMM may have on d: SIZE_MAX, or on a
 * device that ends a work item's loops early (llvmpipe,
 * clrt__loop_budget) what CLBlast's kernels run there within the budget
 * (gemm_launch.c); clrt__gemm refuses a longer k with CLRT_ENOTSUP. */
size_t clrt__gemm_k_max(const clrt_device *d);

/* The common case: one product on whole row-major buffers, leading
 * dimensions the row lengths, alpha 1:
 *   C [m,n] = op(A) op(B) + beta C, op() transposing when trans_x is nonzero. */
clrt_status clrt__gemm_whole(clrt_device *d, int trans_a, int trans_b, size_t m, size_t n, size_t k,
                             cl_mem a, cl_mem b, float beta, cl_mem c);

/* The two paths, called by clrt__gemm after it has checked the arguments
 * (leading dims, buffer bounds) and skipped empty products (m, n or batch
 * zero). k may be zero: then C = beta * C. */
clrt_status clrt__gemm_clblast(clrt_device *d, const clrt__gemm_args *g);
/* Held around every CLBlast call, process-wide: CLBlast 1.5 (Debian 12's)
 * stores kernels in its cache without a lock, so that calls from several
 * threads on several devices fail (CLBlast issue 486, fixed in 1.6.1 by
 * its pull request 495). CLBlast calls only enqueue, so the lock is held
 * for microseconds, apart from a kernel's first compile. */
extern pthread_mutex_t clrt__clblast_lock;
/* Before d's first CLBlast GEMM, with clrt__clblast_lock held: hands CLBlast
 * the parameters clrt's tuning store holds for d (gemm_clblast_tuning.c),
 * once. CLRT_OK, or (at this and every later GEMM on d) the error naming
 * stored parameters that cannot be used. */
clrt_status clrt__clblast_stored_locked(const clrt_device *d);
/* 1 when float32 values for CLBlast's kernel ("Xgemm", "XgemmDirect") on
 * d break CLBlast's constraints or d's limits (gemm_clblast_check.c), with
 * the first problem in why; 0 when they hold, or for another kernel, or
 * when a name is missing (CLBlast refuses that set itself). */
int clrt__clblast_values_bad(const clrt_device *d, const char *kernel, int n,
                             const char *const *names, const size_t *values, char *why, size_t cap);
/* For the message of a CLBlast call that failed on d: "; with clrt's stored
 * parameters ..." naming those in use, or "" when none are. Takes the lock. */
void clrt__clblast_tuning_note(const clrt_device *d, char *out, size_t cap);
/* clrt's own kernels (gemm_cpu.c, clkernels/gemm_cpu.cl), if they take g
 * on d (CLRT_GEMM=kernel: every product; auto: on CPU-style devices, the
 * products with enough tiles to keep the device's cores busy): *taken 1
 * and the product enqueued, or its error (CLRT_ENOTSUP when its sizes
 * exceed the kernels' int range or the driver's loop limit); else *taken
 * 0, nothing enqueued, CLRT_OK. Their tile is the record of
 * clrt__gemm_cpu_family in the tuning store, else chosen from the
 * device's vector width and registers. */
clrt_status clrt__gemm_cpu(clrt_device *d, const clrt__gemm_args *g, int *taken);
extern const clrt__kfamily clrt__gemm_cpu_family;
/* The tile (mr, nv) without a record: from d's vector registers. */
void clrt__gemm_cpu_default_tile(const clrt_device *d, int tile[2]);
/* ENOTSUP when built without CLRT_HAVE_HOST_BLAS. */
clrt_status clrt__gemm_host_blas(clrt_device *d, const clrt__gemm_args *g);
/* Warns once per process, on stderr, when OpenBLAS runs kernels this CPU
 * outclasses (host_blas.c). */
void clrt__host_blas_warn_once(void);
/* Called before the first host GEMM of a process that has two or more
 * devices running them: every GEMM then runs on OpenBLAS's calling thread
 * alone (host_blas.c says why and when not). */
void clrt__host_blas_share_cores(void);

/* torch.matmul's products (matmul.c). The batch dims (all but the last
 * two) of shapes sa (nda dims) and sb (ndb dims, both >= 2) broadcast into
 * (*nb, batch): CLRT_OK, or CLRT_ESHAPE without an error set. */
clrt_status clrt__matmul_batch(int nda, const int64_t *sa, int ndb, const int64_t *sb, int *nb,
                               int64_t *batch);
/* op(a) op(b) for float32 a, b of >= 2 dims, op() transposing the last two
 * when ta / tb, the batch dims broadcast (checked by the caller): a new
 * [batch..., m, n] tensor, or NULL + error. One strided-batched GEMM;
 * operands broadcast along some batch dims only are copied out first. */
clrt_tensor *clrt__bmm(clrt_tensor *a, int ta, clrt_tensor *b, int tb);
/* The shapes matmul multiplies for a and b (>= 1 dim each): a 1-D a as
 * [1, k], a 1-D b as [k, 1], others as they are. */
void clrt__matmul_views(const clrt_tensor *a, const clrt_tensor *b, int *nda, int64_t *sa, int *ndb,
                        int64_t *sb);

/* clrt_matmul's backward rule (gemm_grad.c). */
#include "runtime/ops/op_table.h"
clrt_status clrt__matmul_backward(const clrt__grad_ctx *c, clrt_tensor *g, clrt_tensor **grad_in);

#endif
