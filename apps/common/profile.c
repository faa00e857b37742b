/* --profile: a profiler trace over the whole run, then the operations with
 * the most device time as a table. */
#include "app.h"

#include <clrt/trace.h>
#include <stdlib.h>

#define TOP_OPS 10

int app_profile_begin(const char *prog)
{
    if (clrt_trace_start(NULL) == CLRT_OK) /* joins CLRT_TRACE's trace */
        return 0;
    fprintf(stderr, "%s: --profile: %s\n", prog, clrt_last_error());
    return 1;
}

static void print_table(FILE *f, const clrt_trace_op *ops, int n)
{
    double total = 0;
    for (int i = 0; i < n; i++)
        total += ops[i].total_ms;
    int shown = n < TOP_OPS ? n : TOP_OPS;
    fprintf(f, "profile: %.1f ms of device time in %d operations; the %d with the most:\n", total,
            n, shown);
    fprintf(f, "  %-40s %-7s %8s %11s %7s %10s\n", "operation", "kind", "calls", "total ms",
            "share", "mean us");
    for (int i = 0; i < shown; i++)
        fprintf(f, "  %-40.40s %-7s %8lld %11.2f %6.1f%% %10.1f\n", ops[i].name, ops[i].kind,
                ops[i].calls, ops[i].total_ms, 100 * ops[i].total_ms / total,
                1e3 * ops[i].total_ms / (double)ops[i].calls);
}

int app_profile_report(const char *prog, FILE *f)
{
    if (clrt_trace_stop() != CLRT_OK) {
        fprintf(stderr, "%s: --profile: %s\n", prog, clrt_last_error());
        return 1;
    }
    int n = clrt_trace_top(NULL, 0);
    clrt_trace_op *ops = n > 0 ? malloc((size_t)n * sizeof *ops) : NULL;
    if (n < 0 || (n > 0 && !ops)) {
        fprintf(stderr, "%s: --profile: %s\n", prog, n < 0 ? clrt_last_error() : "out of memory");
        return 1;
    }
    n = clrt_trace_top(ops, n);
    print_table(f, ops, n);
    free(ops);
    return 0;
}
