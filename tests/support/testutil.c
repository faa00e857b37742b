#include "testutil.h"

#include <ctype.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

uint64_t tu_seed(void)
{
    static uint64_t seed;
    if (seed == 0) {
        const char *env = getenv("CLRT_TEST_SEED");
        seed = env ? strtoull(env, NULL, 10) : ((uint64_t)time(NULL) << 20) ^ (uint64_t)getpid();
        if (seed == 0)
            seed = 1;
        fprintf(stderr, "test seed: CLRT_TEST_SEED=%llu\n", (unsigned long long)seed);
    }
    return seed;
}

uint64_t tu_next(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

double tu_uniform(uint64_t *state, double lo, double hi)
{
    return lo + (hi - lo) * ((double)(tu_next(state) >> 11) * 0x1.0p-53);
}

float *tu_random_floats(uint64_t *state, size_t n, double lo, double hi)
{
    float *x = malloc((n ? n : 1) * sizeof *x);
    ck_assert_ptr_nonnull(x);
    for (size_t i = 0; i < n; i++)
        x[i] = (float)tu_uniform(state, lo, hi);
    return x;
}

/* got[i] matches a reference value that is not finite: the same NaN-ness,
 * or the same infinity. */
static int same_nonfinite(double got, double ref) { return isnan(ref) ? isnan(got) : got == ref; }

double tu_rel_err(const float *got, const double *ref, size_t n, double floor)
{
    double max_ref = floor, max_diff = 0;
    if (n == 0 || !(floor > 0))
        return INFINITY; /* nothing compared proves nothing */
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(ref[i])) {
            if (!same_nonfinite(got[i], ref[i]))
                return INFINITY;
            continue;
        }
        if (!isfinite(got[i]))
            return INFINITY;
        max_ref = fmax(max_ref, fabs(ref[i]));
        max_diff = fmax(max_diff, fabs((double)got[i] - ref[i]));
    }
    return max_diff / max_ref;
}

double tu_matmul_ref(const float *a, const float *b, int64_t m, int64_t k, int64_t n, double *ref)
{
    double scale = 0;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double sum = 0, abs_sum = 0;
            for (int64_t p = 0; p < k; p++) {
                double t = (double)a[i * k + p] * b[p * n + j];
                sum += t;
                abs_sum += fabs(t);
            }
            ref[i * n + j] = sum;
            scale = abs_sum > scale ? abs_sum : scale;
        }
    return scale;
}

double tu_rel_diff(const float *a, const float *b, size_t n)
{
    double diff = 0, scale = 1e-30;
    if (n == 0)
        return INFINITY;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(a[i]) || !isfinite(b[i]))
            return INFINITY; /* fmax would drop a NaN: check it first */
        diff = fmax(diff, fabs((double)a[i] - b[i]));
        scale = fmax(scale, fabs((double)b[i]));
    }
    return diff / scale;
}

float *tu_read(const clrt_tensor *t)
{
    size_t n = (size_t)clrt_tensor_numel(t);
    float *x = malloc((n ? n : 1) * sizeof *x);
    ck_assert_ptr_nonnull(x);
    TU_OK(clrt_to_host(t, x, n * sizeof *x));
    return x;
}

void *tu_nonnull_(void *p, const char *what)
{
    ck_assert_msg(p != NULL, "%s returned NULL: %s", what, clrt_last_error());
    return p;
}

clrt_device *tu_device_lookup(void)
{
    const char *spec = getenv("CLRT_TEST_DEVICE");
    if (spec && *spec)
        return clrt_device_get(spec);
    return clrt_num_cpus() > 0 ? clrt_cpu() : clrt_gpu(0);
}

clrt_device *tu_device(void)
{
    clrt_device *d = tu_device_lookup();
    const char *spec = getenv("CLRT_TEST_DEVICE");
    ck_assert_msg(d != NULL, "the test device (CLRT_TEST_DEVICE=%s): %s", spec ? spec : "",
                  clrt_last_error());
    return d;
}

/* Spec number i of the comma list s, copied into out. 0 if there is none. */
static int list_item(const char *s, int i, char *out, size_t cap)
{
    for (; i > 0 && s; i--)
        s = (s = strchr(s, ',')) ? s + 1 : NULL;
    if (!s)
        return 0;
    size_t n = strcspn(s, ",");
    snprintf(out, cap, "%.*s", (int)(n < cap ? n : cap - 1), s);
    return n > 0;
}

/* Device k of the pair, or NULL with the reason in why. */
static clrt_device *pair_member(int k, char *why, size_t cap)
{
    const char *list = getenv("CLRT_TEST_DEVICES");
    char spec[32];
    clrt_device *d = NULL;
    if (!list || !*list) {
        if (!(d = clrt_device_at(k)))
            snprintf(why, cap,
                     "a multi-device suite needs two devices (%d found); with PoCL, set "
                     "POCL_DEVICES=\"pthread pthread\": %s",
                     clrt_device_count(), clrt_last_error());
    } else if (!list_item(list, k, spec, sizeof spec)) {
        snprintf(why, cap, "CLRT_TEST_DEVICES=%s: two device specs wanted, like cpu,cpu:1", list);
    } else if (!(d = clrt_device_get(spec))) {
        snprintf(why, cap, "CLRT_TEST_DEVICES=%s: %s", list, clrt_last_error());
    }
    return d;
}

/* Device i of the pair, or NULL with the reason in why. */
static clrt_device *pair_lookup(int i, char *why, size_t cap)
{
    clrt_device *d[2];
    for (int k = 0; k < 2; k++)
        if (!(d[k] = pair_member(k, why, cap)))
            return NULL;
    if (d[0] == d[1]) {
        snprintf(why, cap, "the two test devices are both %s", clrt_device_str(d[0]));
        return NULL;
    }
    return d[i != 0];
}

clrt_device *tu_device_pair(int i)
{
    char why[512];
    clrt_device *d = pair_lookup(i, why, sizeof why);
    ck_assert_msg(d != NULL, "%s", why);
    return d;
}

clrt_device *tu_device_pair_lookup(int i)
{
    char why[512];
    clrt_device *d = pair_lookup(i, why, sizeof why);
    if (!d)
        fprintf(stderr, "%s\n", why);
    return d;
}

const char *tu_fmt(const char *fmt, ...)
{
    static char ring[8][256];
    static int next;
    char *buf = ring[next++ % 8];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof ring[0], fmt, ap);
    va_end(ap);
    return buf;
}

int tu_same_platform(const clrt_device *a, const clrt_device *b)
{
    clrt_device_info ia, ib;
    TU_OK(clrt_device_info_get(a, &ia));
    TU_OK(clrt_device_info_get(b, &ib));
    return strcmp(ia.platform, ib.platform) == 0 &&
           strcmp(ia.driver_version, ib.driver_version) == 0;
}

int tu_count_device(const char *msg, const clrt_device *d)
{
    const char *name = clrt_device_str(d);
    size_t len = strlen(name);
    int n = 0;
    for (const char *p = msg; (p = strstr(p, name)) != NULL; p += len) {
        int word_start = p == msg || !(isalnum((unsigned char)p[-1]) || p[-1] == ':');
        int word_end = !(isalnum((unsigned char)p[len]) || p[len] == ':');
        n += word_start && word_end;
    }
    return n;
}

void tu_assert_pair_mismatch(const char *op)
{
    tu_assert_error(CLRT_EDEVMISMATCH, op, "clrt_tensor_to", NULL);
    const char *msg = clrt_last_error();
    clrt_device *d0 = tu_device_pair(0), *d1 = tu_device_pair(1);
    ck_assert_msg(tu_count_device(msg, d0) == 1 && tu_count_device(msg, d1) == 1,
                  "message should name %s and %s once each: %s", clrt_device_str(d0),
                  clrt_device_str(d1), msg);
}

int tu_small(void)
{
    static int small = -1;
    if (small < 0) {
        const char *env = getenv("CLRT_TEST_SIZE");
        small = env && strcmp(env, "small") == 0;
        ck_assert_msg(!env || small || strcmp(env, "full") == 0,
                      "CLRT_TEST_SIZE=%s: expected small or full", env);
    }
    return small;
}

void tu_assert_error(clrt_status want, ...)
{
    ck_assert_msg(clrt_last_status() == want, "expected %s, got %s: %s", clrt_status_name(want),
                  clrt_status_name(clrt_last_status()), clrt_last_error());
    va_list ap;
    va_start(ap, want);
    for (const char *needle; (needle = va_arg(ap, const char *)) != NULL;)
        ck_assert_msg(strstr(clrt_last_error(), needle) != NULL, "error message lacks '%s': %s",
                      needle, clrt_last_error());
    va_end(ap);
}

static void apply_env(const char *const *env)
{
    for (; env && *env; env++) {
        const char *eq = strchr(*env, '=');
        char name[256];
        snprintf(name, sizeof name, "%.*s", eq ? (int)(eq - *env) : (int)strlen(*env), *env);
        if (eq)
            setenv(name, eq + 1, 1);
        else
            unsetenv(name);
    }
}

int tu_run_child(const char *const *env, unsigned timeout_s, char *out, size_t cap)
{
    return tu_run_child_args(env, "child", timeout_s, out, cap);
}

int tu_run_child_args(const char *const *env, const char *arg, unsigned timeout_s, char *out,
                      size_t cap)
{
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        dup2(fds[1], 1);
        dup2(fds[1], 2);
        close(fds[0]);
        close(fds[1]);
        apply_env(env);
        alarm(timeout_s);
        execl("/proc/self/exe", "test-child", arg, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    size_t got = 0;
    char sink[4096]; /* what does not fit in out */
    for (;;) {
        int room = got + 1 < cap;
        ssize_t r = read(fds[0], room ? out + got : sink, room ? cap - 1 - got : sizeof sink);
        if (r <= 0)
            break;
        got += room ? (size_t)r : 0;
    }
    out[got] = '\0';
    close(fds[0]);
    int status = 0;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    return status;
}

void tu_skip(const char *fmt, ...)
{
    char reason[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    fprintf(stderr, "SKIPPED: %s\n", reason);
    const char *log = getenv("TU_SKIP_LOG");
    int fd = log ? open(log, O_WRONLY | O_APPEND) : -1;
    ck_assert_msg(fd >= 0, "tu_skip outside tu_run: %s", reason);
    dprintf(fd, "%s\n", reason);
    close(fd);
}

/* The skip reasons the tests wrote to the log, printed; returns how many. */
static int report_skips(const char *log)
{
    FILE *f = fopen(log, "r");
    char line[512];
    int n = 0;
    while (f && fgets(line, sizeof line, f)) {
        fprintf(stderr, "skipped: %s", line);
        n++;
    }
    if (f)
        fclose(f);
    return n;
}

/* A log file for tu_skip, named in the environment the forked tests see. */
static void open_skip_log(char *path, size_t cap)
{
    snprintf(path, cap, "/tmp/clrt-test-skips-XXXXXX");
    int fd = mkstemp(path);
    if (fd < 0) {
        perror("tu_run: mkstemp");
        exit(1);
    }
    close(fd);
    setenv("TU_SKIP_LOG", path, 1);
}

static int forking(void)
{
    const char *f = getenv("CK_FORK");
    return !f || strcmp(f, "no") != 0;
}

/* A forked test case ends in exit(). Work it left queued would run on the
 * driver's threads while exit() tears the process down: PoCL builds a
 * kernel's work-group function when it first runs it, and one that ran
 * after the exit handlers had destroyed LLVM's pass registry aborted the
 * child ("Failed to create kernel compiler pass inline-kernels"; a core of
 * test_reduce's test_errors showed the worker compiling while the main
 * thread ran CLBlast's destructors). So every device the case used is
 * drained first, as the README asks of programs. */
static void release_before_exit(void)
{
    if (!forking())
        return;
    (void)clrt_device_synchronize_all(); /* a test may leave a device failed */
    clrt_clblast_release_programs();
}

TCase *tu_tcase(const char *name)
{
    TCase *tc = tcase_create(name);
    tcase_add_checked_fixture(tc, NULL, release_before_exit);
    return tc;
}

int tu_run(Suite *s)
{
    tu_seed();
    /* Modules are built on the test device: made the default before the
     * tests fork (without an OpenCL call in this process). */
    const char *spec = getenv("CLRT_TEST_DEVICE");
    if (spec && *spec)
        setenv("CLRT_DEFAULT_DEVICE", spec, 0);
    char log[64];
    open_skip_log(log, sizeof log);
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_ENV); /* CK_VERBOSITY=verbose lists every test */
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    if (!forking())
        clrt_clblast_release_programs();
    int skipped = report_skips(log);
    unlink(log);
    if (failed)
        return 1;
    if (!skipped)
        return 0;
    /* A skip must show in ctest's summary, not pass as a whole program:
     * only a run of the cases tagged may_skip alone may skip. */
    const char *tags = getenv("CK_INCLUDE_TAGS");
    if (!tags || strcmp(tags, TU_MAY_SKIP) != 0) {
        fprintf(stderr, "tu_run: a test case not tagged " TU_MAY_SKIP " called tu_skip\n");
        return 1;
    }
    return TU_SKIP_EXIT;
}
