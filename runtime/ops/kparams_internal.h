/* Kernel parameters as data (kparams.c): a family of hand-written kernels
 * (or an algorithm choice) declares its tunable parameters and their legal
 * ranges; what a tuner found best for a shape class on a device is a
 * record in the tuning store (device/tuning.c), a line of text such as
 * "conv_vec_fwd/1 rb=2 pw=14", read back and checked against the family's
 * declaration before use. The defaults are the family's own, computed
 * from device queries; with no record (or CLRT_KERNELS_TUNED=0) they run.
 * A record that is not one of the family's (another family or version, a
 * missing, unknown or out-of-range parameter, text that does not parse) is
 * refused with CLRT_EFORMAT naming the record, and the defaults run.
 * The tuner's own trials go through a per-thread override (no record
 * written). Thread-safe. */
#ifndef CLRT_KPARAMS_INTERNAL_H
#define CLRT_KPARAMS_INTERNAL_H

#include "runtime/device/device_internal.h"

#include <stddef.h>

#define CLRT__KPARAMS_MAX 6 /* parameters of one family */

typedef struct {
    const char *name; /* a short identifier, as in the kernel's -D option */
    int lo, hi;       /* the legal range, inclusive */
} clrt__kparam;

typedef struct {
    const char *family; /* the record's name: "conv_vec_fwd" */
    int version;        /* bumped when a parameter's meaning changes */
    int n;              /* parameters, at most CLRT__KPARAMS_MAX */
    const clrt__kparam *params;
    /* Limits across parameters or from the device, past the ranges: NULL
     * when values may run on d, else why not (into why, cap bytes). NULL:
     * none. */
    const char *(*check)(const clrt_device *d, const int *values, char *why, size_t cap);
} clrt__kfamily;

/* values <- the parameters to run for family f at shape class `cls` on d:
 * the calling thread's trial values (clrt__kparams_try) if set, else the
 * device's valid record; either must pass f's check. Returns 1 when values were set; 0 when there
 * is no record (or tuned records are off), values untouched; CLRT_EFORMAT when a record is there
 * but refused, values untouched, clrt_last_error naming the record and why (a refused record also
 * warns once on stderr, and counts in clrt__kparams_refused). */
int clrt__kparams_get(const clrt_device *d, const clrt__kfamily *f, const char *cls, int *values);

/* Stores values (each within its range, else CLRT_EINVAL) as d's record
 * for (f, cls). Returns CLRT_OK whether or not the record reached the
 * cache folder (device/tuning.c: a folder off keeps it for the process). */
clrt_status clrt__kparams_put(const clrt_device *d, const clrt__kfamily *f, const char *cls,
                              const int *values);

/* Makes the calling thread's clrt__kparams_get return `values` for family
 * f (any class and device) until clrt__kparams_try(NULL, NULL): the
 * tuner's trials. One family at a time. */
void clrt__kparams_try(const clrt__kfamily *f, const int *values);

/* How many records this process has refused. */
unsigned clrt__kparams_refused(void);

/* "rb=2 pw=14": values by name, into out (cap bytes). */
void clrt__kparams_str(const clrt__kfamily *f, const int *values, char *out, size_t cap);

/* The record's key in the tuning store: "kp/<family>/<class>". */
void clrt__kparams_key(const clrt__kfamily *f, const char *cls, char *out, size_t cap);

#endif
