/* clrt-smi --tune, clrt's own kernels (smi.h): clrt_kernels_tune on the
 * device, one line per record it stores: what, where, the default and the
 * chosen with their best times. */
#include "smi.h"

#include <stdio.h>

typedef struct {
    int records, faster;
    double default_ms, chosen_ms; /* sums where both ran */
} tally;

static void print_result(const clrt_tune_result *r, void *user)
{
    tally *t = user;
    char def[32] = "-", chosen[32] = "-";
    if (r->default_ms >= 0)
        snprintf(def, sizeof def, "%.3f", r->default_ms);
    if (r->chosen_ms >= 0)
        snprintf(chosen, sizeof chosen, "%.3f", r->chosen_ms);
    printf("%-12s %-62s %-16s %9s ms  %-16s %9s ms  (%d timed)\n", r->what, r->where, r->defaults,
           def, r->chosen, chosen, r->candidates);
    fflush(stdout);
    t->records++;
    if (r->default_ms >= 0 && r->chosen_ms >= 0) {
        t->default_ms += r->default_ms, t->chosen_ms += r->chosen_ms;
        t->faster += r->chosen_ms < r->default_ms;
    }
}

int smi_tune_kernels(clrt_device *d, const clrt_device_info *info, const smi_tune_options *o)
{
    clrt_tune_options to = {o->models, o->rounds};
    tally t = {0, 0, 0, 0};
    printf("clrt-smi: tuning clrt's kernels on %s (%s, driver %s): models %s, %d rounds\n",
           info->name, info->model, info->driver_version,
           o->models ? o->models : "lenet:256,seed-cnn:256,resnet18:128", o->rounds);
    printf("%-12s %-62s %-16s %12s  %-16s %12s\n", "WHAT", "WHERE", "DEFAULT", "BEST RUN", "STORED",
           "BEST RUN");
    if (clrt_kernels_tune(d, &to, print_result, &t) != CLRT_OK) {
        fprintf(stderr, "clrt-smi: %s\n", clrt_last_error());
        return 1;
    }
    printf("clrt-smi: %d records stored for %s under driver %s, %d of them other than the "
           "default; where both ran, %.1f ms at the defaults against %.1f ms stored (%.2fx)\n",
           t.records, info->model, info->driver_version, t.faster, t.default_ms, t.chosen_ms,
           t.chosen_ms > 0 ? t.default_ms / t.chosen_ms : 0);
    return 0;
}
