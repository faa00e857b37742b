/* What clrt-smi --tune measured (smi.h): square SGEMM through CLBlast on
 * the device with CLBlast's built-in parameters and with the stored ones.
 * CLBlast keeps parameters for the rest of a process, so each side runs
 * in a child process of clrt-smi (`--tune-child`, CLRT_GEMM=clblast so
 * that CPU devices take CLBlast too; CLRT_CLBLAST_TUNED=0 for the
 * built-in side), the two alternating round by round so that a busy
 * machine slows both alike. Each child says which parameters it ran with
 * (clrt_clblast_tuning_of) and, per size, the median time of products run
 * back to back after a first one (CLBlast's kernel builds). */
#include "smi.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_ROUNDS 15
#define MAX_REPS 15

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, by_value);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Seconds of one n x n x n product on d: the median of 3 to 15 runs
 * within about half a second, after a first run. < 0 on error. */
static double product_seconds(clrt_device *d, int n)
{
    int64_t shape[2] = {n, n};
    clrt_tensor *a = clrt_rand(d, 2, shape, 7), *b = clrt_rand(d, 2, shape, 8);
    clrt_tensor *c = clrt_empty(d, CLRT_F32, 2, shape);
    double t[MAX_REPS], start = now();
    int reps = 0, ok = a && b && c && clrt_matmul_out(c, a, b) == CLRT_OK &&
                       clrt_device_synchronize(d) == CLRT_OK;
    while (ok && reps < MAX_REPS && (reps < 3 || now() - start < 0.5)) {
        double t0 = now();
        ok = clrt_matmul_out(c, a, b) == CLRT_OK && clrt_device_synchronize(d) == CLRT_OK;
        t[reps++] = now() - t0;
    }
    clrt_tensor_release(a);
    clrt_tensor_release(b);
    clrt_tensor_release(c);
    return ok ? median(t, reps) : -1;
}

int smi_time_child(const char *device, const char *sizes)
{
    clrt_device *d = clrt_device_get(device);
    if (!d) {
        fprintf(stderr, "clrt-smi: %s\n", clrt_last_error());
        return 1;
    }
    printf("tuning %s\n", clrt_clblast_tuning_str(clrt_clblast_tuning_of(d)));
    for (const char *p = sizes; *p; p += strcspn(p, ",") + (p[strcspn(p, ",")] == ',')) {
        int n = atoi(p);
        double s = product_seconds(d, n);
        if (s < 0) {
            fprintf(stderr, "clrt-smi: SGEMM n=%d on %s: %s\n", n, device, clrt_last_error());
            return 1;
        }
        printf("result %d %.9f\n", n, s);
    }
    return 0;
}

/* One child's run: its seconds per size into secs. 0, or 1 after a
 * message (naming its log). */
static int run_side(const char *device, const char *dir, const char *sizes, int tuned, int round,
                    const int *want, int n_sizes, double *secs)
{
    static const char *const expect[2] = {"built-in", "tuned here"};
    const char *set[] = {"CLRT_GEMM=clblast",
                         tuned ? "CLRT_CLBLAST_TUNED=1" : "CLRT_CLBLAST_TUNED=0", NULL};
    char *argv[] = {"/proc/self/exe", "--tune-child", (char *)device, (char *)sizes, NULL};
    char log[4096], ran[64] = "";
    snprintf(log, sizeof log, "%s/time-%s-%d.log", dir, tuned ? "tuned" : "built-in", round);
    int rc = smi_run(argv, dir, set, log), got = 0;
    char *text = rc == 0 ? smi_read_file(log, 1 << 20) : NULL;
    for (char *line = text; line && *line;
         line += strcspn(line, "\n") + (line[strcspn(line, "\n")] != 0)) {
        int n = 0;
        double s = 0;
        if (sscanf(line, "tuning %63[^\n]", ran) == 1)
            continue;
        for (int i = 0; i < n_sizes && sscanf(line, "result %d %lf", &n, &s) == 2; i++)
            if (want[i] == n)
                secs[i] = s, got++;
    }
    free(text);
    if (rc == 0 && got == n_sizes && strcmp(ran, expect[tuned]) == 0)
        return 0;
    fprintf(stderr, "clrt-smi: the %s timing run on %s %s; its output: %s\n", expect[tuned], device,
            rc     ? "failed"
            : *ran ? "ran with other parameters than asked"
                   : "gave no result",
            log);
    return 1;
}

static double gflops(int n, double s) { return 2.0 * n * n * (double)n / s * 1e-9; }

int smi_time_tuned(const char *device, const char *dir, const int *sizes, int n_sizes, int rounds)
{
    static double secs[2][SMI_MAX_SIZES][MAX_ROUNDS];
    double col[SMI_MAX_SIZES], log_gain = 0;
    char list[256] = "";
    for (int i = 0; i < n_sizes; i++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%d", i ? "," : "", sizes[i]);
    rounds = rounds < MAX_ROUNDS ? rounds : MAX_ROUNDS;
    for (int r = 0; r < rounds; r++)
        for (int tuned = 0; tuned < 2; tuned++) {
            if (run_side(device, dir, list, tuned, r, sizes, n_sizes, col))
                return 1;
            for (int i = 0; i < n_sizes; i++)
                secs[tuned][i][r] = col[i];
        }
    printf("\nSGEMM C[n,n] = A[n,n] B[n,n] through CLBlast on %s: CLBlast's built-in parameters "
           "against the stored ones\n(%d round(s) of child processes, alternating; medians)\n\n"
           "%6s  %16s  %14s  %14s\n",
           device, rounds, "n", "built-in GFLOP/s", "tuned GFLOP/s", "tuned/built-in");
    for (int i = 0; i < n_sizes; i++) {
        double b = median(secs[0][i], rounds), t = median(secs[1][i], rounds);
        printf("%6d  %16.2f  %14.2f  %13.2fx\n", sizes[i], gflops(sizes[i], b), gflops(sizes[i], t),
               b / t);
        log_gain += log(b / t);
    }
    double gain = exp(log_gain / n_sizes);
    printf("\nclrt-smi: tuned/built-in over these sizes (geometric mean): %.2fx\n", gain);
    if (gain < 1)
        printf("clrt-smi: warning: the tuned parameters are slower than CLBlast's built-in ones "
               "here; a larger search (--tune-settings) may find better ones, and "
               "CLRT_CLBLAST_TUNED=0 leaves them unused\n");
    return 0;
}
