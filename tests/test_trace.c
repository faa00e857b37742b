/* The profiler trace's API (clrt/trace.h): per-operation totals against the
 * ops run, values unchanged while tracing, a device traced whether it was
 * opened before the trace or during it, the state errors, an unwritable
 * file, and CLRT_TRACE's trace written at exit. The trace's contents are
 * checked against an independent count in tests/python/check_trace.py. */
#include "testutil.h"

#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* c = a + b, `times` times over on fresh random inputs, each checked
 * against a float64 sum. */
static void add_and_check(clrt_device *d, int times, uint64_t *rng)
{
    const int64_t n = 1000 + (int64_t)(tu_next(rng) % 3000);
    for (int i = 0; i < times; i++) {
        float *ha = tu_random_floats(rng, (size_t)n, -10, 10);
        float *hb = tu_random_floats(rng, (size_t)n, -10, 10);
        double *ref = malloc((size_t)n * sizeof *ref);
        for (int64_t j = 0; j < n; j++)
            ref[j] = (double)ha[j] + (double)hb[j];
        clrt_tensor *a = TU_NONNULL(clrt_from_host(d, CLRT_F32, 1, &n, ha));
        clrt_tensor *b = TU_NONNULL(clrt_from_host(d, CLRT_F32, 1, &n, hb));
        clrt_tensor *c = TU_NONNULL(clrt_add(a, b));
        float *got = tu_read(c);
        ck_assert_double_le(tu_rel_err(got, ref, (size_t)n, 1), 1e-6);
        free(got);
        free(ref);
        free(ha);
        free(hb);
        clrt_tensor_release(a);
        clrt_tensor_release(b);
        clrt_tensor_release(c);
    }
}

/* The trace's kernels: exactly one (the addition's), `times` calls. */
static void assert_one_kernel(int times)
{
    clrt_trace_op ops[32];
    int n = clrt_trace_top(ops, 32), kernels = 0;
    ck_assert_int_ge(n, 1);
    ck_assert_int_le(n, 32);
    for (int i = 0; i < n; i++) {
        ck_assert_double_ge(ops[i].total_ms, 0);
        ck_assert(i == 0 || ops[i].total_ms <= ops[i - 1].total_ms);
        if (strcmp(ops[i].kind, "kernel") == 0) {
            kernels++;
            ck_assert_msg(ops[i].calls == times, "%s: %lld calls, %d additions", ops[i].name,
                          ops[i].calls, times);
        }
    }
    ck_assert_int_eq(kernels, 1);
}

static void traced_additions(int open_first)
{
    uint64_t rng = tu_seed();
    clrt_device *d = tu_device();
    int times = 2 + (int)(tu_next(&rng) % 5);
    if (open_first) /* the device's queues are remade with profiling */
        add_and_check(d, 1, &rng);
    ck_assert_int_eq(clrt_trace_recording(), 0);
    TU_OK(clrt_trace_start(NULL));
    ck_assert_int_ne(clrt_trace_recording(), 0);
    add_and_check(d, times, &rng);
    TU_OK(clrt_trace_stop());
    ck_assert_int_eq(clrt_trace_recording(), 0);
    assert_one_kernel(times);
    add_and_check(d, 1, &rng); /* after the trace: untraced, still right */
    assert_one_kernel(times);
}

START_TEST(device_opened_before_the_trace) { traced_additions(1); }
END_TEST

START_TEST(device_opened_during_the_trace) { traced_additions(0); }
END_TEST

START_TEST(state_errors)
{
    char dir[] = "/tmp/clrt-trace-test-XXXXXX", path[64];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/t.json", dir);
    ck_assert_int_eq(clrt_trace_stop(), CLRT_ESTATE);
    tu_assert_error(CLRT_ESTATE, "no trace is recording", NULL);
    TU_OK(clrt_trace_start(path));
    ck_assert_int_eq(clrt_trace_start("/tmp/other.json"), CLRT_ESTATE);
    tu_assert_error(CLRT_ESTATE, "already recording", path, NULL);
    TU_OK(clrt_trace_start(NULL)); /* joins */
    TU_OK(clrt_trace_stop());
    ck_assert_int_eq(clrt_trace_stop(), CLRT_ESTATE);
    char head[32] = "";
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    ck_assert_ptr_nonnull(fgets(head, sizeof head, f));
    fclose(f);
    ck_assert_msg(strncmp(head, "{\"displayTimeUnit\"", 18) == 0, "%s", head);
    ck_assert_int_eq(unlink(path), 0);
    ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

/* A path that cannot be written fails at the start (issue 25: it used to
 * fail only when the trace was written); one that stops being writable
 * during the trace fails the stop, and the figures survive. */
START_TEST(unwritable_file)
{
    uint64_t rng = tu_seed();
    const char *path = "/nonexistent-clrt-folder/trace.json";
    char dir[] = "/tmp/clrt-trace-test-XXXXXX", later[64];
    ck_assert_int_eq(clrt_trace_start(path), CLRT_EIO);
    tu_assert_error(CLRT_EIO, path, "does not exist", NULL);
    ck_assert_int_eq(clrt_trace_recording(), 0);
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(later, sizeof later, "%s/trace.json", dir);
    TU_OK(clrt_trace_start(later));
    ck_assert_int_eq(rmdir(dir), 0);
    add_and_check(tu_device(), 1, &rng);
    ck_assert_int_eq(clrt_trace_stop(), CLRT_EIO);
    tu_assert_error(CLRT_EIO, later, NULL);
    ck_assert_int_eq(clrt_trace_recording(), 0);
    assert_one_kernel(1); /* the figures survive the failed write */
    TU_OK(clrt_trace_start(NULL));
    TU_OK(clrt_trace_stop());
}
END_TEST

static int child_main(void)
{
    int64_t n = 100;
    float host[100];
    clrt_device *d = tu_device_lookup();
    clrt_tensor *a = d ? clrt_rand(d, 1, &n, 1) : NULL;
    clrt_tensor *c = a ? clrt_add(a, a) : NULL;
    if (!c || clrt_to_host(c, host, sizeof host) != CLRT_OK) /* a host wait */
        fprintf(stderr, "child: %s\n", clrt_last_error());
    clrt_tensor_release(a);
    clrt_tensor_release(c);
    return 0; /* exits without clrt_trace_stop: CLRT_TRACE writes at exit */
}

START_TEST(clrt_trace_variable)
{
    char dir[] = "/tmp/clrt-trace-test-XXXXXX", var[96], path[64];
    static char out[8192], json[1 << 16];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/run.json", dir);
    snprintf(var, sizeof var, "CLRT_TRACE=%s", path);
    const char *env[] = {var, NULL};
    int status = tu_run_child(env, 120, out, sizeof out);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child failed: %s", out);
    ck_assert_msg(strstr(out, "CLRT_TRACE:") && strstr(out, path), "no note on stderr: %s", out);
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    size_t len = fread(json, 1, sizeof json - 1, f);
    json[len] = '\0';
    fclose(f);
    ck_assert_msg(strstr(json, "\"compute queue") || strstr(json, "compute queue\""), "%s", json);
    ck_assert_msg(strstr(json, "\"cat\":\"kernel\"") && strstr(json, "\"cat\":\"wait\""), "%s",
                  json);
    ck_assert_int_eq(unlink(path), 0);
    ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "child") == 0)
        return child_main();
    Suite *s = suite_create("trace");
    TCase *tc = tu_tcase("trace");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, device_opened_before_the_trace);
    tcase_add_test(tc, device_opened_during_the_trace);
    tcase_add_test(tc, state_errors);
    tcase_add_test(tc, unwritable_file);
    tcase_add_test(tc, clrt_trace_variable);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
