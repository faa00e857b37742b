/* Helpers every clrt-bench command shares: the clock, medians, size lists,
 * the device choice and the --json writer. */
#include "bench.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bench_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int bench_parse_sizes(const char *arg, int *sizes, int cap, long lo, long hi)
{
    int n = 0;
    for (const char *s = arg; s && *s;) {
        char *end;
        long v = strtol(s, &end, 10);
        if (end == s || v < lo || v > hi || n == cap || (*end && *end != ','))
            return -1;
        sizes[n++] = (int)v;
        s = *end ? end + 1 : end;
    }
    return n > 0 ? n : -1;
}

/* Applies one option's value; 0 if it is not acceptable. */
static int set_opt(const bench_opt *o, const char *v)
{
    char *end;
    if (o->kind == BENCH_STR) {
        *(const char **)o->dest = v;
        return 1;
    }
    errno = 0;
    long n = strtol(v, &end, 10);
    if (end == v || *end || errno || n < o->lo || n > o->hi) {
        fprintf(stderr, "clrt-bench: %s '%s': expected an integer from %ld to %ld\n", o->flag, v,
                o->lo, o->hi);
        return 0;
    }
    *(int *)o->dest = (int)n;
    return 1;
}

int bench_parse_opts(int argc, char **argv, const bench_opt *opts, int (*usage)(FILE *, int))
{
    for (int i = 1; i < argc; i++) {
        const bench_opt *o = opts;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
            return usage(stdout, 0);
        while (o->flag && strcmp(o->flag, argv[i]) != 0)
            o++;
        if (o->flag && o->kind == BENCH_FLAG)
            *(int *)o->dest = 1;
        else if (!o->flag || i + 1 >= argc || !set_opt(o, argv[++i]))
            return usage(stderr, 2);
    }
    return -1;
}

clrt_device *bench_device(const char *command, const char *spec)
{
    clrt_device *d = spec ? clrt_device_get(spec) : clrt_try_gpu(0);
    if (!d)
        fprintf(stderr, "clrt-bench %s: %s\n", command, clrt_last_error());
    return d;
}

void bench_json_begin(bench_json *j, int on, const char *command)
{
    j->on = on;
    j->rows = 0;
    if (on)
        printf("{\"command\": \"%s\", \"rows\": [", command);
}

void bench_json_row(bench_json *j, const char *fmt, ...)
{
    if (!j->on)
        return;
    va_list ap;
    va_start(ap, fmt);
    printf("%s\n  {", j->rows++ ? "," : "");
    vprintf(fmt, ap);
    printf("}");
    va_end(ap);
}

void bench_json_end(bench_json *j, const char *fmt, ...)
{
    if (!j->on)
        return;
    va_list ap;
    va_start(ap, fmt);
    printf("\n], ");
    vprintf(fmt, ap);
    printf("}\n");
    va_end(ap);
    fflush(stdout);
}

const char *bench_json_str(const char *s, char *buf, size_t cap)
{
    size_t o = 0;
    if (cap < 3)
        return "\"\"";
    buf[o++] = '"';
    for (; s && *s && o + 8 < cap; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            o += (size_t)snprintf(buf + o, cap - o, "\\%c", c);
        else if (c < 0x20)
            o += (size_t)snprintf(buf + o, cap - o, "\\u%04x", c);
        else
            buf[o++] = (char)c;
    }
    buf[o++] = '"';
    buf[o] = '\0';
    return buf;
}

const char *bench_json_device(clrt_device *d, char *buf, size_t cap)
{
    clrt_device_info info;
    char model[512], platform[512];
    if (clrt_device_info_get(d, &info) != CLRT_OK) {
        snprintf(buf, cap, "\"device\": \"%s\"", clrt_device_str(d));
        return buf;
    }
    snprintf(buf, cap,
             "\"device\": \"%s\", \"device_model\": %s, \"platform\": %s, "
             "\"gemm_path\": \"%s\"",
             clrt_device_str(d), bench_json_str(info.model, model, sizeof model),
             bench_json_str(info.platform, platform, sizeof platform),
             clrt_gemm_path_str(info.gemm_path));
    return buf;
}
