/* clrt-bench: measurements, each against a reference in the same run. */
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const bench_command commands[] = {
#define ENTRY(name, help) {#name, help, bench_##name},
    BENCH_COMMANDS(ENTRY)
#undef ENTRY
        {NULL, NULL, NULL}};

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

double bench_median(double *t, int n)
{
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

static void usage(FILE *f)
{
    fprintf(f, "usage: clrt-bench COMMAND [options]\n\ncommands:\n");
    for (const bench_command *c = commands; c->name; c++)
        fprintf(f, "  %-10s %s\n", c->name, c->help);
    fprintf(f, "\nclrt-bench COMMAND --help for each command's options.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    for (const bench_command *c = commands; c->name; c++)
        if (strcmp(argv[1], c->name) == 0)
            return c->run(argc - 1, argv + 1);
    fprintf(stderr, "clrt-bench: unknown command '%s'\n\n", argv[1]);
    usage(stderr);
    return 2;
}
