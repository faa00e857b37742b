/* GEMM: clrt_matmul, clrt_matmul_out, clrt_gemm and the internal
 * clrt__gemm against a float64 reference on fresh random inputs in [-1, 1).
 *
 * ctest runs this suite twice on the CPU device (tests/gemm/CMakeLists.txt):
 * test_gemm on the default path (host BLAS when the build has it) and
 * test_gemm_clblast with CLRT_GEMM=clblast; test_path_active checks which.
 *
 * Error bound: |got - ref| <= (k + 2) * FLT_EPSILON * scale, where scale is
 * the largest |alpha| * sum_p |a_ip * b_pj| + |beta * c_ij| of the product.
 * That is the worst case of float32 summation in any order (gamma_k), so
 * neither BLAS can exceed it, while a wrong or missing term costs about
 * scale / k, far above it. */
#include "testutil.h"

#include "clrt_test_gemm_config.h"
#include "runtime/device/command_internal.h"
#include "runtime/device/host_ptr_internal.h"
#include "runtime/device/idle_internal.h"
#include "runtime/ops/gemm/gemm_internal.h"

#include <float.h>
#include <math.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>

/* One product: op(a) [m,k] x op(b) [k,n]; batch_x = 0 means x is 2-D. */
typedef struct {
    int64_t batch_a, batch_b, m, n, k;
    int ta, tb;
    float alpha, beta;
} gemm_case;

static uint64_t rng;

static int64_t case_batch(const gemm_case *g)
{
    return g->batch_a > g->batch_b ? g->batch_a : g->batch_b > 0 ? g->batch_b : 1;
}

static int case_batched(const gemm_case *g) { return g->batch_a > 0 || g->batch_b > 0; }

/* The stored shape of an operand: [batch?, rows, cols]; returns ndim. */
static int stored_shape(int64_t batch, int64_t rows, int64_t cols, int64_t *shape)
{
    int n = 0;
    if (batch > 0)
        shape[n++] = batch;
    shape[n++] = rows;
    shape[n++] = cols;
    return n;
}

static double op_a(const gemm_case *g, const float *a, int64_t i, int64_t p)
{
    return g->ta ? a[p * g->m + i] : a[i * g->k + p];
}

static double op_b(const gemm_case *g, const float *b, int64_t p, int64_t j)
{
    return g->tb ? b[j * g->k + p] : b[p * g->n + j];
}

/* ref = alpha * op(a) op(b) + beta * c0 in float64; returns the scale of
 * the error bound (see the top of the file). c0 may be NULL (beta = 0). */
static double reference(const gemm_case *g, const float *a, const float *b, const float *c0,
                        double *ref)
{
    double scale = 0;
    for (int64_t bi = 0; bi < case_batch(g); bi++) {
        const float *ai = a + (g->batch_a > 1 ? bi * g->m * g->k : 0);
        const float *bb = b + (g->batch_b > 1 ? bi * g->k * g->n : 0);
        for (int64_t i = 0; i < g->m; i++)
            for (int64_t j = 0; j < g->n; j++) {
                double sum = 0, abs_sum = 0;
                for (int64_t p = 0; p < g->k; p++) {
                    double t = op_a(g, ai, i, p) * op_b(g, bb, p, j);
                    sum += t;
                    abs_sum += fabs(t);
                }
                int64_t idx = (bi * g->m + i) * g->n + j;
                double cv = c0 && g->beta != 0 ? c0[idx] : 0;
                ref[idx] = g->alpha * sum + g->beta * cv;
                double s = fabs(g->alpha) * abs_sum + fabs(g->beta * cv);
                scale = s > scale ? s : scale;
            }
    }
    return scale;
}

static clrt_tensor *upload(const float *x, int ndim, const int64_t *shape)
{
    return TU_NONNULL(clrt_from_host(tu_device(), CLRT_F32, ndim, shape, x));
}

static size_t count(int ndim, const int64_t *shape)
{
    size_t n = 1;
    for (int i = 0; i < ndim; i++)
        n *= (size_t)shape[i];
    return n;
}

static void describe(const gemm_case *g, char *buf, size_t cap)
{
    snprintf(buf, cap, "batch a %lld b %lld, m %lld n %lld k %lld, ta %d tb %d, alpha %g beta %g",
             (long long)g->batch_a, (long long)g->batch_b, (long long)g->m, (long long)g->n,
             (long long)g->k, g->ta, g->tb, (double)g->alpha, (double)g->beta);
}

static void check_result(const gemm_case *g, const clrt_tensor *c, const double *ref, double scale)
{
    char what[160];
    describe(g, what, sizeof what);
    size_t n = (size_t)(case_batch(g) * g->m * g->n);
    ck_assert_int_eq(clrt_tensor_numel(c), (int64_t)n);
    float *got = tu_read(c);
    double err = tu_rel_err(got, ref, n, scale > 0 ? scale : 1.0);
    double bound = (double)(g->k + 2) * FLT_EPSILON;
    ck_assert_msg(err <= bound, "%s: relative error %.3g > bound %.3g", what, err, bound);
    free(got);
}

/* Runs one case through clrt_matmul (when use_matmul; needs no transpose,
 * alpha 1, beta 0) or clrt_gemm into a c pre-filled with random values (or
 * left poisoned, NaN, when beta is 0), and checks it. */
static void run_case(const gemm_case *g, int use_matmul)
{
    int64_t sa[3], sb[3], sc[3];
    int na = stored_shape(g->batch_a, g->ta ? g->k : g->m, g->ta ? g->m : g->k, sa);
    int nb = stored_shape(g->batch_b, g->tb ? g->n : g->k, g->tb ? g->k : g->n, sb);
    int nc = stored_shape(case_batched(g) ? case_batch(g) : 0, g->m, g->n, sc);
    float *ha = tu_random_floats(&rng, count(na, sa), -1, 1);
    float *hb = tu_random_floats(&rng, count(nb, sb), -1, 1);
    float *hc = tu_random_floats(&rng, count(nc, sc), -1, 1);
    double *ref = malloc((count(nc, sc) + 1) * sizeof *ref);
    clrt_tensor *a = upload(ha, na, sa), *b = upload(hb, nb, sb), *c;
    if (use_matmul) {
        c = TU_NONNULL(clrt_matmul(a, b));
        ck_assert_int_eq(clrt_tensor_ndim(c), nc);
    } else {
        c = g->beta != 0 ? upload(hc, nc, sc)
                         : TU_NONNULL(clrt_empty(tu_device(), CLRT_F32, nc, sc));
        TU_OK(clrt_gemm(c, (clrt_trans)g->ta, (clrt_trans)g->tb, g->alpha, a, b, g->beta));
    }
    double scale = reference(g, ha, hb, use_matmul ? NULL : hc, ref);
    check_result(g, c, ref, scale);
    clrt_tensor_release(a);
    clrt_tensor_release(b);
    clrt_tensor_release(c);
    free(ha);
    free(hb);
    free(hc);
    free(ref);
}

static void setup(void) { rng = tu_seed() ^ 0x6A09E667F3BCC908ULL; }

/* --- the path under test --- */

START_TEST(test_path_active)
{
    clrt_device_info info;
    TU_OK(clrt_device_info_get(tu_device(), &info));
    const char *choice = getenv("CLRT_GEMM");
    int want_clblast = choice && strcmp(choice, "clblast") == 0;
    clrt_gemm_path want = CLRT_GEMM_CLBLAST;
    if (CLRT_TEST_HAVE_HOST_BLAS && !want_clblast && info.kind == CLRT_DEVICE_CPU &&
        info.unified_memory && info.native_kernels)
        want = CLRT_GEMM_HOST_BLAS;
    ck_assert_msg(info.gemm_path == want, "%s uses %s, expected %s", info.name,
                  clrt_gemm_path_str(info.gemm_path), clrt_gemm_path_str(want));
    fprintf(stderr, "GEMM path on %s: %s\n", info.name, clrt_gemm_path_str(info.gemm_path));
    ck_assert_str_eq(clrt_gemm_path_str(CLRT_GEMM_CLBLAST), "clblast");
    ck_assert_str_eq(clrt_gemm_path_str(CLRT_GEMM_HOST_BLAS), "host-blas");
}
END_TEST

/* --- correctness --- */

START_TEST(test_matmul_sizes)
{
    /* {m, k, n}: ones, primes, non-multiples of any work-group size, large. */
    const int64_t sizes[][3] = {
        {1, 1, 1},    {1, 7, 1},
        {7, 1, 13},   {7, 13, 31},
        {31, 7, 13},  {13, 31, 7},
        {65, 33, 17}, {TU_SIZED(257, 130), TU_SIZED(129, 65), TU_SIZED(193, 97)}};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        gemm_case g = {0, 0, sizes[i][0], sizes[i][2], sizes[i][1], 0, 0, 1.0f, 0.0f};
        run_case(&g, 1);
    }
}
END_TEST

START_TEST(test_gemm_transposes_alpha_beta)
{
    static const float ab[][2] = {{1.0f, 0.0f}, {-0.75f, 0.0f}, {1.5f, 0.5f}, {0.5f, -1.25f}};
    static const int64_t sizes[][3] = {{7, 13, 31}, {31, 1, 13}, {1, 17, 1}};
    for (int t = 0; t < 4; t++)
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
            for (size_t v = 0; v < sizeof ab / sizeof ab[0]; v++) {
                gemm_case g = {0,           0,     sizes[s][0],  sizes[s][2],
                               sizes[s][1], t & 1, (t >> 1) & 1, ab[v][0],
                               ab[v][1]};
                run_case(&g, 0);
            }
}
END_TEST

START_TEST(test_gemm_large_transposed)
{
    gemm_case g = {0,    0,   TU_SIZED(257, 130), TU_SIZED(193, 97), TU_SIZED(129, 65), 1, 1,
                   0.5f, 2.0f};
    run_case(&g, 0);
}
END_TEST

START_TEST(test_batched)
{
    /* {batch_a, batch_b}: both 3-D, and a 2-D or batch-1 operand shared by
     * the batch. */
    static const int64_t batches[][2] = {{3, 3}, {5, 0}, {0, 4}, {1, 1}, {1, 3}, {2, 1}};
    for (size_t i = 0; i < sizeof batches / sizeof batches[0]; i++) {
        gemm_case mm = {batches[i][0], batches[i][1], 13, 5, 7, 0, 0, 1.0f, 0.0f};
        run_case(&mm, 1);
        for (int t = 0; t < 4; t++) {
            gemm_case g = {batches[i][0], batches[i][1], 7,     31,   13,
                           t & 1,         (t >> 1) & 1,  -1.5f, 0.25f};
            run_case(&g, 0);
        }
    }
}
END_TEST

/* clrt's kernels for CPUs (CLRT_GEMM=kernel on this device) with every
 * tile the tuner may store: transposes, tails in rows and columns, a
 * single row tile, batches sharing an operand, alpha and beta. A tile
 * the device cannot hold (mr=6, or more accumulators than registers) is
 * refused by name and the default runs. */
START_TEST(test_kernel_tiles)
{
    static const int tiles[][2] = {{2, 1}, {4, 1},  {4, 3}, {8, 1},
                                   {8, 2}, {16, 1}, {6, 2}, {16, 4}};
    static const gemm_case cases[] = {{0, 0, 37, 45, 19, 0, 0, 1.0f, 0.0f},
                                      {0, 0, 37, 45, 19, 1, 1, -0.5f, 1.5f},
                                      {0, 0, 3, 70, 33, 1, 0, 1.0f, 0.0f},
                                      {3, 0, 21, 16, 9, 0, 1, 1.0f, 0.25f},
                                      {0, 2, 21, 40, 9, 1, 0, 2.0f, 0.0f}};
    clrt_device *d = tu_device();
    TU_OK(clrt__device_open(d));
    clrt__gemm_choice saved = d->gemm_choice;
    d->gemm_choice = CLRT__GEMM_KERNEL;
    for (size_t t = 0; t < sizeof tiles / sizeof tiles[0]; t++) {
        char why[160];
        if (clrt__gemm_cpu_family.check(d, tiles[t], why, sizeof why))
            ck_assert_msg(strstr(why, "mr=") != NULL, "refusal names the tile: %s", why);
        clrt__kparams_try(&clrt__gemm_cpu_family, tiles[t]);
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
            run_case(&cases[c], 0);
        clrt__kparams_try(NULL, NULL);
    }
    d->gemm_choice = saved;
}
END_TEST

START_TEST(test_matmul_out)
{
    int64_t sa[2] = {9, 11}, sb[2] = {11, 5}, so[2] = {9, 5};
    float *ha = tu_random_floats(&rng, 99, -1, 1), *hb = tu_random_floats(&rng, 55, -1, 1);
    clrt_tensor *a = upload(ha, 2, sa), *b = upload(hb, 2, sb);
    clrt_tensor *out = TU_NONNULL(clrt_full(tu_device(), CLRT_F32, 2, so, NAN));
    TU_OK(clrt_matmul_out(out, a, b));
    gemm_case g = {0, 0, 9, 5, 11, 0, 0, 1.0f, 0.0f};
    double ref[45];
    check_result(&g, out, ref, reference(&g, ha, hb, NULL, ref));
    clrt_tensor_release(a);
    clrt_tensor_release(b);
    clrt_tensor_release(out);
    free(ha);
    free(hb);
}
END_TEST

/* k = 0: the product is empty, so c = beta * c (zeros for matmul, whose
 * output starts as NaN); m = 0 or n = 0: nothing to do. */
START_TEST(test_empty_dims)
{
    gemm_case k0 = {0, 0, 3, 4, 0, 0, 0, 1.0f, 0.0f};
    run_case(&k0, 1);
    gemm_case k0_beta = {2, 2, 3, 4, 0, 1, 0, 2.0f, 0.5f};
    run_case(&k0_beta, 0);
    int64_t sa[2] = {0, 5}, sb[2] = {5, 3};
    clrt_tensor *a = TU_NONNULL(clrt_zeros(tu_device(), CLRT_F32, 2, sa));
    clrt_tensor *b = TU_NONNULL(clrt_ones(tu_device(), CLRT_F32, 2, sb));
    clrt_tensor *c = TU_NONNULL(clrt_matmul(a, b));
    ck_assert_int_eq(clrt_tensor_shape(c)[0], 0);
    ck_assert_int_eq(clrt_tensor_shape(c)[1], 3);
    TU_OK(clrt_device_synchronize(tu_device()));
    clrt_tensor_release(a);
    clrt_tensor_release(b);
    clrt_tensor_release(c);
}
END_TEST

/* a and b may be one tensor: c = a^T a. */
START_TEST(test_inputs_may_alias)
{
    int64_t sa[2] = {13, 6}, sc[2] = {6, 6};
    float *ha = tu_random_floats(&rng, 78, -1, 1);
    clrt_tensor *a = upload(ha, 2, sa);
    clrt_tensor *c = TU_NONNULL(clrt_empty(tu_device(), CLRT_F32, 2, sc));
    TU_OK(clrt_gemm(c, CLRT_TRANS, CLRT_NO_TRANS, 1.0f, a, a, 0.0f));
    gemm_case g = {0, 0, 6, 6, 13, 1, 0, 1.0f, 0.0f};
    double ref[36];
    check_result(&g, c, ref, reference(&g, ha, ha, NULL, ref));
    clrt_tensor_release(a);
    clrt_tensor_release(c);
    free(ha);
}
END_TEST

/* clrt__gemm on sub-matrices: offsets, leading dims wider than the rows,
 * batch strides with gaps, b shared by the batch (stride 0), and c in the
 * same buffer as a, after it. Elements outside c's sub-matrices must keep
 * their values. */
START_TEST(test_internal_strided)
{
    enum { M = 5, N = 7, K = 3, B = 2, LDA = 4, LDB = 9, LDC = 8 };
    const size_t a_off = 2, stride_a = M * LDA + 3, b_off = 1, c_off = a_off + B * stride_a + 5;
    const size_t stride_c = M * LDC + 2, total = c_off + B * stride_c, b_total = b_off + K * LDB;
    float *buf = tu_random_floats(&rng, total, -1, 1), *hb = tu_random_floats(&rng, b_total, -1, 1);
    int64_t s1[1] = {(int64_t)total}, s2[1] = {(int64_t)b_total};
    clrt_tensor *t = upload(buf, 1, s1), *tb = upload(hb, 1, s2);
    clrt__gemm_args g = {.m = M,
                         .n = N,
                         .k = K,
                         .alpha = 1.0f,
                         .beta = 0.0f,
                         .a = clrt__mem(t),
                         .b = clrt__mem(tb),
                         .c = clrt__mem(t),
                         .a_off = a_off,
                         .b_off = b_off,
                         .c_off = c_off,
                         .lda = LDA,
                         .ldb = LDB,
                         .ldc = LDC,
                         .batch = B,
                         .stride_a = stride_a,
                         .stride_b = 0,
                         .stride_c = stride_c};
    TU_OK(clrt__gemm(tu_device(), &g));
    float *got = tu_read(t);
    double *want = malloc(total * sizeof *want);
    for (size_t i = 0; i < total; i++)
        want[i] = buf[i];
    for (size_t bi = 0; bi < B; bi++)
        for (size_t i = 0; i < M; i++)
            for (size_t j = 0; j < N; j++) {
                double sum = 0;
                for (size_t p = 0; p < K; p++)
                    sum +=
                        (double)buf[a_off + bi * stride_a + i * LDA + p] * hb[b_off + p * LDB + j];
                want[c_off + bi * stride_c + i * LDC + j] = sum;
            }
    double err = tu_rel_err(got, want, total, 1.0);
    ck_assert_msg(err <= (K + 2) * FLT_EPSILON * K, "strided GEMM: error %.3g", err);
    clrt_tensor_release(t);
    clrt_tensor_release(tb);
    free(buf);
    free(hb);
    free(got);
    free(want);
}
END_TEST

/* k = 0 on strided sub-matrices: c = beta * c, and for beta 0 c = 0 even
 * where it held NaN; the gaps between rows and matrices keep their values. */
enum { K0_M = 3, K0_N = 4, K0_B = 2, K0_LDC = 6, K0_STRIDE = 20, K0_OFF = 1 };
enum { K0_TOTAL = K0_OFF + K0_B * K0_STRIDE };

static int k0_in_c(int i)
{
    int r = (i - K0_OFF) % K0_STRIDE;
    return i >= K0_OFF && r < K0_M * K0_LDC && r % K0_LDC < K0_N;
}

static void k0_pass(clrt_tensor *c, const float *before, float beta)
{
    int64_t s1[1] = {1};
    clrt_tensor *empty = TU_NONNULL(clrt_zeros(tu_device(), CLRT_F32, 1, s1));
    clrt__gemm_args g = {.m = K0_M,
                         .n = K0_N,
                         .k = 0,
                         .alpha = 1.0f,
                         .beta = beta,
                         .a = clrt__mem(empty),
                         .b = clrt__mem(empty),
                         .c = clrt__mem(c),
                         .c_off = K0_OFF,
                         .lda = 1,
                         .ldb = K0_N,
                         .ldc = K0_LDC,
                         .batch = K0_B,
                         .stride_c = K0_STRIDE};
    TU_OK(clrt__gemm(tu_device(), &g));
    double want[K0_TOTAL];
    for (int i = 0; i < K0_TOTAL; i++)
        want[i] = k0_in_c(i) ? (beta == 0.0f ? 0.0 : (double)beta * before[i]) : before[i];
    float *got = tu_read(c);
    ck_assert_msg(tu_rel_err(got, want, K0_TOTAL, 1.0) <= FLT_EPSILON, "k = 0, beta %g wrong",
                  (double)beta);
    free(got);
    clrt_tensor_release(empty);
}

START_TEST(test_internal_k0_strided)
{
    int64_t s[1] = {K0_TOTAL};
    float *buf = tu_random_floats(&rng, K0_TOTAL, -1, 1);
    clrt_tensor *c = upload(buf, 1, s);
    k0_pass(c, buf, 0.5f);
    for (int i = 0; i < K0_TOTAL; i++)
        buf[i] = k0_in_c(i) ? NAN : buf[i];
    TU_OK(clrt_copy_from_host(c, buf, sizeof buf[0] * K0_TOTAL));
    k0_pass(c, buf, 0.0f);
    free(buf);
    clrt_tensor_release(c);
}
END_TEST

/* An op must only enqueue: with the queue stalled behind a user event the
 * calls return (a blocking call would hang until the test times out), and
 * the results are right once the event is released, even though the inputs
 * were released before the work ran. */
START_TEST(test_never_blocks)
{
    clrt_device *d = tu_device();
    gemm_case warm = {0, 0, 3, 3, 3, 0, 0, 1.0f, 0.0f};
    run_case(&warm, 1); /* builds CLBlast's kernels first: that may block */
    const int n = TU_SIZED(300, 96), nn = n * n;
    int64_t s[2] = {n, n};
    float *ha = tu_random_floats(&rng, nn, -1, 1), *hb = tu_random_floats(&rng, nn, -1, 1);
    clrt_tensor *a = upload(ha, 2, s), *b = upload(hb, 2, s);
    cl_int err;
    cl_event gate = clCreateUserEvent(d->ctx, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    TU_OK(clrt__barrier(d, CLRT__COMPUTE, gate, "test gate")); /* seen as queued work */
    clrt_tensor *c = TU_NONNULL(clrt_matmul(a, b));
    TU_OK(clrt_gemm(c, CLRT_TRANS, CLRT_TRANS, 0.5f, a, b, 0.5f));
    cl_int state = 0;
    ck_assert_int_eq(
        clGetEventInfo(gate, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof state, &state, NULL),
        CL_SUCCESS);
    ck_assert_int_eq(state, CL_SUBMITTED);
    clrt_tensor_release(a);
    clrt_tensor_release(b);
    ck_assert_int_eq(clSetUserEventStatus(gate, CL_COMPLETE), CL_SUCCESS);
    clReleaseEvent(gate);
    /* c = 0.5 * a^T b^T + 0.5 * (a b) */
    gemm_case g1 = {0, 0, n, n, n, 0, 0, 1.0f, 0.0f};
    gemm_case g2 = {0, 0, n, n, n, 1, 1, 0.5f, 0.5f};
    double *ab = malloc(nn * sizeof *ab), *ref = malloc(nn * sizeof *ref);
    float *abf = malloc(nn * sizeof *abf);
    double scale1 = reference(&g1, ha, hb, NULL, ab);
    for (int i = 0; i < nn; i++)
        abf[i] = (float)ab[i];
    double scale = reference(&g2, ha, hb, abf, ref) + 0.5 * scale1;
    check_result(&g2, c, ref, scale);
    clrt_tensor_release(c);
    free(ha);
    free(hb);
    free(ab);
    free(abf);
    free(ref);
}
END_TEST

/* CLBlast's own parameters (nothing is stored in this suite's cache
 * folder; test_clblast_tuning tests stored ones), then parameters of our
 * own: products through both of CLBlast's GEMM kernels stay right after
 * clrt_clblast_override (on the CLBlast path; the host-BLAS path ignores
 * them), which clrt reports as no tuning of its own. The values are valid
 * settings away from CLBlast's defaults. The
 * sizes here are below CLBlast's threshold for its indirect kernel (Xgemm
 * with its copy, pad and transpose helpers), so they run once more with the
 * threshold (GemmRoutine's XGEMM_MIN_INDIRECT_SIZE) at 1: otherwise that
 * kernel, which large products take on GPUs, would run in no test. */
START_TEST(test_clblast_tuning_and_override)
{
    clrt_device *d = tu_device();
    clrt_clblast_tuning t = clrt_clblast_tuning_of(d);
    ck_assert_msg(t == CLRT_CLBLAST_BUILT_IN, "%s: %s", clrt_clblast_tuning_str(t),
                  clrt_last_error());
    TU_OK(clrt_clblast_override(d, "XgemmDirect",
                                "WGD=16 MDIMCD=8 NDIMCD=8 MDIMAD=8 NDIMBD=8 KWID=2 VWMD=2 "
                                "VWND=1 PADA=1 PADB=0"));
    TU_OK(clrt_clblast_override(d, "Xgemm",
                                "GEMMK=0 MWG=16 NWG=16 KWG=32 MDIMC=8 NDIMC=8 MDIMA=8 NDIMB=8 "
                                "KWI=2 VWM=1 VWN=1 STRM=0 STRN=0 SA=0 SB=0 KREG=1 PRECISION=32"));
    /* The last size is a multiple of every tile: CLBlast copies without padding. */
    const int64_t sizes[][3] = {
        {7, 13, 31}, {65, 33, 17}, {TU_SIZED(257, 130), 64, 96}, {64, 64, 64}};
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1)
            TU_OK(clrt_clblast_override(d, "GemmRoutine", "XGEMM_MIN_INDIRECT_SIZE=1"));
        for (int i = 0; i < 4; i++) {
            gemm_case g = {0, 0, sizes[i][0], sizes[i][2], sizes[i][1], i & 1, pass, 1.0f, 0.0f};
            run_case(&g, 0);
        }
    }
    gemm_case batched = {3, 3, 13, 5, 7, 1, 0, -1.5f, 0.25f}; /* XgemmStridedBatched */
    run_case(&batched, 0);
    ck_assert_int_eq(clrt_clblast_tuning_of(d), CLRT_CLBLAST_BUILT_IN);
    ck_assert_int_eq(clrt_clblast_override(d, "Xgemm", "KWG=32 MWG"), CLRT_EINVAL);
    tu_assert_error(CLRT_EINVAL, "not NAME=VALUE pairs", NULL);
    ck_assert_int_eq(clrt_clblast_override(d, "NoSuchKernel", "KWG=32"), CLRT_EINVAL);
    tu_assert_error(CLRT_EINVAL, "CLBlast refused", "NoSuchKernel", "KWG=32", NULL);
    ck_assert_int_eq(clrt_clblast_override(NULL, "Xgemm", "KWG=32"), CLRT_EINVAL);
}
END_TEST

/* --- bad input: clear errors, nothing lost --- */

static clrt_tensor *filled(int ndim, const int64_t *shape, double v)
{
    return TU_NONNULL(clrt_full(tu_device(), CLRT_F32, ndim, shape, v));
}

static void assert_all(const clrt_tensor *t, float v)
{
    float *x = tu_read(t);
    for (int64_t i = 0; i < clrt_tensor_numel(t); i++)
        ck_assert_msg(x[i] == v, "element %lld is %g, expected %g", (long long)i, (double)x[i],
                      (double)v);
    free(x);
}

START_TEST(test_bad_shapes)
{
    int64_t s23[2] = {2, 3}, s45[2] = {4, 5}, s3[1] = {3}, s234[3] = {2, 3, 4};
    int64_t s345[3] = {3, 4, 5}, s1234[4] = {1, 2, 3, 4}, s22[2] = {2, 2};
    clrt_tensor *a = filled(2, s23, 1), *b = filled(2, s45, 2), *v = filled(1, s3, 1);
    clrt_tensor *a3 = filled(3, s234, 1), *b3 = filled(3, s345, 1), *a4 = filled(4, s1234, 1);
    clrt_tensor *c = filled(2, s22, 7);
    ck_assert_ptr_null(clrt_matmul(a, b));
    tu_assert_error(CLRT_ESHAPE, "clrt_matmul", "[2, 3]", "[4, 5]", "3 vs 4", NULL);
    clrt_tensor *av = TU_NONNULL(clrt_matmul(a, v)); /* torch.matmul: a column */
    ck_assert_int_eq(clrt_tensor_ndim(av), 1);
    ck_assert_int_eq(clrt_tensor_shape(av)[0], 2);
    assert_all(av, 3);
    clrt_tensor_release(av);
    ck_assert_ptr_null(clrt_matmul(v, a));
    tu_assert_error(CLRT_ESHAPE, "clrt_matmul", "[3]", "[2, 3]", "3 vs 2", NULL);
    ck_assert_ptr_null(clrt_matmul(a4, a));
    tu_assert_error(CLRT_ESHAPE, "[1, 2, 3, 4]", NULL);
    ck_assert_ptr_null(clrt_matmul(a3, b3));
    tu_assert_error(CLRT_ESHAPE, "batch dims", "do not broadcast", "[2, 3, 4]", "[3, 4, 5]", NULL);
    ck_assert_int_eq(clrt_gemm(c, CLRT_TRANS, CLRT_NO_TRANS, 1.0f, a, a, 0.0f), CLRT_ESHAPE);
    tu_assert_error(CLRT_ESHAPE, "clrt_gemm", "[2, 2]", "[3, 3]", NULL);
    ck_assert_int_eq(clrt_gemm(c, CLRT_NO_TRANS, CLRT_TRANS, 1.0f, a, b, 0.0f), CLRT_ESHAPE);
    tu_assert_error(CLRT_ESHAPE, "(transposed)", "3 vs 5", NULL);
    ck_assert_int_eq(clrt_matmul_out(c, a, a), CLRT_ESHAPE);
    tu_assert_error(CLRT_ESHAPE, "clrt_matmul_out", "[2, 3]", NULL);
    assert_all(c, 7); /* untouched */
    assert_all(a, 1);
    ck_assert_int_eq(clrt_tensor_refcount(a), 1);
    clrt_tensor *ts[] = {a, b, v, a3, b3, a4, c};
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++)
        clrt_tensor_release(ts[i]);
}
END_TEST

START_TEST(test_bad_dtype_and_null)
{
    int64_t s[2] = {3, 3};
    clrt_tensor *f = filled(2, s, 1), *out = filled(2, s, 4);
    clrt_tensor *i32 = TU_NONNULL(clrt_zeros(tu_device(), CLRT_I32, 2, s));
    ck_assert_ptr_null(clrt_matmul(f, i32));
    tu_assert_error(CLRT_EDTYPE, "clrt_matmul", "b must be float32", "int32", NULL);
    ck_assert_int_eq(clrt_matmul_out(i32, f, f), CLRT_EDTYPE);
    tu_assert_error(CLRT_EDTYPE, "out must be float32", "int32", NULL);
    ck_assert_int_eq(clrt_gemm(out, CLRT_NO_TRANS, CLRT_NO_TRANS, 1.0f, i32, f, 0.0f), CLRT_EDTYPE);
    tu_assert_error(CLRT_EDTYPE, "clrt_gemm", "a must be float32", NULL);
    ck_assert_ptr_null(clrt_matmul(NULL, f));
    tu_assert_error(CLRT_EINVAL, "clrt_matmul", "NULL", NULL);
    ck_assert_int_eq(clrt_gemm(NULL, CLRT_NO_TRANS, CLRT_NO_TRANS, 1.0f, f, f, 0.0f), CLRT_EINVAL);
    ck_assert_int_eq(clrt_gemm(out, (clrt_trans)2, CLRT_NO_TRANS, 1.0f, f, f, 0.0f), CLRT_EINVAL);
    tu_assert_error(CLRT_EINVAL, "clrt_gemm", "trans_a 2", "CLRT_TRANS", NULL);
    assert_all(out, 4);
    clrt_tensor_release(f);
    clrt_tensor_release(out);
    clrt_tensor_release(i32);
}
END_TEST

START_TEST(test_output_alias_rejected)
{
    int64_t s[2] = {4, 4}, flat[1] = {16};
    clrt_tensor *a = filled(2, s, 1), *b = filled(2, s, 2);
    clrt_tensor *view = TU_NONNULL(clrt_reshape(b, 1, flat));
    clrt_tensor *b_again = TU_NONNULL(clrt_reshape(view, 2, s));
    ck_assert_int_eq(clrt_matmul_out(a, a, b), CLRT_EINVAL);
    tu_assert_error(CLRT_EINVAL, "clrt_matmul_out", "out must not share storage with a", NULL);
    ck_assert_int_eq(clrt_gemm(b_again, CLRT_NO_TRANS, CLRT_NO_TRANS, 1.0f, a, b, 1.0f),
                     CLRT_EINVAL);
    tu_assert_error(CLRT_EINVAL, "clrt_gemm", "must not share storage with b", NULL);
    assert_all(a, 1);
    assert_all(b, 2);
    clrt_tensor_release(a);
    clrt_tensor_release(b);
    clrt_tensor_release(view);
    clrt_tensor_release(b_again);
}
END_TEST

START_TEST(test_result_too_large)
{
    clrt_device_info info;
    TU_OK(clrt_device_info_get(tu_device(), &info));
    int64_t m = (int64_t)sqrt((double)info.max_alloc_bytes) + 1024;
    int64_t sa[2] = {m, 1}, sb[2] = {1, m};
    clrt_tensor *a = filled(2, sa, 1), *b = filled(2, sb, 1);
    ck_assert_ptr_null(clrt_matmul(a, b));
    tu_assert_error(CLRT_ENOMEM, "clrt_matmul", tu_fmt("largest allocation on %s", info.name),
                    NULL);
    clrt_tensor_release(a);
    clrt_tensor_release(b);
}
END_TEST

START_TEST(test_internal_bad_args)
{
    int64_t s[1] = {64};
    clrt_tensor *t = filled(1, s, 1), *u = filled(1, s, 3);
    clrt__gemm_args g = {.m = 4,
                         .n = 4,
                         .k = 4,
                         .alpha = 1.0f,
                         .a = clrt__mem(t),
                         .b = clrt__mem(t),
                         .c = clrt__mem(u),
                         .lda = 4,
                         .ldb = 4,
                         .ldc = 4,
                         .batch = 1};
    g.c_off = 60; /* 16 floats from 60 pass the 64-float buffer */
    ck_assert_int_eq(clrt__gemm(tu_device(), &g), CLRT_EINVAL);
    tu_assert_error(CLRT_EINVAL, "c (4 x 4", "runs past its buffer of 64 floats", NULL);
    g.c_off = 0;
    g.lda = 3;
    ck_assert_int_eq(clrt__gemm(tu_device(), &g), CLRT_EINVAL);
    tu_assert_error(CLRT_EINVAL, "lda=3", NULL);
    g.lda = 4;
    g.c = clrt__mem(t);
    g.c_off = 8; /* overlaps a and b at elements 0..15 */
    ck_assert_int_eq(clrt__gemm(tu_device(), &g), CLRT_EINVAL);
    tu_assert_error(CLRT_EINVAL, "overlaps", NULL);
    g.c = clrt__mem(u);
    g.c_off = 0;
    g.batch = 2;
    g.stride_c = 8;
    ck_assert_int_eq(clrt__gemm(tu_device(), &g), CLRT_EINVAL);
    tu_assert_error(CLRT_EINVAL, "stride_c 8", NULL);
    assert_all(u, 3);
    clrt_tensor_release(t);
    clrt_tensor_release(u);
}
END_TEST

/* With TEST_GEMM_RESTART set: restarts as clrt's programs do, then prints
 * the pool's size and the OPENBLAS_THREAD_TIMEOUT it loaded with. */
static int restart_child_main(char **argv)
{
    if (clrt_host_blas_restart(argv) != 0)
        return 1;
    const char *timeout = getenv("OPENBLAS_THREAD_TIMEOUT");
    printf("pool %d timeout %s\n", clrt_host_blas().pool_threads, timeout ? timeout : "unset");
    return 0;
}

/* One product on the CPU device, without the restart: prints "better X"
 * (or "better none") on stdout, and OpenBLAS's kernels warning, if due, on
 * stderr. */
static int child_main(char **argv)
{
    if (getenv("TEST_GEMM_RESTART"))
        return restart_child_main(argv);
    int64_t s[2] = {8, 8};
    clrt_device *d = clrt_cpu();
    clrt_tensor *a = d ? clrt_full(d, CLRT_F32, 2, s, 1.0) : NULL;
    clrt_tensor *c = a ? clrt_matmul(a, a) : NULL;
    float v[64] = {0};
    if (!c || clrt_to_host(c, v, sizeof v) != CLRT_OK || v[63] != 8.0f)
        return 1;
    clrt_tensor_release(a);
    clrt_tensor_release(c);
    const char *better = clrt_host_blas().better_core;
    printf("better %s\n", better ? better : "none");
    return 0;
}

/* Whether products run on the host's BLAS on a device with info: its path,
 * and clrt's kernels not forced on every product (CLRT_GEMM=kernel). The
 * small products of the tests below go to the host BLAS by default. */
static int host_blas_runs(const clrt_device_info *info)
{
    const char *choice = getenv("CLRT_GEMM");
    return info->gemm_path == CLRT_GEMM_HOST_BLAS && !(choice && strcmp(choice, "kernel") == 0);
}

/* main restarted this program (clrt_host_blas_restart, as clrt's programs
 * do) when OpenBLAS had picked its generic kernels: every product above ran
 * on the kernels it names now, and none better is left. A child that does
 * not restart warns, once, exactly when a better core exists, and not when
 * OPENBLAS_CORETYPE is set. */
START_TEST(test_host_blas_core)
{
    clrt_host_blas_info b = clrt_host_blas();
    clrt_device_info info;
    TU_OK(clrt_device_info_get(tu_device(), &info));
    if (!CLRT_TEST_HAVE_HOST_BLAS) {
        tu_skip("test_host_blas_core: clrt was built without a host BLAS (CLRT_HOST_BLAS=OFF or "
                "no OpenBLAS)");
        return;
    }
    if (!host_blas_runs(&info)) {
        tu_skip("test_host_blas_core: GEMM on %s (%s, %s) runs on %s, not the host's BLAS, which "
                "needs a CPU device with unified memory and native kernels, and CLRT_GEMM not "
                "clblast or kernel",
                info.name, info.model, info.platform, clrt_gemm_path_str(info.gemm_path));
        return;
    }
    ck_assert_ptr_nonnull(b.core);
    ck_assert_msg(b.better_core == NULL, "after the restart OpenBLAS still runs %s, not %s", b.core,
                  b.better_core);
    const char *forced = getenv("OPENBLAS_CORETYPE");
    if (forced)
        ck_assert_msg(strcasecmp(forced, b.core) == 0, "OPENBLAS_CORETYPE=%s but OpenBLAS runs %s",
                      forced, b.core);
    static char out[8192];
    const char *unset[] = {"OPENBLAS_CORETYPE", NULL};
    int status = tu_run_child(unset, 120, out, sizeof out);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child failed: %s", out);
    const char *line = strstr(out, "better ");
    ck_assert_ptr_nonnull(line);
    char better[32] = "";
    ck_assert_int_eq(sscanf(line, "better %31s", better), 1);
    const char *warning = strstr(out, "clrt: warning: OpenBLAS runs its generic");
    if (strcmp(better, "none") == 0) {
        ck_assert_msg(warning == NULL, "warned with no better core: %s", out);
        return;
    }
    char want[64];
    snprintf(want, sizeof want, "OPENBLAS_CORETYPE=%s", better);
    ck_assert_msg(warning && strstr(warning, want), "no warning naming %s: %s", want, out);
    ck_assert_msg(strstr(warning + 1, "clrt: warning: OpenBLAS") == NULL, "warned twice: %s", out);
    const char *with[] = {want, NULL}; /* "OPENBLAS_CORETYPE=<better>" */
    status = tu_run_child(with, 120, out, sizeof out);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child failed: %s", out);
    ck_assert_msg(strstr(out, "better none") && !strstr(out, "clrt: warning: OpenBLAS"),
                  "%s set: %s", want, out);
}
END_TEST

/* The restart shortens how long OpenBLAS's idle pool threads spin (2^18
 * TSC ticks, not its 2^28) where it runs a pool of its own, and leaves a
 * value the user set, or a serial build, alone; it restarts once. */
START_TEST(test_host_blas_restart_timeout)
{
    if (!CLRT_TEST_HAVE_HOST_BLAS) {
        tu_skip("test_host_blas_restart_timeout: clrt was built without a host BLAS");
        return;
    }
    static char out[4096];
    int pool = 0;
    char timeout[16] = "";
    const char *two[] = {"TEST_GEMM_RESTART=1", "OPENBLAS_NUM_THREADS=2", "OPENBLAS_THREAD_TIMEOUT",
                         NULL};
    int status = tu_run_child(two, 60, out, sizeof out);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child failed: %s", out);
    const char *line = strstr(out, "pool ");
    ck_assert_msg(line && sscanf(line, "pool %d timeout %15s", &pool, timeout) == 2, "%s", out);
    if (pool > 1)
        ck_assert_msg(strcmp(timeout, "18") == 0, "a pool of %d threads restarted with timeout %s",
                      pool, timeout);
    else
        ck_assert_msg(strcmp(timeout, "unset") == 0, "no pool, but timeout %s", timeout);
    const char *mine[] = {"TEST_GEMM_RESTART=1", "OPENBLAS_NUM_THREADS=2",
                          "OPENBLAS_THREAD_TIMEOUT=25", NULL};
    status = tu_run_child(mine, 60, out, sizeof out);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child failed: %s", out);
    ck_assert_msg(strstr(out, "timeout 25\n"),
                  "the user's OPENBLAS_THREAD_TIMEOUT was not kept: %s", out);
}
END_TEST

/* Host GEMM on an idle device whose operands' addresses are known runs on
 * the calling thread: C's memory holds the product as the call returns,
 * without any wait. Behind queued work it is enqueued instead: C's memory is
 * untouched (still NaN) until that work is done, then right. */
static void check_memory(const float *got, const double *ref, size_t n, double scale,
                         const char *what)
{
    double err = tu_rel_err(got, ref, n, scale > 0 ? scale : 1.0), bound = 7 * FLT_EPSILON;
    ck_assert_msg(err <= bound, "%s: relative error %.3g > bound %.3g", what, err, bound);
}

static void poison(float *mem, int n)
{
    for (int i = 0; i < n; i++)
        mem[i] = NAN;
}

START_TEST(test_host_gemm_on_calling_thread_when_idle)
{
    clrt_device *d = tu_device();
    clrt_device_info info;
    TU_OK(clrt_device_info_get(d, &info));
    TU_OK(clrt__device_open(d));
    if (!host_blas_runs(&info) || clrt__devices_opened() != 1) {
        tu_skip("test_host_gemm_on_calling_thread_when_idle: needs the host BLAS path and a "
                "single open device");
        return;
    }
    enum { N = 5, NN = N * N };
    int64_t s[2] = {N, N};
    gemm_case g = {0, 0, N, N, N, 0, 0, 1.0f, 0.0f};
    float *ha = tu_random_floats(&rng, NN, -1, 1), *hb = tu_random_floats(&rng, NN, -1, 1);
    double ref[NN];
    double scale = reference(&g, ha, hb, NULL, ref);
    clrt_tensor *a = upload(ha, 2, s), *b = upload(hb, 2, s), *c = TU_NONNULL(clrt_matmul(a, b));
    TU_OK(clrt_device_synchronize(d));
    float *mem = clrt__host_ptr_lookup(d, clrt__mem(c));
    ck_assert_ptr_nonnull(mem); /* recorded by the first GEMM */
    poison(mem, NN);            /* the device is idle: nothing else touches C */
    TU_OK(clrt_matmul_out(c, a, b));
    check_memory(mem, ref, NN, scale, "idle device, no wait");

    cl_int err;
    cl_event gate = clCreateUserEvent(d->ctx, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    poison(mem, NN);
    TU_OK(clrt__barrier(d, CLRT__COMPUTE, gate, "test gate"));
    TU_OK(clrt_matmul_out(c, a, b));
    for (int i = 0; i < NN; i++)
        ck_assert_msg(isnan(mem[i]), "a GEMM behind queued work ran before it");
    ck_assert_int_eq(clSetUserEventStatus(gate, CL_COMPLETE), CL_SUCCESS);
    clReleaseEvent(gate);
    TU_OK(clrt_device_synchronize(d));
    check_memory(mem, ref, NN, scale, "behind queued work, after it");
    clrt_tensor_release(a);
    clrt_tensor_release(b);
    clrt_tensor_release(c);
    free(ha);
    free(hb);
}
END_TEST

/* A host GEMM whose native command is handed buffer addresses other than
 * the recorded ones cannot run on them, and must not read as done: the
 * result's read, the device's synchronize and the next GEMM all fail,
 * naming why. The recorded address of A is replaced by a decoy (never
 * dereferenced: the GEMM compares it with what the driver hands over). */
START_TEST(test_host_gemm_not_run_is_reported)
{
    static float decoy[4];
    clrt_device *d = tu_device();
    clrt_device_info info;
    TU_OK(clrt_device_info_get(d, &info));
    if (!host_blas_runs(&info)) {
        tu_skip("test_host_gemm_not_run_is_reported: products do not run on the host BLAS");
        return;
    }
    int64_t s[2] = {5, 5};
    float *h = tu_random_floats(&rng, 25, -1, 1), got[25];
    clrt_tensor *a = upload(h, 2, s), *b = upload(h, 2, s);
    clrt_tensor *c = TU_NONNULL(clrt_matmul(a, b));
    TU_OK(clrt_to_host(c, got, sizeof got)); /* every address recorded */
    clrt__host_ptr_record(d, clrt__mem(a), decoy);
    /* Queued work ahead keeps the GEMM off the calling thread (gemm_host.c):
     * only a queued GEMM sees the addresses the driver hands over. */
    cl_int err;
    cl_event gate = clCreateUserEvent(d->ctx, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    TU_OK(clrt__barrier(d, CLRT__COMPUTE, gate, "test gate"));
    TU_OK(clrt_gemm(c, CLRT_NO_TRANS, CLRT_NO_TRANS, 1.0f, a, b, 0.0f)); /* only enqueued */
    ck_assert_int_eq(clSetUserEventStatus(gate, CL_COMPLETE), CL_SUCCESS);
    clReleaseEvent(gate);
    ck_assert_int_eq(clrt_to_host(c, got, sizeof got), CLRT_EOPENCL);
    tu_assert_error(CLRT_EOPENCL, "lost queued work", "host BLAS GEMM was not run", NULL);
    ck_assert_int_eq(clrt_device_synchronize(d), CLRT_EOPENCL);
    ck_assert_int_eq(clrt_gemm(c, CLRT_NO_TRANS, CLRT_NO_TRANS, 1.0f, a, b, 0.0f), CLRT_EOPENCL);
    clrt_tensor_release(a);
    clrt_tensor_release(b);
    clrt_tensor_release(c);
    free(h);
}
END_TEST

static Suite *gemm_suite(void)
{
    Suite *s = suite_create("gemm");
    TCase *ok = tu_tcase("correct");
    tcase_add_checked_fixture(ok, setup, NULL);
    tcase_set_timeout(ok, 300);
    tcase_add_test(ok, test_path_active);
    tcase_add_test(ok, test_matmul_sizes);
    tcase_add_test(ok, test_gemm_transposes_alpha_beta);
    tcase_add_test(ok, test_gemm_large_transposed);
    tcase_add_test(ok, test_batched);
    tcase_add_test(ok, test_kernel_tiles);
    tcase_add_test(ok, test_matmul_out);
    tcase_add_test(ok, test_empty_dims);
    tcase_add_test(ok, test_inputs_may_alias);
    tcase_add_test(ok, test_internal_strided);
    tcase_add_test(ok, test_internal_k0_strided);
    tcase_add_test(ok, test_never_blocks);
    tcase_add_test(ok, test_clblast_tuning_and_override);
    suite_add_tcase(s, ok);
    /* Only where GEMM runs on the host's BLAS (tu_skip elsewhere). */
    TCase *host = tu_tcase("host_blas");
    tcase_set_tags(host, TU_MAY_SKIP);
    tcase_add_checked_fixture(host, setup, NULL);
    tcase_set_timeout(host, 300);
    tcase_add_test(host, test_host_blas_core);
    tcase_add_test(host, test_host_blas_restart_timeout);
    tcase_add_test(host, test_host_gemm_on_calling_thread_when_idle);
    tcase_add_test(host, test_host_gemm_not_run_is_reported);
    suite_add_tcase(s, host);
    TCase *bad = tu_tcase("errors");
    tcase_add_checked_fixture(bad, setup, NULL);
    tcase_set_timeout(bad, 120);
    tcase_add_test(bad, test_bad_shapes);
    tcase_add_test(bad, test_bad_dtype_and_null);
    tcase_add_test(bad, test_output_alias_rejected);
    tcase_add_test(bad, test_result_too_large);
    tcase_add_test(bad, test_internal_bad_args);
    suite_add_tcase(s, bad);
    return s;
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "child") == 0)
        return child_main(argv);
    if (clrt_host_blas_restart(argv) != 0)
        return 1;
    return tu_run(gemm_suite());
}
