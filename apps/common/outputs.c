/* The files a run writes, checked before the work (a path that cannot be
 * written fails at once, not after the last epoch), and CLRT_TRACE's
 * trace written at the end with its result in the exit status. */
#include "app.h"

#include <clrt/file.h>
#include <clrt/trace.h>
#include <stdlib.h>

static int check(const char *prog, const char *path, const char *what)
{
    if (clrt_output_check(path, what) == CLRT_OK)
        return 0;
    fprintf(stderr, "%s: %s\n", prog, clrt_last_error());
    return 1;
}

int app_outputs_check(const char *prog, const app_job *job, const char *save, const char *path,
                      const char *what)
{
    char optim[4096];
    const char *trace = getenv("CLRT_TRACE");
    if (job && job->rank != 0) /* in an MPI job, rank 0 writes the files */
        return 0;
    if (save && snprintf(optim, sizeof optim, "%s.optim", save) >= (int)sizeof optim) {
        fprintf(stderr, "%s: --save: path too long: %s\n", prog, save);
        return 1;
    }
    return (save && (check(prog, save, "--save") || check(prog, optim, "--save"))) ||
           (path && check(prog, path, what)) ||
           (trace && *trace && check(prog, trace, "CLRT_TRACE"));
}

int app_outputs_finish(const char *prog)
{
    const char *trace = getenv("CLRT_TRACE");
    if (!trace || !*trace || !clrt_trace_recording())
        return 0;
    if (clrt_trace_stop() == CLRT_OK) {
        fprintf(stderr, "%s: CLRT_TRACE: the trace is written to %s\n", prog, trace);
        return 0;
    }
    fprintf(stderr, "%s: CLRT_TRACE: %s\n", prog, clrt_last_error());
    return 1;
}
