/* clrt/file.h — writing a program's output files the way the library
 * writes its own (checkpoints, traces): only where a regular file or
 * nothing stands (never over a link, FIFO, device or folder), through a
 * temporary file beside the destination that is synced and renamed over
 * it, so a failed or killed write leaves the previous file whole. A
 * program checks each output path before it starts its work, so that a
 * path it cannot write fails at once rather than after the work is done.
 *
 * `what` names the output in messages (e.g. "--plot"); NULL: the call's
 * name. Thread-safe for distinct paths. */
#ifndef CLRT_FILE_H
#define CLRT_FILE_H
#include <clrt/error.h>
#include <stddef.h>
#ifdef __cplusplus
extern "C" {
#endif

/* CLRT_OK when a file can be written at path now: the path is not empty,
 * its folder exists and takes a new file (one is made and removed), and
 * nothing but a regular file stands at path. Otherwise CLRT_EINVAL or
 * CLRT_EIO naming the path and why. Changes nothing. */
CLRT_API clrt_status clrt_output_check(const char *path, const char *what);
/* Writes size bytes as the whole of path, atomically as above. On any
 * error (a full disk included) path is as it was and the message names it. */
CLRT_API clrt_status clrt_output_write(const char *path, const void *data, size_t size,
                                       const char *what);

#ifdef __cplusplus
}
#endif
#endif
