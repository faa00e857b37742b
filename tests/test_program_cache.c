/* The program cache across processes: a second process with the same
 * CLRT_CACHE_DIR builds nothing; damaged or foreign cache files are rebuilt
 * and rewritten; CLRT_CACHE=0 writes nothing; a kernel that does not compile
 * fails with its build log.
 *
 * The "processes" are this program run again as `test_program_cache child`,
 * which uses two kernel families (random, binary), checks the results and
 * prints how many programs it built from source. */
#include "philox_ref.h"
#include "testutil.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHILD_N 1001
#define CHILD_SEED 0x123456789abcdefULL

/* --- the child --- */

static int child_results_ok(clrt_device *d)
{
    int64_t n = CHILD_N;
    float a[CHILD_N], r[CHILD_N], s[CHILD_N];
    for (int k = 0; k < CHILD_N; k++)
        a[k] = (float)k;
    clrt_tensor *tr = clrt_rand(d, 1, &n, CHILD_SEED);
    clrt_tensor *ta = clrt_from_host(d, CLRT_F32, 1, &n, a);
    clrt_tensor *tsum = ta ? clrt_add(ta, ta) : NULL;
    int ok = tr && tsum && clrt_to_host(tr, r, sizeof r) == CLRT_OK &&
             clrt_to_host(tsum, s, sizeof s) == CLRT_OK;
    for (int k = 0; ok && k < CHILD_N; k++)
        ok = r[k] == tu_philox_uniform(CHILD_SEED, (uint64_t)k) && s[k] == 2.0f * (float)k;
    if (!ok)
        fprintf(stderr, "child: wrong results or a failure: %s\n", clrt_last_error());
    clrt_tensor_release(tr), clrt_tensor_release(ta), clrt_tensor_release(tsum);
    return ok;
}

static int child_main(void)
{
    clrt_device *d = clrt_default_device(); /* the test device (tu_run: CLRT_DEFAULT_DEVICE) */
    int ok = d && child_results_ok(d);
    printf("builds=%ld ok=%d\n", clrt_program_builds(), ok);
    return ok ? 0 : 1;
}

/* --- the parent --- */

/* Runs the child with CLRT_CACHE_DIR=dir (and CLRT_CACHE=cache if not
 * NULL); returns its program builds, after checking it succeeded. */
static long run_child(const char *dir, const char *cache)
{
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    fflush(stdout);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        dup2(fds[1], 1);
        close(fds[0]);
        setenv("CLRT_CACHE_DIR", dir, 1);
        if (cache)
            setenv("CLRT_CACHE", cache, 1);
        else
            unsetenv("CLRT_CACHE");
        execl("/proc/self/exe", "test_program_cache", "child", (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    char out[256] = "";
    ssize_t got = 0, n;
    while ((n = read(fds[0], out + got, sizeof out - 1 - (size_t)got)) > 0)
        got += n;
    out[got > 0 ? got : 0] = '\0';
    close(fds[0]);
    int status = 0;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    long builds = -1;
    int ok = 0;
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0 &&
                      sscanf(out, "builds=%ld ok=%d", &builds, &ok) == 2 && ok,
                  "child failed (status %d): '%s'", status, out);
    return builds;
}

static void fresh_dir(char *path) /* path: a mkdtemp template */
{
    ck_assert_ptr_nonnull(mkdtemp(path));
}

/* Names of the regular files in dir (at most max); returns how many. */
static int list_files(const char *dir, char names[][512], int max)
{
    DIR *d = opendir(dir);
    int n = 0;
    if (!d)
        return 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        if (e->d_name[0] != '.' && n < max)
            snprintf(names[n++], 512, "%s/%s", dir, e->d_name);
    closedir(d);
    return n;
}

static void remove_dir(const char *dir)
{
    char names[64][512];
    int n = list_files(dir, names, 64);
    for (int i = 0; i < n; i++)
        unlink(names[i]);
    rmdir(dir);
}

static long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

static void write_file(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(data, 1, n, f), n);
    ck_assert_int_eq(fclose(f), 0);
}

static size_t read_file(const char *path, char *buf, size_t cap)
{
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    size_t n = fread(buf, 1, cap, f);
    fclose(f);
    return n;
}

START_TEST(second_process_compiles_nothing)
{
    char dir[] = "/tmp/clrt-cache-test-XXXXXX";
    fresh_dir(dir);
    long first = run_child(dir, NULL);
    ck_assert_int_ge(first, 2); /* random and binary */
    char names[64][512];
    ck_assert_int_eq(list_files(dir, names, 64), first);
    ck_assert_int_eq(run_child(dir, NULL), 0);
    remove_dir(dir);
}
END_TEST

/* Each way of damaging every cache file: the child must get correct
 * results, rebuild, and leave files a third run can use. */
typedef enum { TRUNCATE, GARBAGE, FOREIGN, EMPTY } damage;

static void damage_files(char names[][512], int n, damage how)
{
    static char buf[1 << 22], first[1 << 22];
    size_t first_size = read_file(names[0], first, sizeof first);
    ck_assert_uint_lt(first_size, sizeof first);
    for (int i = 0; i < n; i++) {
        size_t size = read_file(names[i], buf, sizeof buf);
        if (how == TRUNCATE) {
            ck_assert_int_eq(truncate(names[i], (off_t)(size / 2)), 0);
        } else if (how == GARBAGE) {
            for (size_t k = 0; k < size; k++)
                buf[k] = (char)(k * 131 + 7);
            write_file(names[i], buf, size);
        } else if (how == EMPTY) {
            write_file(names[i], buf, 0);
        } else if (i + 1 < n) { /* FOREIGN: each gets the next one's valid file */
            size = read_file(names[i + 1], buf, sizeof buf);
            write_file(names[i], buf, size);
        } else {
            write_file(names[i], first, first_size);
        }
    }
}

static void check_survives(damage how)
{
    char dir[] = "/tmp/clrt-cache-test-XXXXXX";
    fresh_dir(dir);
    long builds = run_child(dir, NULL);
    char names[64][512];
    int n = list_files(dir, names, 64);
    ck_assert_int_eq(n, builds);
    long good_size[64];
    for (int i = 0; i < n; i++)
        good_size[i] = file_size(names[i]);
    damage_files(names, n, how);
    ck_assert_int_eq(run_child(dir, NULL), builds); /* every damaged one rebuilt */
    ck_assert_int_eq(list_files(dir, names, 64), n);
    for (int i = 0; i < n; i++) /* rewritten whole (same source, same driver) */
        ck_assert_int_eq(file_size(names[i]), good_size[i]);
    ck_assert_int_eq(run_child(dir, NULL), 0);
    remove_dir(dir);
}

START_TEST(truncated_files_are_rebuilt) { check_survives(TRUNCATE); }
END_TEST
START_TEST(garbage_files_are_rebuilt) { check_survives(GARBAGE); }
END_TEST
START_TEST(empty_files_are_rebuilt) { check_survives(EMPTY); }
END_TEST
START_TEST(foreign_files_are_rebuilt) { check_survives(FOREIGN); }
END_TEST

START_TEST(cache_off_writes_nothing)
{
    char dir[] = "/tmp/clrt-cache-test-XXXXXX";
    fresh_dir(dir);
    ck_assert_int_ge(run_child(dir, "0"), 2);
    ck_assert_int_ge(run_child(dir, "0"), 2);
    char names[4][512];
    ck_assert_int_eq(list_files(dir, names, 4), 0);
    remove_dir(dir);
}
END_TEST

/* --- build failures --- */

static void copy_kernel(const char *name, const char *to_dir)
{
    const char *src = getenv("CLRT_SOURCE_DIR");
    ck_assert_msg(src != NULL, "CLRT_SOURCE_DIR is not set (ctest sets it)");
    char from[1024], to[1024];
    static char buf[1 << 20];
    snprintf(from, sizeof from, "%s/clkernels/%s", src, name);
    snprintf(to, sizeof to, "%s/%s", to_dir, name);
    size_t n = read_file(from, buf, sizeof buf);
    write_file(to, buf, n);
}

static const char broken_random[] =
    "__kernel void rand_uniform(__global float *out, ulong n, uint lo, uint hi)\n"
    "{\n"
    "    out[0] = clrt_no_such_identifier + lo;\n"
    "}\n";

START_TEST(build_failure_reports_the_log)
{
    char kdir[] = "/tmp/clrt-kernels-test-XXXXXX", cdir[] = "/tmp/clrt-cache-test-XXXXXX";
    fresh_dir(kdir);
    fresh_dir(cdir);
    copy_kernel("common.cl", kdir);
    char path[1024];
    snprintf(path, sizeof path, "%s/random.cl", kdir);
    write_file(path, broken_random, strlen(broken_random));
    setenv("CLRT_KERNEL_DIR", kdir, 1);
    setenv("CLRT_CACHE_DIR", cdir, 1);
    int64_t n = 10;
    for (int attempt = 0; attempt < 2; attempt++) { /* a failure is not cached */
        ck_assert_ptr_null(clrt_rand(tu_device(), 1, &n, 1));
        tu_assert_error(CLRT_EBUILD, "'random'", clrt_device_str(tu_device()), "build log",
                        "clrt_no_such_identifier", NULL);
    }
    char names[4][512];
    ck_assert_int_eq(list_files(cdir, names, 4), 0);
    /* A family missing from the directory is an I/O error naming the file. */
    int64_t s[1] = {3};
    clrt_tensor *a = TU_NONNULL(clrt_zeros(tu_device(), CLRT_F32, 1, s));
    ck_assert_ptr_null(clrt_add(a, a));
    tu_assert_error(CLRT_EIO, "binary.cl", NULL);
    clrt_tensor_release(a);
    unsetenv("CLRT_KERNEL_DIR");
    remove_dir(kdir);
    remove_dir(cdir);
}
END_TEST

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "child") == 0)
        return child_main();
    Suite *s = suite_create("program_cache");
    TCase *tc = tcase_create("program_cache");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, second_process_compiles_nothing);
    tcase_add_test(tc, truncated_files_are_rebuilt);
    tcase_add_test(tc, garbage_files_are_rebuilt);
    tcase_add_test(tc, empty_files_are_rebuilt);
    tcase_add_test(tc, foreign_files_are_rebuilt);
    tcase_add_test(tc, cache_off_writes_nothing);
    tcase_add_test(tc, build_failure_reports_the_log);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
