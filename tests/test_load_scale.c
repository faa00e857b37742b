/* Loading stays linear in the number of tensors (issue 36, item 6: 40k
 * tensors took 3.3 s, 80k 14.7 s, 160k 60 s). Measured by counting, not by
 * the clock: clrt__lookup_steps() counts the steps of the library's name
 * lookups and repeat searches (runtime/core/lookup_internal.h), and each
 * case bounds them by a small multiple of the entries (of n log n for a
 * sort). A quadratic search takes about n^2 / 2 of them, hundreds of times
 * over the bound at these sizes, so a case cannot pass or fail by the
 * machine's speed or load.
 *
 * The cases: a safetensors header of 20000 tensors, read and every name
 * looked up; clrt_module_load_ex of that file into a module it does not
 * fit (every tensor unexpected); a checkpoint of 2000 Linear(1, 1) layers
 * with SGD's momentum, saved and loaded as --resume loads it; a Sequential
 * of 20000 named children; an SGD of 20000 parameters. */
#include "testutil.h"

#include "runtime/core/lookup_internal.h"
#include "runtime/tensor/safetensors_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static char dir[512];

static void make_dir(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/clrt-scale-XXXXXX", tmp ? tmp : "/tmp");
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void remove_dir(void)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}

/* steps taken since `from`, checked against limit (per entry: n). */
static void assert_steps(const char *what, uint64_t from, double limit, int n)
{
    uint64_t took = clrt__lookup_steps() - from;
    printf("%s: %llu lookup steps for %d entries (%.2f each; at most %.2f)\n", what,
           (unsigned long long)took, n, (double)took / n, limit / n);
    ck_assert_msg((double)took <= limit, "%s: %llu lookup steps for %d entries, over %.0f", what,
                  (unsigned long long)took, n, limit);
}

/* A file of n one-element F32 tensors "t0" ... into path. */
static void write_many(const char *path, int n)
{
    static const float one = 1;
    static const int64_t shape[1] = {1};
    clrt__st_item *items = TU_NONNULL(calloc((size_t)n, sizeof *items));
    char *names = TU_NONNULL(malloc((size_t)n * 16));
    for (int i = 0; i < n; i++) {
        snprintf(names + 16 * (size_t)i, 16, "t%d", i);
        items[i] = (clrt__st_item){names + 16 * (size_t)i, "F32", 1, shape, &one, sizeof one};
    }
    TU_OK(clrt__st_write(path, items, n, NULL, 0, "test"));
    free(names);
    free(items);
}

START_TEST(header_lookups_are_linear)
{
    enum { N = 20000 };
    char path[600], name[16];
    make_dir();
    snprintf(path, sizeof path, "%s/many.safetensors", dir);
    write_many(path, N);
    clrt__st_file f;
    uint64_t s0 = clrt__lookup_steps();
    TU_OK(clrt__st_read(path, &f));
    ck_assert_int_eq(f.count, N);
    assert_steps("reading the header", s0, 4.0 * N, N);
    s0 = clrt__lookup_steps();
    for (int i = 0; i < N; i++) {
        snprintf(name, sizeof name, "t%d", i);
        const clrt__st_tensor *t = clrt__st_find(&f, name);
        ck_assert_ptr_nonnull(t);
        ck_assert_str_eq(t->name, name);
    }
    ck_assert_ptr_null(clrt__st_find(&f, "t-1"));
    assert_steps("finding every tensor", s0, 4.0 * N, N);
    clrt__st_close(&f);

    /* A module that takes none of them: every one is "unexpected". */
    char skipped[64];
    clrt_module *relu = TU_NONNULL(clrt_relu());
    s0 = clrt__lookup_steps();
    TU_OK(clrt_module_load_ex(relu, path, 0, skipped, sizeof skipped));
    assert_steps("clrt_module_load_ex, all unexpected", s0, 8.0 * N, N);
    ck_assert_msg(strstr(skipped, "unexpected: t0, t1") != NULL, "%s", skipped);
    clrt_module_free(relu);
    remove_dir();
}
END_TEST

/* SGD with momentum over every parameter of m. */
static clrt_optimizer *sgd_of(clrt_module *m, int *count)
{
    int n = clrt_module_parameters(m, NULL, NULL, NULL, 0);
    ck_assert_int_gt(n, 0);
    clrt_tensor **p = TU_NONNULL(calloc((size_t)n, sizeof *p));
    clrt_tensor **g = TU_NONNULL(calloc((size_t)n, sizeof *g));
    ck_assert_int_eq(clrt_module_parameters(m, NULL, p, g, n), n);
    uint64_t s0 = clrt__lookup_steps();
    clrt_optimizer *o = TU_NONNULL(clrt_sgd(n, p, g, 0.1, 0.9, 0));
    assert_steps("clrt_sgd's check for a parameter listed twice", s0, 2.0 * n * log2(n), n);
    free(p);
    free(g);
    *count = n;
    return o;
}

START_TEST(checkpoint_of_many_layers_is_linear)
{
    enum { K = 2000 };
    char path[600];
    clrt_module *layers[K];
    make_dir();
    snprintf(path, sizeof path, "%s/ckpt", dir);
    for (int i = 0; i < K; i++)
        layers[i] = TU_NONNULL(clrt_linear(1, 1));
    clrt_module *m = TU_NONNULL(clrt_sequential(K, layers));
    TU_OK(clrt_module_to(m, tu_device()));
    int n = 0;
    clrt_optimizer *o = sgd_of(m, &n);
    ck_assert_int_eq(n, 2 * K);
    TU_OK(clrt_checkpoint_save(path, m, o, 3, 0, NULL));
    int64_t epoch = -1;
    uint64_t s0 = clrt__lookup_steps();
    TU_OK(clrt_checkpoint_load(path, m, o, 0, NULL, &epoch));
    ck_assert_int_eq(epoch, 3);
    /* Each file read twice (the pair check, then the load): 4 headers of n
     * entries, and a lookup per parameter and per momentum buffer. */
    assert_steps("clrt_checkpoint_load", s0, 24.0 * n, n);
    clrt_optimizer_free(o);
    clrt_module_free(m);
    remove_dir();
}
END_TEST

START_TEST(many_named_children_are_linear)
{
    enum { N = 20000 };
    clrt_module **mods = TU_NONNULL(calloc(N, sizeof *mods));
    char *text = TU_NONNULL(malloc((size_t)N * 16));
    const char **names = TU_NONNULL(calloc(N, sizeof *names));
    for (int i = 0; i < N; i++) {
        mods[i] = TU_NONNULL(clrt_relu());
        snprintf(text + 16 * (size_t)i, 16, "act%d", i);
        names[i] = text + 16 * (size_t)i;
    }
    uint64_t s0 = clrt__lookup_steps();
    clrt_module *m = TU_NONNULL(clrt_sequential_named(N, mods, names));
    /* The names in an index, the children sorted for a repeat. */
    assert_steps("clrt_sequential_named", s0, 4.0 * N + 2.0 * N * log2(N), N);
    ck_assert_str_eq(clrt_module_child_name(m, N - 1), names[N - 1]);
    clrt_module_free(m);
    free(names);
    free(text);
    free(mods);
}
END_TEST

static Suite *scale_suite(void)
{
    Suite *s = suite_create("load_scale");
    TCase *tc = tu_tcase("counts");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, header_lookups_are_linear);
    tcase_add_test(tc, checkpoint_of_many_layers_is_linear);
    tcase_add_test(tc, many_named_children_are_linear);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return tu_run(scale_suite()); }
