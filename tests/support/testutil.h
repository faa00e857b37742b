/* Shared helpers for the check suites: fresh random inputs, float64
 * references, error measures, device fixtures. */
#ifndef CLRT_TESTUTIL_H
#define CLRT_TESTUTIL_H

#include <check.h>
#include <clrt/clrt.h>
#include <stdint.h>
#include <stdlib.h>

/* A fresh seed per process (time and pid), printed once so a failure can be
 * replayed with CLRT_TEST_SEED=<n>. */
uint64_t tu_seed(void);
/* splitmix64 stream: independent of the library's generator. */
uint64_t tu_next(uint64_t *state);
double tu_uniform(uint64_t *state, double lo, double hi);
/* n floats uniform in [lo, hi). malloc'ed. */
float *tu_random_floats(uint64_t *state, size_t n, double lo, double hi);

/* max |got - ref| / max(max |ref|, floor) over the finite references; a
 * reference that is NaN or infinite must be matched exactly (NaN by NaN).
 * INFINITY, which fails any bound, when got is NaN or infinite where the
 * reference is finite, when n is 0 (a check of nothing) or floor <= 0. */
double tu_rel_err(const float *got, const double *ref, size_t n, double floor);
/* ref [m, n] = a [m, k] b [k, n] in float64 (row-major); returns the
 * bound's scale, max_ij sum_p |a_ip b_pj| (a GEMM's rounding grows with
 * it; 0 for empty products). Makes no check calls: children outside the
 * runner use it too. */
double tu_matmul_ref(const float *a, const float *b, int64_t m, int64_t k, int64_t n, double *ref);
/* max |a - b| / max |b| (two float32 results of the same computation, e.g.
 * parameters trained two ways); INFINITY when either holds a NaN or an
 * infinity, or n is 0. */
double tu_rel_diff(const float *a, const float *b, size_t n);
/* Read a float32 tensor to a malloc'ed host array (ck_assert on failure). */
float *tu_read(const clrt_tensor *t);
/* The device a suite tests: CLRT_TEST_DEVICE (a spec such as "gpu:0"), else
 * the first CPU device, else gpu:0; a failed test if there is none. tu_run
 * makes it the default device too (CLRT_DEFAULT_DEVICE), so modules are
 * built there. */
clrt_device *tu_device(void);
/* The same device without assertions, for code outside a test (child
 * processes, allocation-failure scenarios): NULL with clrt_last_error(). */
clrt_device *tu_device_lookup(void);
/* Device i (0 or 1) of the two a multi-device suite tests: CLRT_TEST_DEVICES
 * (two specs, "cpu,cpu:1" or "gpu:0,cpu"), else the first two devices in
 * clrt's order; a failed test if they are not two distinct devices. */
clrt_device *tu_device_pair(int i);
/* The same without assertions, for child processes: NULL, and the reason on
 * stderr. */
clrt_device *tu_device_pair_lookup(int i);
/* printf into one of 8 static buffers used in turn (needles for
 * tu_assert_error built from device names). */
const char *tu_fmt(const char *fmt, ...);
/* Nonzero when a and b belong to one OpenCL platform (one driver: the same
 * kernels give the same bits on both). */
int tu_same_platform(const clrt_device *a, const clrt_device *b);
/* How often msg names device d: its name (clrt_device_str) as a whole word,
 * so "cpu" is not counted inside "cpu:1". */
int tu_count_device(const char *msg, const clrt_device *d);
/* The last error is CLRT_EDEVMISMATCH from op, pointing to clrt_tensor_to
 * and naming each device of tu_device_pair once. */
void tu_assert_pair_mismatch(const char *op);
/* The test size: CLRT_TEST_SIZE=small (for slow devices such as Oclgrind)
 * or full (the default). Suites choose their sizes with TU_SIZED. */
int tu_small(void);
#define TU_SIZED(full, small) (tu_small() ? (small) : (full))
/* The one large odd size of element-wise tests: past any work-group count. */
#define TU_LARGE TU_SIZED(1000003, 20011)
/* ck_assert that a call failed with `want` and the message contains every
 * NULL-terminated needle. */
void tu_assert_error(clrt_status want, ...);

#define TU_OK(call)                                                                       \
    do {                                                                                  \
        clrt_status tu_st_ = (call);                                                      \
        ck_assert_msg(tu_st_ == CLRT_OK, "%s -> %s: %s", #call, clrt_status_name(tu_st_), \
                      clrt_last_error());                                                 \
    } while (0)
#define TU_NONNULL(expr) tu_nonnull_((expr), #expr)
void *tu_nonnull_(void *p, const char *what);

/* Runs this test program again as `<program> child` (its main handles that
 * argument), with the environment changed by `env`: "NAME=value" sets,
 * "NAME" unsets; NULL-terminated, may be NULL. Its stdout and stderr go to
 * out (NUL-terminated, truncated to cap). A child still running after
 * timeout_s seconds is killed by SIGALRM. Returns its wait status. */
int tu_run_child(const char *const *env, unsigned timeout_s, char *out, size_t cap);
/* The same with another argument than "child". */
int tu_run_child_args(const char *const *env, const char *arg, unsigned timeout_s, char *out,
                      size_t cap);

/* Skipping: a test that cannot apply here (needs root, a tmpfs, another
 * GEMM path, full size) calls tu_skip with the reason, then returns. Such
 * tests belong to a test case tagged TU_MAY_SKIP (tcase_set_tags): ctest
 * runs those cases apart (tests/CMakeLists.txt), and that run exits with
 * TU_SKIP_EXIT when any skipped, so ctest's summary lists it as skipped
 * rather than passed. */
#define TU_MAY_SKIP "may_skip"
#define TU_SKIP_EXIT 77
void tu_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* tcase_create with a checked teardown that, in fork mode, waits for the
 * work the test left queued (clrt_device_synchronize_all: a driver still
 * running it as the process exits can crash) and releases CLBlast's
 * programs before the test's process exits (clrt_clblast_release_programs:
 * Oclgrind cannot release them at exit). tu_run releases them once
 * without forking. */
TCase *tu_tcase(const char *name);

/* Runs a suite in forked mode; returns 0 when every test passed, 1 when
 * one failed, TU_SKIP_EXIT when none failed and one skipped. */
int tu_run(Suite *s);

#endif
