/* clrt-bench startup: time from a fresh process to its first finished
 * kernel (a clrt_add read back), with cold caches and with warm ones. Each
 * run is this program started again as `clrt-bench startup --child`:
 *   cold        empty CLRT_CACHE_DIR, the driver's own cache off
 *               (POCL_KERNEL_CACHE=0, CUDA_CACHE_DISABLE=1)
 *   clrt warm   CLRT_CACHE_DIR filled by an earlier run, driver cache off
 *   all warm    both caches filled by an earlier run
 * The ratios cold / warm show what the disk cache saves. */
#include "bench.h"

#include <clrt/clrt.h>

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_RUNS 51

typedef struct {
    double wall, enumerate, first_kernel; /* seconds */
    long builds;
} startup_run;

static int usage(FILE *f, int code)
{
    fprintf(f, "usage: clrt-bench startup [--device SPEC] [--runs R]\n"
               "  Starts R fresh processes (default 3) per cache state and reports the\n"
               "  median time to the first finished kernel on SPEC (default: gpu:0 if\n"
               "  any, else cpu), cold against warm.\n");
    return code;
}

/* --- the child: one start-up, timed from its first clrt call --- */

static int child(const char *spec)
{
    double t0 = bench_now();
    clrt_device *d = spec ? clrt_device_get(spec) : clrt_try_gpu(0);
    double t_enum = bench_now();
    int64_t n = 1000;
    clrt_tensor *a = d ? clrt_ones(d, CLRT_F32, 1, &n) : NULL;
    clrt_tensor *c = a ? clrt_add(a, a) : NULL;
    float v[1000];
    int ok = c && clrt_to_host(c, v, sizeof v) == CLRT_OK && v[999] == 2.0f;
    double t_first = bench_now();
    if (!ok)
        fprintf(stderr, "clrt-bench startup: %s\n", clrt_last_error());
    else
        printf("%.9f %.9f %ld\n", t_enum - t0, t_first - t_enum, clrt_program_builds());
    clrt_tensor_release(a);
    clrt_tensor_release(c);
    return ok ? 0 : 1;
}

/* --- the parent --- */

/* Starts the child with `env` (NULL-terminated "NAME=value" list) added. */
static int run_child(const char *spec, char *const *env, startup_run *out)
{
    int fds[2];
    if (pipe(fds) != 0)
        return 0;
    fflush(stdout);
    double t0 = bench_now();
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], 1);
        close(fds[0]);
        for (char *const *e = env; *e; e++)
            putenv(*e);
        execl("/proc/self/exe", "clrt-bench", "startup", "--child", spec ? spec : "", (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    char text[256] = "";
    ssize_t got = 0, n;
    while (pid > 0 && (n = read(fds[0], text + got, sizeof text - 1 - (size_t)got)) > 0)
        got += n;
    text[got > 0 ? got : 0] = '\0';
    close(fds[0]);
    int status = 1;
    if (pid < 0 || waitpid(pid, &status, 0) != pid || status != 0)
        return 0;
    out->wall = bench_now() - t0;
    return sscanf(text, "%lf %lf %ld", &out->enumerate, &out->first_kernel, &out->builds) == 3;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

/* Medians, field by field. */
static startup_run median_run(const startup_run *runs, int n)
{
    double v[3][MAX_RUNS];
    for (int i = 0; i < n; i++) {
        v[0][i] = runs[i].wall;
        v[1][i] = runs[i].enumerate;
        v[2][i] = runs[i].first_kernel;
    }
    startup_run m = {bench_median(v[0], n), bench_median(v[1], n), bench_median(v[2], n),
                     runs[n / 2].builds};
    return m;
}

typedef struct {
    const char *name;
    int fresh_cache_each; /* a new empty CLRT_CACHE_DIR per run */
    int driver_cache;
} cache_state;

/* R runs in one cache state (after one unmeasured run that fills the warm
 * caches); returns the medians, or wall < 0 on failure. */
static startup_run measure_state(const char *spec, const char *root, const cache_state *s, int runs)
{
    static char env[4][4200];
    char *envp[5] = {env[0], env[1], env[2], env[3], NULL};
    startup_run all[MAX_RUNS], failed = {-1, 0, 0, 0};
    snprintf(env[1], sizeof env[1], "POCL_KERNEL_CACHE=%d", s->driver_cache);
    snprintf(env[2], sizeof env[2], "CUDA_CACHE_DISABLE=%d", !s->driver_cache);
    snprintf(env[3], sizeof env[3], "POCL_CACHE_DIR=%s/pocl", root);
    for (int i = -1; i < runs; i++) {
        if (s->fresh_cache_each)
            snprintf(env[0], sizeof env[0], "CLRT_CACHE_DIR=%s/cold-%d", root, i + 1);
        else
            snprintf(env[0], sizeof env[0], "CLRT_CACHE_DIR=%s/warm", root);
        if (i < 0 && s->fresh_cache_each)
            continue; /* nothing to warm */
        startup_run r;
        if (!run_child(spec, envp, &r))
            return failed;
        if (i >= 0)
            all[i] = r;
    }
    return median_run(all, runs);
}

static void report(const char *spec, int runs, const startup_run *m, const cache_state *states,
                   int n)
{
    printf("start-up to the first finished kernel on %s, median of %d fresh processes\n",
           spec ? spec : "clrt_try_gpu(0)", runs);
    printf("  %-10s %12s %12s %14s %8s\n", "caches", "process ms", "enumerate ms", "first add ms",
           "builds");
    for (int i = 0; i < n; i++)
        printf("  %-10s %12.1f %12.1f %14.1f %8ld\n", states[i].name, m[i].wall * 1e3,
               m[i].enumerate * 1e3, m[i].first_kernel * 1e3, m[i].builds);
    for (int i = 1; i < n; i++)
        printf("  cold / %-9s process %6.2fx, first add %6.2fx\n", states[i].name,
               m[0].wall / m[i].wall, m[0].first_kernel / m[i].first_kernel);
}

int bench_startup(int argc, char **argv)
{
    const char *spec = NULL;
    int runs = 3;
    if (argc >= 2 && strcmp(argv[1], "--child") == 0)
        return child(argc >= 3 && argv[2][0] ? argv[2] : NULL);
    for (int i = 1; i < argc; i += 2) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
            return usage(stdout, 0);
        if (i + 1 >= argc)
            return usage(stderr, 2);
        if (strcmp(argv[i], "--device") == 0)
            spec = argv[i + 1];
        else if (strcmp(argv[i], "--runs") == 0)
            runs = atoi(argv[i + 1]);
        else
            return usage(stderr, 2);
    }
    if (runs < 1 || runs > MAX_RUNS)
        return usage(stderr, 2);
    char root[] = "/tmp/clrt-bench-startup-XXXXXX";
    if (!mkdtemp(root)) {
        perror("clrt-bench startup: mkdtemp");
        return 1;
    }
    const cache_state states[3] = {{"cold", 1, 0}, {"clrt warm", 0, 0}, {"all warm", 0, 1}};
    startup_run m[3];
    int ok = 1;
    for (int i = 0; i < 3 && ok; i++) {
        m[i] = measure_state(spec, root, &states[i], runs);
        ok = m[i].wall > 0;
    }
    if (ok)
        report(spec, runs, m, states, 3);
    else
        fprintf(stderr, "clrt-bench startup: a child run failed\n");
    nftw(root, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    return ok ? 0 : 1;
}
