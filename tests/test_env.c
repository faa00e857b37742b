/* Every CLRT_* variable the README lists, given a bad value, gets exactly
 * one warning on stderr naming it and its value, and the library works on
 * with the default (issue 14, defect 6: CLRT_GEMM=bogus was ignored
 * silently; CLRT_KERNEL_DIR and CLRT_CACHE_DIR pointing at no folder gave
 * no word). Good values and unset variables give none.
 *
 * Each case runs this program again as `test_env child` with one variable
 * set, which enumerates devices, runs two ops (building kernels, using the
 * program cache) and checks their results. */
#include "testutil.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static int child_main(void)
{
    int64_t n = 257;
    clrt_device *d = tu_device_lookup();
    clrt_tensor *a = d ? clrt_full(d, CLRT_F32, 1, &n, 1.5) : NULL;
    clrt_tensor *b = a ? clrt_add(a, a) : NULL;
    clrt_tensor *c = b ? clrt_mul(b, a) : NULL;
    float v[257];
    int ok = c && clrt_to_host(c, v, sizeof v) == CLRT_OK;
    for (int i = 0; ok && i < 257; i++)
        ok = v[i] == 4.5f;
    if (!ok)
        fprintf(stderr, "child: %s\n", clrt_last_error());
    clrt_tensor_release(a);
    clrt_tensor_release(b);
    clrt_tensor_release(c);
    return ok ? 0 : 1;
}

/* Runs the child with name=value (unset when value is NULL) and a fresh
 * cache folder; returns its output (stderr: the child prints nothing else). */
static void run_child(const char *name, const char *value, char *err, size_t cap)
{
    char dir[] = "/tmp/clrt-env-test-XXXXXX", cache[64], var[256], rm[64];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(cache, sizeof cache, "CLRT_CACHE_DIR=%s", dir);
    snprintf(var, sizeof var, value ? "%s=%s" : "%s", name ? name : "", value);
    const char *env[] = {cache, name ? var : NULL, NULL};
    int status = tu_run_child(env, 120, err, cap);
    snprintf(rm, sizeof rm, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(rm), 0);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s=%s: child failed: %s", name,
                  value ? value : "(unset)", err);
}

static int count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)) != NULL; p++)
        n++;
    return n;
}

static const struct {
    const char *name, *bad, *good;
} vars[] = {
    {"CLRT_VISIBLE_DEVICES", "first", NULL},
    {"CLRT_GEMM", "bogus", "clblast"},
    {"CLRT_CLBLAST_TUNED", "no", "0"},
    {"CLRT_CONV_ALGO", "fastest", "im2col"},
    {"CLRT_KERNEL_STYLE", "avx", "gpu"},
    {"CLRT_CONV_MEASURE_MACS", "1e6", "1000000"},
    {"CLRT_CONV_SCRATCH_BYTES", "12k", "1048576"},
    {"CLRT_CONV_SCRATCH_BYTES", "-5", NULL},
    {"CLRT_MEMORY_LIMIT", "0", "50%"},
    {"CLRT_MEMORY_LIMIT", "101%", "1000000000"},
    {"CLRT_CACHE", "yes", "1"},
    {"CLRT_CACHE_DIR", "/dev/null", NULL},
    {"CLRT_KERNEL_DIR", "/nonexistent-clrt-kernels", NULL},
    {"CLRT_POISON", "on", "0"},
    {"CLRT_KERNEL_WERROR", "yes", "1"},
    {"CLRT_VECTOR_WIDTH", "3", "8"},
    {"CLRT_TRACE", "/nonexistent-clrt-folder/trace.json", NULL},
};

START_TEST(bad_value_warns_once)
{
    static char err[16384];
    char needle[256];
    const char *name = vars[_i].name, *bad = vars[_i].bad;
    run_child(name, bad, err, sizeof err);
    ck_assert_msg(count(err, "clrt: warning:") == 1, "%s='%s': not one warning:\n%s", name, bad,
                  err);
    snprintf(needle, sizeof needle, "%s", name);
    if (strcmp(name, "CLRT_CACHE_DIR") != 0)
        snprintf(needle, sizeof needle, "%s='%s'", name, bad);
    else
        snprintf(needle, sizeof needle, "program cache folder %s", bad);
    ck_assert_msg(strstr(err, needle) != NULL, "warning lacks \"%s\":\n%s", needle, err);
    if (vars[_i].good) {
        run_child(name, vars[_i].good, err, sizeof err);
        ck_assert_msg(strstr(err, "warning") == NULL, "%s='%s' warned:\n%s", name, vars[_i].good,
                      err);
    }
}
END_TEST

/* CLRT_KERNEL_DIR at a folder that cannot give the kernels the child
 * needs: common.cl a FIFO (open() used to hang), binary.cl a 32 MiB sparse
 * file (read whole before; a kernel file is at most 16 MiB), the rest
 * missing (every op failed: issue 25). Each family falls back to the
 * embedded source with one warning naming its file; the ops work. */
START_TEST(kernel_dir_that_cannot_give_the_files)
{
    static char err[16384];
    char dir[] = "/tmp/clrt-env-kernels-XXXXXX", path[96], rm[96];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/common.cl", dir);
    ck_assert_int_eq(mkfifo(path, 0600), 0);
    snprintf(path, sizeof path, "%s/binary.cl", dir);
    FILE *f = fopen(path, "w");
    ck_assert_int_eq(ftruncate(fileno(f), 32 << 20), 0);
    fclose(f);
    run_child("CLRT_KERNEL_DIR", dir, err, sizeof err); /* fails unless the ops work */
    snprintf(rm, sizeof rm, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(rm), 0);
    ck_assert_msg(count(err, "clrt: warning:") == 2, "not two warnings:\n%s", err);
    ck_assert_msg(count(err, "clrt: warning:") == count(err, "using the embedded source"), "%s",
                  err);
    const char *files[] = {"common.cl: not a regular file (a FIFO)", "binary.cl: 33554432 bytes"};
    for (int i = 0; i < 2; i++)
        ck_assert_msg(count(err, files[i]) == 1, "not one warning with '%s':\n%s", files[i], err);
}
END_TEST

START_TEST(defaults_do_not_warn)
{
    static char err[16384];
    run_child(NULL, NULL, err, sizeof err);
    ck_assert_msg(strstr(err, "warning") == NULL, "warned:\n%s", err);
}
END_TEST

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "child") == 0)
        return child_main();
    Suite *s = suite_create("env");
    TCase *tc = tu_tcase("env");
    tcase_set_timeout(tc, 300);
    tcase_add_loop_test(tc, bad_value_warns_once, 0, (int)(sizeof vars / sizeof *vars));
    tcase_add_test(tc, defaults_do_not_warn);
    tcase_add_test(tc, kernel_dir_that_cannot_give_the_files);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
