/* clrt-bench clblast: square SGEMM through CLBlast on one device with
 * CLBlast's own parameters for it, against parameters found by CLBlast's
 * tuners (clblast_tuner_xgemm, clblast_tuner_xgemm_direct; Debian's
 * clblast-utils) and applied with clrt_clblast_override.
 *
 * CLBlast keeps an override for the rest of a process, so each setting runs
 * in a child process of this program (CLRT_GEMM=clblast, so CPU devices take
 * CLBlast too); the two alternate for --rounds rounds, so a busy machine
 * slows both alike. Each child reports, per size, the median of several
 * timed products after a warm-up (CLBlast's kernel builds); the parent
 * prints the medians over rounds and the ratio tuned / default. */
#include "bench.h"

#include <clrt/clrt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_SIZES 16
#define MAX_ROUNDS 15
#define MAX_FILES 4

static int usage(FILE *f, int code)
{
    fprintf(f, "usage: clrt-bench clblast --tuned FILE.json [--tuned FILE.json ...]\n"
               "                          [--device SPEC] [--sizes N,N,...] [--rounds R]\n"
               "  Square SGEMM through CLBlast on SPEC (default: gpu:0 if any, else cpu) at\n"
               "  each size (default 64,128,256,512), with CLBlast's parameters and with\n"
               "  the best_parameters of tuner result files (clblast_xgemm_*_32.json,\n"
               "  clblast_xgemm_direct_*_32.json from CLBlast's tuners), alternating\n"
               "  R rounds (default 3) of child processes. scripts/clblast_tune.sh runs\n"
               "  the tuners and then this.\n");
    return code;
}

typedef struct {
    const char *device, *files[MAX_FILES];
    int n_files, sizes[MAX_SIZES], n_sizes, rounds, child, tuned;
    char sizes_arg[256];
} options;

/* The value of "key": "value" in a tuner's JSON file, into out. */
static int json_string_field(const char *text, const char *key, char *out, size_t cap)
{
    char pattern[64];
    snprintf(pattern, sizeof pattern, "\"%s\": \"", key);
    const char *at = strstr(text, pattern);
    if (!at)
        return 0;
    at += strlen(pattern);
    size_t n = strcspn(at, "\"");
    snprintf(out, cap, "%.*s", (int)(n < cap ? n : cap - 1), at);
    return 1;
}

/* Applies one tuner result file to d: its kernel family picks CLBlast's
 * kernel (xgemm_direct_* -> XgemmDirect, xgemm_* -> Xgemm). */
static int apply_tuned(clrt_device *d, const char *path)
{
    char text[1 << 16], family[64], params[1024];
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
    if (f)
        fclose(f);
    text[n] = '\0';
    if (!json_string_field(text, "kernel_family", family, sizeof family) ||
        !json_string_field(text, "best_parameters", params, sizeof params)) {
        fprintf(stderr, "clrt-bench clblast: %s: no kernel_family and best_parameters\n", path);
        return 0;
    }
    const char *kernel = strncmp(family, "xgemm_direct", 12) == 0 ? "XgemmDirect"
                         : strncmp(family, "xgemm", 5) == 0       ? "Xgemm"
                                                                  : NULL;
    if (!kernel || clrt_clblast_override(d, kernel, params) != CLRT_OK) {
        fprintf(stderr, "clrt-bench clblast: %s (%s): %s\n", path, family,
                kernel ? clrt_last_error() : "not a GEMM kernel family");
        return 0;
    }
    return 1;
}

/* Median seconds of one n x n x n product on d, after a warm-up; < 0 on error. */
static double time_size(clrt_device *d, int n)
{
    int64_t shape[2] = {n, n};
    clrt_tensor *a = clrt_rand(d, 2, shape, 1), *b = clrt_rand(d, 2, shape, 2);
    clrt_tensor *c = clrt_empty(d, CLRT_F32, 2, shape);
    double t[9];
    int reps = n <= 128 ? 9 : n <= 512 ? 5 : 3, ok = a && b && c;
    ok = ok && clrt_matmul_out(c, a, b) == CLRT_OK && clrt_device_synchronize(d) == CLRT_OK;
    for (int r = 0; ok && r < reps; r++) {
        double t0 = bench_now();
        ok = clrt_matmul_out(c, a, b) == CLRT_OK && clrt_device_synchronize(d) == CLRT_OK;
        t[r] = bench_now() - t0;
    }
    clrt_tensor_release(a);
    clrt_tensor_release(b);
    clrt_tensor_release(c);
    return ok ? bench_median(t, reps) : -1;
}

static int child_main(const options *o)
{
    clrt_device *d = clrt_device_get(o->device);
    if (!d) {
        fprintf(stderr, "clrt-bench clblast: %s\n", clrt_last_error());
        return 1;
    }
    for (int i = 0; o->tuned && i < o->n_files; i++)
        if (!apply_tuned(d, o->files[i]))
            return 1;
    for (int i = 0; i < o->n_sizes; i++) {
        double s = time_size(d, o->sizes[i]);
        if (s < 0)
            fprintf(stderr, "clrt-bench clblast: n=%d: %s\n", o->sizes[i], clrt_last_error());
        printf("result %d %.9f\n", o->sizes[i], s);
        fflush(stdout);
    }
    return 0;
}

/* One child run (tuned or not); fills secs[i] per size. 0 on failure. */
static int run_child(const options *o, int tuned, double *secs)
{
    char exe[4096], cmd[8192], line[256];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len <= 0)
        return 0;
    exe[len] = '\0';
    int at = snprintf(cmd, sizeof cmd,
                      "CLRT_GEMM=clblast '%s' clblast --child --device '%s' "
                      "--sizes %s",
                      exe, o->device, o->sizes_arg);
    for (int i = 0; i < o->n_files; i++)
        at += snprintf(cmd + at, sizeof cmd - (size_t)at, " --tuned '%s'", o->files[i]);
    if (!tuned)
        snprintf(cmd + at, sizeof cmd - (size_t)at, " --defaults");
    FILE *p = popen(cmd, "r");
    int got = 0;
    while (p && fgets(line, sizeof line, p)) {
        int n;
        double s;
        for (int i = 0; sscanf(line, "result %d %lf", &n, &s) == 2 && i < o->n_sizes; i++)
            if (o->sizes[i] == n)
                secs[i] = s, got++;
    }
    return p && pclose(p) == 0 && got == o->n_sizes;
}

static double gflops(int n, double s) { return s > 0 ? 2.0 * n * n * (double)n / s * 1e-9 : 0; }

static int parent_main(const options *o)
{
    double def[MAX_SIZES][MAX_ROUNDS], tun[MAX_SIZES][MAX_ROUNDS], col[MAX_SIZES];
    printf("SGEMM C[n,n] = A[n,n] B[n,n] through CLBlast on %s: CLBlast's parameters vs "
           "tuned ones\n(%d rounds of child processes, alternating; medians)\n",
           o->device, o->rounds);
    for (int r = 0; r < o->rounds; r++) {
        if (!run_child(o, 0, col))
            return 1;
        for (int i = 0; i < o->n_sizes; i++)
            def[i][r] = col[i];
        if (!run_child(o, 1, col))
            return 1;
        for (int i = 0; i < o->n_sizes; i++)
            tun[i][r] = col[i];
    }
    printf("\n%6s  %14s  %14s  %14s\n", "n", "default GFLOP/s", "tuned GFLOP/s", "tuned/default");
    for (int i = 0; i < o->n_sizes; i++) {
        double d = bench_median(def[i], o->rounds), t = bench_median(tun[i], o->rounds);
        printf("%6d  %14.2f  %14.2f  %13.2fx\n", o->sizes[i], gflops(o->sizes[i], d),
               gflops(o->sizes[i], t), d > 0 && t > 0 ? d / t : 0);
    }
    return 0;
}

/* "64,128" into o->sizes; 0 if malformed. */
static int parse_sizes(options *o, const char *arg)
{
    snprintf(o->sizes_arg, sizeof o->sizes_arg, "%s", arg);
    o->n_sizes = 0;
    for (char *save = NULL, *tok = strtok_r(o->sizes_arg, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        int v = atoi(tok);
        if (v < 1 || v > 8192 || o->n_sizes == MAX_SIZES)
            return 0;
        o->sizes[o->n_sizes++] = v;
    }
    snprintf(o->sizes_arg, sizeof o->sizes_arg, "%s", arg);
    return o->n_sizes > 0;
}

int bench_clblast(int argc, char **argv)
{
    options o = {.rounds = 3, .tuned = 1};
    clrt_device *best = clrt_num_gpus() > 0 ? clrt_gpu(0) : clrt_cpu();
    o.device = best ? clrt_device_str(best) : "cpu";
    int ok = parse_sizes(&o, "64,128,256,512");
    for (int i = 1; i < argc && ok; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--child") == 0)
            o.child = 1;
        else if (strcmp(a, "--defaults") == 0)
            o.tuned = 0;
        else if (strcmp(a, "--tuned") == 0 && v && o.n_files < MAX_FILES)
            o.files[o.n_files++] = argv[++i];
        else if (strcmp(a, "--device") == 0 && v)
            o.device = argv[++i];
        else if (strcmp(a, "--sizes") == 0 && v)
            ok = parse_sizes(&o, argv[++i]);
        else if (strcmp(a, "--rounds") == 0 && v)
            ok = (o.rounds = atoi(argv[++i])) >= 1 && o.rounds <= MAX_ROUNDS;
        else
            return strcmp(a, "--help") == 0 ? usage(stdout, 0) : usage(stderr, 2);
    }
    if (!ok || o.n_files == 0)
        return usage(stderr, 2);
    return o.child ? child_main(&o) : parent_main(&o);
}
