/* clrt-smi's parts: the device list (main.c) and `--tune` (tune.c, which
 * runs CLBlast's tuners through tune_tuner.c, times SGEMM through
 * tune_time.c and starts programs with tune_proc.c, then tunes clrt's own
 * kernels through tune_kernels.c). */
#ifndef CLRT_SMI_H
#define CLRT_SMI_H

#include <clrt/clrt.h>
#include <stddef.h>

#define SMI_MAX_SIZES 8

/* What `clrt-smi --tune` was asked; strings point into argv. */
typedef struct {
    const char *device; /* a device spec; NULL: gpu:0 if any, else cpu */
    const char *dir;    /* where the tuners write; NULL: a new folder under $TMPDIR */
    long settings;      /* about how many settings each tuner tries */
    long size;          /* the tuners' m = n = k; 0: by device kind */
    int sizes[SMI_MAX_SIZES], n_sizes; /* timed products' n; n_sizes 0: by device kind */
    int rounds;                        /* alternating rounds of timing children */
    const char *models; /* clrt's kernels: the models tuned (clrt_tune_options); NULL: its
                           default */
    int what;           /* SMI_TUNE_CLBLAST | SMI_TUNE_KERNELS */
} smi_tune_options;

enum { SMI_TUNE_CLBLAST = 1, SMI_TUNE_KERNELS = 2 };

/* `clrt-smi --tune`: tunes, stores, times, says what it measured. Returns
 * the exit status (0, or 1 after a message on stderr). */
int smi_tune(const smi_tune_options *o);

/* clrt's own kernels on d (tune_kernels.c): clrt_kernels_tune, a line
 * per record stored. Returns 0, or 1 after a message on stderr. */
int smi_tune_kernels(clrt_device *d, const clrt_device_info *info, const smi_tune_options *o);

/* One kernel's tuning (tune_tuner.c): CLBlast's tuner `program` on the
 * OpenCL device `info` names, about `settings` settings at m = n = k =
 * size, in folder dir. On success best holds the best_parameters, *ms its
 * time and *tried the settings that ran and matched the reference; best
 * is "" when none did. Returns 0, or 1 after a message on stderr. */
int smi_run_tuner(const char *program, const clrt_device_info *info, const char *dir, long settings,
                  long size, char *best, size_t cap, double *ms, int *tried);

/* SGEMM through CLBlast on a device, CLBlast's own parameters against the
 * stored ones (tune_time.c): `rounds` rounds of two child processes,
 * alternating, at each size; prints the table of medians. Returns 0, or 1
 * after a message. */
int smi_time_tuned(const char *device, const char *dir, const int *sizes, int n_sizes, int rounds);
/* The child's side (`clrt-smi --tune-child DEVICE N,N,...`): prints the
 * device's clrt_clblast_tuning_str, then "result N SECONDS" per size. */
int smi_time_child(const char *device, const char *sizes);

/* Runs argv[0] (looked up on PATH) in folder dir with the variables in set
 * ("NAME=VALUE", NULL-terminated; may be NULL) set, its standard output
 * and error into the file `log` (tune_proc.c). Returns its exit status,
 * 128 + the signal that ended it, or -1 when it could not start (errno;
 * ENOENT: not on PATH). */
int smi_run(char *const argv[], const char *dir, const char *const *set, const char *log);
/* The executable file `program` names (a path, or a name looked up on
 * PATH), into out: 1, or 0 when there is none. */
int smi_find_program(const char *program, char *out, size_t cap);
/* The file at path, read whole and NUL-terminated (at most max bytes):
 * malloc'ed, or NULL. */
char *smi_read_file(const char *path, size_t max);

#endif
