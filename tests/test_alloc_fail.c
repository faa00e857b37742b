/* Allocation failures, in the style of SQLite's malloc tests: the n-th
 * host allocation or device buffer inside the library fails (the internal
 * hook clrt__alloc_fail_after), for every n until a run meets no failure,
 * over two scenarios: tensor and module creation with ops and a forward and
 * backward pass, and a short training run on a tiny data set read from
 * disk (plain and gzipped IDX files) with an evaluation. Each failure must
 * come back as an error with a message, or be absorbed (the program cache
 * rebuilds what it could not load, for instance), never a crash; nothing
 * may leak: device bytes are back to where they were after every run, and
 * LeakSanitizer checks host memory in the ASan pass of CI.
 *
 * "warm" runs in this process after one clean run (programs built, scratch
 * buffers grown): the steady state. "cold" runs each n in a fresh process
 * (`test_alloc_fail child`): device opening, kernel sources, the program
 * cache's folder, key and files, building from source and storing, and
 * loading from disk. The counts are printed for the record. */
#include "runtime/core/alloc_internal.h"
#include "runtime/device/device_internal.h"
#include "test_data_files.h"

#include <sys/wait.h>
#include <time.h>

#define TRAIN_N 96
#define TEST_N 40

static char data_dir[256];

/* A tiny Fashion-MNIST in data_dir: training files plain, test files
 * gzipped, so both read paths run. */
static void write_tiny_fashion(void)
{
    static unsigned char img[16 + TRAIN_N * 784], lab[8 + TRAIN_N];
    uint64_t rng = tu_seed();
    tdf_mkdtemp(data_dir, sizeof data_dir);
    for (int split = 0; split < 2; split++) {
        uint32_t n = split ? TEST_N : TRAIN_N;
        tdf_be32(img, 0x803), tdf_be32(img + 4, n), tdf_be32(img + 8, 28), tdf_be32(img + 12, 28);
        tdf_be32(lab, 0x801), tdf_be32(lab + 4, n);
        for (size_t i = 16; i < 16 + (size_t)n * 784; i++)
            img[i] = (unsigned char)tu_next(&rng);
        for (uint32_t i = 0; i < n; i++)
            lab[8 + i] = (unsigned char)(tu_next(&rng) % 10);
        const char *pre = split ? "t10k" : "train";
        char name[64];
        snprintf(name, sizeof name, "%s-images-idx3-ubyte", pre);
        tdf_write(data_dir, name, img, 16 + (size_t)n * 784);
        if (split)
            tdf_gzip(data_dir, name);
        snprintf(name, sizeof name, "%s-labels-idx1-ubyte", pre);
        tdf_write(data_dir, name, lab, 8 + n);
        if (split)
            tdf_gzip(data_dir, name);
    }
}

static clrt_module *small_cnn(void)
{
    clrt_module *mods[6] = {clrt_conv2d(1, 4, 5, 1, 2),   clrt_relu(),
                            clrt_maxpool2d(2, 2),         clrt_flatten(),
                            clrt_linear(4 * 14 * 14, 10), NULL};
    return clrt_sequential(5, mods);
}

/* Tensors, views, ops, a module's parameters, forward and backward. */
static clrt_status creation(clrt_device *d)
{
    int64_t s2[2] = {6, 7}, s1[1] = {42}, sx[4] = {3, 1, 28, 28};
    const char *names[8];
    clrt_tensor *p[8], *g[8];
    clrt_tensor *a = clrt_rand(d, 2, s2, 1), *b = clrt_full(d, CLRT_F32, 2, s2, 0.5);
    clrt_tensor *c = a && b ? clrt_add(a, b) : NULL;
    clrt_tensor *v = c ? clrt_reshape(c, 1, s1) : NULL;
    clrt_tensor *e = v ? clrt_tensor_clone(v) : NULL;
    clrt_tensor *f = e ? clrt_sum_dim(c, 1, 0) : NULL;
    clrt_tensor *x = f ? clrt_randn(d, 4, sx, 2) : NULL;
    clrt_module *m = x ? small_cnn() : NULL;
    clrt_tensor *y = NULL, *gx = NULL;
    clrt_status st = m ? clrt_module_init(m, 3) : clrt_last_status();
    if (st == CLRT_OK && clrt_module_parameters(m, names, p, g, 8) != 4)
        st = clrt_last_status();
    if (st == CLRT_OK && !(y = clrt_module_forward(m, x)))
        st = clrt_last_status();
    if (st == CLRT_OK && !(gx = clrt_module_backward(m, y)))
        st = clrt_last_status();
    clrt_tensor *all[] = {a, b, c, v, e, f, x, y, gx};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        clrt_tensor_release(all[i]);
    clrt_module_free(m);
    return st;
}

/* Load the tiny data set, train a small CNN for one epoch with a test pass,
 * then evaluate. */
static clrt_status training(clrt_device *d)
{
    clrt_tensor *p[8], *g[8];
    clrt_optimizer *opt = NULL;
    clrt_dataset *train = clrt_dataset_fashion_mnist(data_dir, 1);
    clrt_dataset *test = train ? clrt_dataset_fashion_mnist(data_dir, 0) : NULL;
    clrt_module *m = test ? small_cnn() : NULL;
    clrt_status st = m ? clrt_module_init(m, 5) : clrt_last_status();
    if (st == CLRT_OK)
        st = clrt_module_to(m, d);
    int n = st == CLRT_OK ? clrt_module_parameters(m, NULL, p, g, 8) : 0;
    if (st == CLRT_OK && (n != 4 || !(opt = clrt_adam(n, p, g, 1e-3, 0.9, 0.999, 1e-8, 0))))
        st = clrt_last_status();
    clrt_train_config cfg = clrt_train_defaults();
    cfg.epochs = 1;
    cfg.batch_size = 32;
    if (st == CLRT_OK)
        st = clrt_train(m, opt, train, test, &cfg, NULL);
    double loss = 0;
    if (st == CLRT_OK)
        st = clrt_evaluate(m, test, 16, &loss, NULL);
    clrt_optimizer_free(opt);
    clrt_module_free(m);
    clrt_dataset_free(train);
    clrt_dataset_free(test);
    return st;
}

static clrt_status scenario(void)
{
    clrt_device *d = tu_device_lookup();
    clrt_status st = d ? creation(d) : clrt_last_status();
    if (st == CLRT_OK)
        st = training(d);
    /* Let queued work finish, so that each run starts from a quiet queue. */
    clrt_status sync = d ? clrt_device_synchronize(d) : CLRT_OK;
    return st != CLRT_OK ? st : sync;
}

typedef struct {
    long points, errors, absorbed;
} tally;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* One run with the n-th allocation failing: 1 while failures still hit. */
static int run_failing(long n, tally *t)
{
    clrt_clear_error();
    clrt__alloc_fail_after(n);
    clrt_status st = scenario();
    long failed = clrt__alloc_failures();
    clrt__alloc_fail_after(0);
    if (failed == 0) {
        ck_assert_msg(st == CLRT_OK, "no failure injected at %ld, yet %s: %s", n,
                      clrt_status_name(st), clrt_last_error());
        return 0;
    }
    t->points++;
    if (st == CLRT_OK) {
        t->absorbed++;
    } else {
        t->errors++;
        ck_assert_msg(st < 0 && clrt_last_error()[0] != '\0',
                      "allocation %ld failed: status %d without a message", n, (int)st);
    }
    return 1;
}

/* Device bytes held by live buffers: counted, minus those cached for reuse
 * (clrt_device_empty_cache), so a leak is not hidden among them. */
static unsigned long long live_bytes(clrt_device *d)
{
    return atomic_load(&d->mem_used) - clrt_device_cached_bytes(d);
}

START_TEST(warm_every_allocation_fails_cleanly)
{
    write_tiny_fashion();
    clrt_device *d = tu_device();
    TU_OK(scenario()); /* warm: programs built, scratch grown */
    unsigned long long baseline = live_bytes(d);
    clrt__alloc_fail_after(0);
    TU_OK(scenario());
    long per_run = clrt__alloc_count();
    tally t = {0, 0, 0};
    double t0 = now_s();
    for (long n = 1; run_failing(n, &t); n++)
        ck_assert_msg(live_bytes(d) <= baseline,
                      "device bytes leaked after failing allocation %ld: %llu > %llu", n,
                      live_bytes(d), baseline);
    TU_OK(scenario()); /* everything works again, and nothing leaked */
    ck_assert_uint_eq(live_bytes(d), baseline);
    printf("alloc_fail warm: %ld allocations per run; %ld points tried, %ld errors returned, "
           "%ld absorbed (%.1f s)\n",
           per_run, t.points, t.errors, t.absorbed, now_s() - t0);
    ck_assert_int_eq(t.points, per_run);
    tdf_rmdir(data_dir);
}
END_TEST

/* The first use of two kernel families: nothing cached in memory or, with
 * an empty folder, on disk (built from source, then stored). */
static clrt_status one_op(void)
{
    int64_t n = 1000;
    clrt_device *d = tu_device_lookup();
    clrt_tensor *a = d ? clrt_rand(d, 1, &n, 9) : NULL, *b = a ? clrt_add(a, a) : NULL;
    clrt_status st = b ? CLRT_OK : clrt_last_status();
    clrt_tensor_release(a);
    clrt_tensor_release(b);
    clrt_status sync = d ? clrt_device_synchronize(d) : CLRT_OK;
    return st != CLRT_OK ? st : sync;
}

/* The child: CLRT_TEST_SCENARIO (one_op or full) with allocation
 * CLRT_TEST_FAIL_AT failing (0: none); prints what happened, exits 0
 * unless something is wrong. */
static int child_main(void)
{
    const char *at = getenv("CLRT_TEST_FAIL_AT"), *which = getenv("CLRT_TEST_SCENARIO");
    int full = which && strcmp(which, "full") == 0;
    clrt__alloc_fail_after(at ? atol(at) : 0);
    clrt_status st = full ? scenario() : one_op();
    long failed = clrt__alloc_failures(), count = clrt__alloc_count();
    clrt__alloc_fail_after(0);
    printf("result failed=%ld count=%ld status=%d\n", failed, count, (int)st);
    if (st != CLRT_OK)
        printf("message: %s\n", clrt_last_error());
    int ok = (failed || st == CLRT_OK) && (st == CLRT_OK || clrt_last_error()[0] != '\0');
    /* After a failure the library must still work: the kernels of the
     * creation scenario (most families) or of the one op. */
    clrt_device *d = tu_device_lookup();
    clrt_status again = !d ? clrt_last_status() : full ? creation(d) : one_op();
    if (d && again == CLRT_OK)
        again = clrt_device_synchronize(d);
    if (again != CLRT_OK) {
        printf("afterwards: %s\n", clrt_last_error());
        ok = 0;
    }
    return ok ? 0 : 1;
}

/* Runs the child failing allocation n; returns how many it injected
 * (0 or 1) and counts the outcome. */
static long run_cold(long n, const char *scenario_var, const char *cache_dir, tally *t)
{
    static char out[16384];
    char fail_at[64], dir_var[300];
    snprintf(fail_at, sizeof fail_at, "CLRT_TEST_FAIL_AT=%ld", n);
    snprintf(dir_var, sizeof dir_var, "CLRT_CACHE_DIR=%s", cache_dir);
    const char *env[] = {scenario_var, dir_var, fail_at, NULL};
    /* Each child runs once: a leak, an ASan report or a LeakSanitizer
     * crash fails the test (the tracer crash once seen here came from the
     * sanitizers' __tls_get_addr interception, off in every test:
     * tests/CMakeLists.txt). */
    int status = tu_run_child(env, 300, out, sizeof out);
    long failed = -1, count = 0;
    int st = 0;
    const char *line = strstr(out, "result ");
    int ok = WIFEXITED(status) && WEXITSTATUS(status) == 0 && line &&
             sscanf(line, "result failed=%ld count=%ld status=%d", &failed, &count, &st) == 3;
    /* The child's output goes to stderr, not into the message: check
     * drops a message over its size limit, and an ASan report with its
     * stacks is longer. */
    if (!ok)
        fprintf(stderr, "--- the child's output (allocation %ld, %s) ---\n%s\n---\n", n,
                scenario_var, out);
    ck_assert_msg(ok, "allocation %ld of a fresh process (%s): %s %d (its output is above)", n,
                  scenario_var, WIFSIGNALED(status) ? "signal" : "exit",
                  WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
    if (failed) {
        t->points++;
        st == 0 ? t->absorbed++ : t->errors++;
    }
    return failed;
}

/* _i 0: the first use of two kernel families with an empty cache folder
 * each time (folder and key made, programs built from source and stored);
 * 1: the whole scenario, loading every program from the disk cache. */
START_TEST(cold_every_allocation_fails_cleanly)
{
    char base[] = "/tmp/clrt-alloc-test-XXXXXX", dir[300], rm[64];
    ck_assert_ptr_nonnull(mkdtemp(base));
    write_tiny_fashion();
    setenv("CLRT_ALLOC_TEST_DATA", data_dir, 1);
    const char *scenario_var = _i == 0 ? "CLRT_TEST_SCENARIO=one_op" : "CLRT_TEST_SCENARIO=full";
    tally t = {0, 0, 0};
    double t0 = now_s();
    snprintf(dir, sizeof dir, "%s/warm", base);
    run_cold(0, scenario_var, dir, &t); /* fills the disk cache for _i == 1 */
    for (long n = 1;; n++) {
        if (_i == 0)
            snprintf(dir, sizeof dir, "%s/%ld", base, n);
        if (!run_cold(n, scenario_var, dir, &t))
            break;
    }
    printf("alloc_fail cold (%s): %ld points tried, %ld errors returned, %ld absorbed (%.1f s)\n",
           scenario_var + 19, t.points, t.errors, t.absorbed, now_s() - t0);
    ck_assert_int_gt(t.points, 10);
    snprintf(rm, sizeof rm, "rm -rf '%s'", base);
    ck_assert_int_eq(system(rm), 0);
    tdf_rmdir(data_dir);
}
END_TEST

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "child") == 0) {
        const char *dir = getenv("CLRT_ALLOC_TEST_DATA");
        snprintf(data_dir, sizeof data_dir, "%s", dir ? dir : "");
        return child_main();
    }
    Suite *s = suite_create("alloc_fail");
    TCase *tc = tu_tcase("alloc_fail");
    tcase_set_timeout(tc, 1800);
    tcase_add_test(tc, warm_every_allocation_fails_cleanly);
    tcase_add_loop_test(tc, cold_every_allocation_fails_cleanly, 0, 2);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
