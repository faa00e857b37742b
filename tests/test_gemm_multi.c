/* GEMM on two devices (tu_device_pair; PoCL's two CPU devices by default):
 * mixing devices is an error naming both; products on both devices at once
 * are right (on PoCL, two driver threads calling the host BLAS concurrently);
 * where both run host GEMMs, each GEMM keeps to one OpenBLAS thread from the
 * process's first on, unless the environment set the count. Error bound as
 * in test_gemm.c: (k + 2) * FLT_EPSILON relative to max_ij sum_p |a_ip *
 * b_pj|. */
#include "testutil.h"

#include <clrt/host_blas.h>
#include <float.h>
#include <sched.h>
#include <string.h>
#include <sys/wait.h>

static int M, K, N; /* 200 x 150 x 170, a fifth of that at the small test size */

static uint64_t rng;
static void setup(void)
{
    rng = tu_seed() ^ 0xBB67AE8584CAA73BULL;
    M = TU_SIZED(200, 40), K = TU_SIZED(150, 30), N = TU_SIZED(170, 34);
}

static const char *name(int i) { return clrt_device_str(tu_device_pair(i)); }

static clrt_tensor *filled(clrt_device *d, int64_t rows, int64_t cols, double v)
{
    int64_t s[2] = {rows, cols};
    return TU_NONNULL(clrt_full(d, CLRT_F32, 2, s, v));
}

START_TEST(test_mixed_devices_rejected)
{
    clrt_device *d0 = tu_device_pair(0), *d1 = tu_device_pair(1);
    clrt_tensor *a0 = filled(d0, 3, 4, 1), *b1 = filled(d1, 4, 2, 2);
    clrt_tensor *b0 = filled(d0, 4, 2, 2), *c1 = filled(d1, 3, 2, 5);
    ck_assert_ptr_null(clrt_matmul(a0, b1));
    tu_assert_error(CLRT_EDEVMISMATCH, "clrt_matmul", name(0), name(1), "clrt_tensor_to", NULL);
    ck_assert_int_eq(clrt_matmul_out(c1, a0, b0), CLRT_EDEVMISMATCH);
    tu_assert_error(CLRT_EDEVMISMATCH, "clrt_matmul_out", name(1), NULL);
    ck_assert_int_eq(clrt_gemm(c1, CLRT_NO_TRANS, CLRT_NO_TRANS, 1.0f, a0, b0, 1.0f),
                     CLRT_EDEVMISMATCH);
    tu_assert_error(CLRT_EDEVMISMATCH, "clrt_gemm", name(0), name(1), NULL);
    float c[6];
    TU_OK(clrt_to_host(c1, c, sizeof c));
    for (int i = 0; i < 6; i++)
        ck_assert_float_eq(c[i], 5.0f);
    clrt_tensor *ts[] = {a0, b1, b0, c1};
    for (int i = 0; i < 4; i++)
        clrt_tensor_release(ts[i]);
}
END_TEST

/* Returns the error of got against a b in float64, relative to
 * max_ij sum_p |a_ip b_pj|. */
static double product_error(const float *a, const float *b, const float *got)
{
    double *ref = malloc((size_t)(M * N) * sizeof *ref);
    ck_assert_ptr_nonnull(ref);
    double scale = tu_matmul_ref(a, b, M, K, N, ref);
    double err = tu_rel_err(got, ref, (size_t)(M * N), scale);
    free(ref);
    return err;
}

START_TEST(test_both_devices_at_once)
{
    clrt_device *devs[2] = {tu_device_pair(0), tu_device_pair(1)};
    int64_t sa[2] = {M, K}, sb[2] = {K, N};
    float *ha[2], *hb[2];
    clrt_tensor *c[2][4];
    for (int d = 0; d < 2; d++) {
        ha[d] = tu_random_floats(&rng, M * K, -1, 1);
        hb[d] = tu_random_floats(&rng, K * N, -1, 1);
    }
    /* Enqueue everything on both queues before reading anything back. */
    for (int d = 0; d < 2; d++) {
        clrt_tensor *a = TU_NONNULL(clrt_from_host(devs[d], CLRT_F32, 2, sa, ha[d]));
        clrt_tensor *b = TU_NONNULL(clrt_from_host(devs[d], CLRT_F32, 2, sb, hb[d]));
        for (int r = 0; r < 4; r++)
            c[d][r] = TU_NONNULL(clrt_matmul(a, b));
        clrt_tensor_release(a);
        clrt_tensor_release(b);
    }
    for (int d = 0; d < 2; d++)
        for (int r = 0; r < 4; r++) {
            float *got = tu_read(c[d][r]);
            double err = product_error(ha[d], hb[d], got), bound = (K + 2) * FLT_EPSILON;
            ck_assert_msg(err <= bound, "%s, product %d: error %.3g > %.3g",
                          clrt_device_str(devs[d]), r, err, bound);
            free(got);
            clrt_tensor_release(c[d][r]);
        }
    for (int d = 0; d < 2; d++) {
        free(ha[d]);
        free(hb[d]);
    }
}
END_TEST

/* One product on each of `used` devices in turn (1 or 2), in a fresh
 * process, after putting a tensor on each of them: prints OpenBLAS's
 * thread count before any product and after each device's. */
static int child_main(int used)
{
    int64_t sz[2] = {8, 8};
    int threads[3] = {clrt_host_blas().pool_threads, 0, 0};
    clrt_tensor *a[2] = {NULL, NULL};
    for (int i = 0; i < used; i++)
        if (!(a[i] = tu_device_pair_lookup(i)
                         ? clrt_full(tu_device_pair_lookup(i), CLRT_F32, 2, sz, 1.0)
                         : NULL)) {
            fprintf(stderr, "child: tensor on device %d: %s\n", i, clrt_last_error());
            return 1;
        }
    for (int i = 0; i < used; i++) {
        clrt_tensor *c = clrt_matmul(a[i], a[i]);
        float v[64] = {0};
        if (!c || clrt_to_host(c, v, sizeof v) != CLRT_OK || v[63] != 8.0f) {
            fprintf(stderr, "child: product on device %d: %s\n", i, clrt_last_error());
            return 1;
        }
        clrt_tensor_release(a[i]);
        clrt_tensor_release(c);
        threads[i + 1] = clrt_host_blas().pool_threads;
    }
    printf("threads %d %d %d\n", threads[0], threads[1], threads[2]);
    return 0;
}

/* The child's three thread counts (the last 0 with one device used), run
 * with env and argument mode ("child-one", "child-two"). */
static void child_threads(const char *mode, const char *const *env, int threads[3])
{
    static char out[8192];
    int status = tu_run_child_args(env, mode, 120, out, sizeof out);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child failed: %s", out);
    const char *line = strstr(out, "threads ");
    ck_assert_msg(line &&
                      sscanf(line, "threads %d %d %d", &threads[0], &threads[1], &threads[2]) == 3,
                  "no thread counts in the child's output: %s", out);
}

/* Two devices running host GEMMs (two PoCL devices: each GEMM a native
 * command on one of PoCL's workers) must not each wake OpenBLAS's whole pool:
 * with both in use (a tensor on each), the process's first GEMM, on either
 * device, already runs on one thread (a count that changed between the
 * devices' GEMMs would change their results); a count set in the
 * environment stays. With two devices enumerated but one used, the pool
 * stays whole (it was pinned to one thread when enumeration decided). */
START_TEST(test_host_gemms_share_cores)
{
    clrt_device_info info[2];
    for (int i = 0; i < 2; i++)
        TU_OK(clrt_device_info_get(tu_device_pair(i), &info[i]));
    if (info[0].gemm_path != CLRT_GEMM_HOST_BLAS || info[1].gemm_path != CLRT_GEMM_HOST_BLAS) {
        tu_skip("test_host_gemms_share_cores: GEMM runs on %s and %s, not both on the host's "
                "BLAS",
                clrt_gemm_path_str(info[0].gemm_path), clrt_gemm_path_str(info[1].gemm_path));
        return;
    }
    if (clrt_host_blas().pool_threads == 0) {
        tu_skip("test_host_gemms_share_cores: OpenBLAS has no thread pool of its own here "
                "(a serial or OpenMP build)");
        return;
    }
    const char *unset[] = {"OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS",
                           "OPENBLAS_DEFAULT_NUM_THREADS", "OMP_NUM_THREADS", NULL};
    int t[3];
    child_threads("child-two", unset, t);
    cpu_set_t mine;
    int cpus = sched_getaffinity(0, sizeof mine, &mine) == 0 ? CPU_COUNT(&mine) : 1;
    ck_assert_msg(t[0] >= 1 && t[1] == 1 && t[2] == 1,
                  "OpenBLAS threads before, after one device, after two: %d %d %d (want n 1 1)",
                  t[0], t[1], t[2]);
    ck_assert_msg(cpus < 2 || t[0] > 1, "%d CPUs but OpenBLAS started with %d thread", cpus, t[0]);
    child_threads("child-one", unset, t);
    ck_assert_msg(t[1] == t[0],
                  "one of two devices used: OpenBLAS threads before %d, after its product %d "
                  "(want the pool kept)",
                  t[0], t[1]);
    const char *set[] = {"OPENBLAS_NUM_THREADS=2", "GOTO_NUM_THREADS",
                         "OPENBLAS_DEFAULT_NUM_THREADS", "OMP_NUM_THREADS", NULL};
    child_threads("child-two", set, t);
    int want = cpus < 2 ? 1 : 2; /* OpenBLAS caps the count at the CPUs it may use */
    ck_assert_msg(t[0] == want && t[1] == want && t[2] == want,
                  "with OPENBLAS_NUM_THREADS=2: threads %d %d %d (want %d each time)", t[0], t[1],
                  t[2], want);
}
END_TEST

int main(int argc, char **argv)
{
    if (argc == 2 && strncmp(argv[1], "child-", 6) == 0)
        return child_main(strcmp(argv[1], "child-one") == 0 ? 1 : 2);
    Suite *s = suite_create("gemm_multi");
    TCase *tc = tu_tcase("two devices");
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_mixed_devices_rejected);
    tcase_add_test(tc, test_both_devices_at_once);
    suite_add_tcase(s, tc);
    /* Only where both devices run GEMMs on the host's BLAS (tu_skip elsewhere). */
    TCase *host = tu_tcase("host_blas");
    tcase_set_tags(host, TU_MAY_SKIP);
    tcase_set_timeout(host, 300);
    tcase_add_test(host, test_host_gemms_share_cores);
    suite_add_tcase(s, host);
    return tu_run(s);
}
