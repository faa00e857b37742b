/* What the demo programs (clrt-cnn, clrt-lm) share: the progress bar, the
 * choice of devices from --device/--devices, and the MPI job around a
 * --distributed run. Everything here prints its own errors, prefixed with
 * the program's name. */
#ifndef CLRT_APP_H
#define CLRT_APP_H

#include <clrt/clrt.h>
#include <clrt/train.h>
#include <stdio.h>

/* A program's command line (args.c): its name, its usage text, and the
 * flags that take a value (NULL-terminated). */
typedef struct {
    const char *prog;
    void (*usage)(FILE *f);
    const char *const *valued_flags;
} app_cli;
/* Prints "PROG: FLAG 'VALUE': WHY" and the usage to stderr; returns -1. */
int app_bad(const app_cli *c, const char *flag, const char *value, const char *why);
/* An integer (a number) within [lo, hi] into *out; 0, or app_bad's -1. */
int app_parse_long(const app_cli *c, const char *flag, const char *s, long lo, long hi, long *out);
int app_parse_double(const app_cli *c, const char *flag, const char *s, double lo, double hi,
                     double *out);
/* argv[*i] as a flag and its value: "--flag=value" (the name copied into
 * name), or a valued flag and the next argument (*i advances). 0, or
 * app_bad's -1 for an unknown flag or a missing value. */
int app_flag_value(const app_cli *c, int argc, char **argv, int *i, char name[64],
                   const char **flag, const char **value);

/* What a resumed run must share with the saved one, as key/value strings
 * (run_desc.c; clrt_checkpoint_save's `run`): app_run_put formats a value
 * into the description's own room (79 bytes at most), app_run_pair adds
 * one the caller keeps alive. At most APP_RUN_KEYS pairs. */
enum { APP_RUN_KEYS = 20 };
typedef struct {
    char values[APP_RUN_KEYS][80];
    const char *pairs[2 * APP_RUN_KEYS];
    int n;
} app_run_desc;
void app_run_put(app_run_desc *r, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void app_run_pair(app_run_desc *r, const char *key, const char *value);

/* Progress bar state, one per training run (progress.c): redrawn in place
 * on a terminal, nothing otherwise (logs stay readable). */
typedef struct {
    int tty;
    int last_percent;
    const char *device;
} app_progress;
void app_progress_init(app_progress *p, const char *device);
/* A clrt_progress_fn; ctx is the app_progress. */
void app_progress_report(void *ctx, clrt_phase phase, int epoch, int64_t done, int64_t total);
void app_progress_clear(app_progress *p);

/* --distributed (job_mpi.c, or job_none.c when clrt is built without MPI).
 * begin initialises MPI and fills the job: its collective, this process's
 * rank in the job and on its host, the job's size; rank 0 prints, the
 * others' stdout goes to /dev/null. 0, or 1 after printing why. abort ends
 * the whole job after this rank printed its error (the others may be
 * waiting for it in a collective); end frees the collective and finalises
 * MPI. Without --distributed a job is {NULL, 0, 0, 1}. */
typedef struct {
    clrt_collective *world;
    int rank, local_rank, size;
    const char *prog;
} app_job;
int app_job_begin(int *argc, char ***argv, const char *prog, app_job *job);
void app_job_abort(const app_job *job, int rc);
void app_job_end(app_job *job);

/* --profile (profile.c): begin records a profiler trace (joining
 * CLRT_TRACE's); report stops it and prints the operations with the most
 * device time. Both return 0, or 1 after printing the error. */
int app_profile_begin(const char *prog);
int app_profile_report(const char *prog, FILE *f);

/* The files a run will write, checked before any work (outputs.c), each
 * where a regular file or nothing stands in a folder that takes a new
 * file: --save PATH and PATH.optim (save may be NULL), one more output
 * (path may be NULL; what names it: "--plot"), and CLRT_TRACE's. In an MPI
 * job only rank 0 writes, and checks. 0, or 1 after printing why. At the
 * end, app_outputs_finish writes CLRT_TRACE's trace (if one records) and
 * says whether it could. */
int app_outputs_check(const char *prog, const app_job *job, const char *save, const char *path,
                      const char *what);
int app_outputs_finish(const char *prog);

/* The devices to train on (devices.c): --devices LIST|all into dp (up to
 * CLRT_MAX_DATA_PARALLEL, *n_dp of them; "all" is every GPU, else cpu),
 * else --device, else in an MPI job the GPU of the local rank's number
 * (ranks beyond the GPUs share them) and otherwise the best device
 * (clrt_try_gpu(0)). The first device, or NULL after printing why. */
clrt_device *app_pick_device(const char *prog, const char *device, const char *devices,
                             const app_job *job, clrt_device **dp, int *n_dp);
/* "device gpu:0: NAME (MODEL, PLATFORM, GPU)" on stdout. */
void app_print_device(clrt_device *d);
/* The n data-parallel devices dp[], or d alone when n is 0. */
void app_print_devices(clrt_device *const *dp, int n, clrt_device *d);

#endif
