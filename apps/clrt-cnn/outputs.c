/* The files a run writes, checked before the work (a path that cannot be
 * written fails at once, not after the last epoch), and CLRT_TRACE's
 * trace written at the end with its result in the exit status. */
#include "cnn.h"

#include <clrt/file.h>
#include <clrt/trace.h>
#include <stdlib.h>

static int check(const char *path, const char *what)
{
    if (clrt_output_check(path, what) == CLRT_OK)
        return 0;
    fprintf(stderr, "clrt-cnn: %s\n", clrt_last_error());
    return 1;
}

int cnn_outputs_check(const cnn_options *o)
{
    char optim[4096];
    const char *trace = getenv("CLRT_TRACE");
    if (o->job.rank != 0) /* in an MPI job, rank 0 writes the files */
        return 0;
    if (o->save && snprintf(optim, sizeof optim, "%s.optim", o->save) >= (int)sizeof optim) {
        fprintf(stderr, "clrt-cnn: --save: path too long: %s\n", o->save);
        return 1;
    }
    return (o->save && (check(o->save, "--save") || check(optim, "--save"))) ||
           (o->plot && check(o->plot, "--plot")) || (trace && *trace && check(trace, "CLRT_TRACE"));
}

int cnn_outputs_finish(void)
{
    const char *trace = getenv("CLRT_TRACE");
    if (!trace || !*trace || !clrt_trace_recording())
        return 0;
    if (clrt_trace_stop() == CLRT_OK) {
        fprintf(stderr, "clrt-cnn: CLRT_TRACE: the trace is written to %s\n", trace);
        return 0;
    }
    fprintf(stderr, "clrt-cnn: CLRT_TRACE: %s\n", clrt_last_error());
    return 1;
}
