/* What tuning measured on a device, remembered across calls and runs:
 * small records (the convolution algorithm that won for a shape, the
 * CLBlast parameters a tuner found), keyed by a string the caller makes
 * and by the device, its driver and platform, and clrt's version, so that
 * another driver or release measures again. Kept in memory and, when the
 * program cache's folder is in use, in it (tuning.c; the folder's trust
 * rules and file format are the program cache's, cache_internal.h): a
 * record that is missing, altered or foreign reads as unknown (looked for
 * in the folder once a process: a file another process writes later is
 * not seen).
 * Thread-safe. */
#ifndef CLRT_TUNING_INTERNAL_H
#define CLRT_TUNING_INTERNAL_H

#include "runtime/device/device_internal.h"

#define CLRT__TUNING_MAX 4096 /* bytes in one record */

/* Copies d's record `key` into value (at most cap bytes) and returns its
 * size, or 0 when there is none (or it is larger than cap). */
size_t clrt__tuning_get(const clrt_device *d, const char *key, void *value, size_t cap);
/* Stores (replaces) d's record `key`: in memory, and in the folder at best
 * effort (a failure to write costs a measurement later). Returns 1 when
 * the record reached the folder, 0 when it lives in memory only (the
 * folder off or refused, a failed write) or was not kept at all (size 0
 * or above CLRT__TUNING_MAX, out of memory). */
int clrt__tuning_put(const clrt_device *d, const char *key, const void *value, size_t size);

#endif
