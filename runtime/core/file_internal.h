/* Files the library reads and writes, each one way (issue 25):
 *
 * Reading: clrt__file_open_read opens without blocking (a FIFO would hang
 * open() and read() until a writer came) and accepts only a regular file
 * no larger than the caller says the thing it holds can be, checked with
 * fstat before a byte is read.
 *
 * Writing: an output goes only where a regular file or nothing stands
 * (never over a link, FIFO, device or folder), through a temporary file
 * beside it, "<path>.tmp-<pid>@<host>-XXXXXX", written in full, synced,
 * and renamed over the path (the folder synced after), so a failed or
 * killed write leaves the previous file whole. Temporary files of the same
 * path left by a writer that is gone (its pid on this host no longer
 * runs, or an hour old) are removed when the next write of that path
 * begins. A write that fails (ENOSPC, EFBIG, EIO) is an error naming the
 * path.
 *
 * Thread-safe for distinct files. Free of OpenCL (the fuzz targets build
 * it). */
#ifndef CLRT_FILE_INTERNAL_H
#define CLRT_FILE_INTERNAL_H

#include <clrt/error.h>

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define CLRT__PATH_CAP 4096

/* Opens path for reading: a regular file of at most max bytes. Returns the
 * descriptor (blocking again, close-on-exec) and its size in *size, or -1
 * after clrt__fail naming `what` and path (CLRT_EIO: cannot open, not a
 * regular file; CLRT_EFORMAT: larger than max). */
int clrt__file_open_read(const char *path, uint64_t max, const char *what, uint64_t *size);
/* 1 when all n bytes were read from fd at its position (or at off for
 * pread_full), 0 at a read error or an early end of file. */
int clrt__read_full(int fd, void *buf, size_t n);
int clrt__pread_full(int fd, void *buf, size_t n, uint64_t off);
/* 1 when all n bytes were written. */
int clrt__write_full(int fd, const void *buf, size_t n);
/* A whole regular file of at most max bytes into a malloc'ed buffer with a
 * NUL after it; NULL after clrt__fail as clrt__file_open_read. */
char *clrt__file_read_text(const char *path, uint64_t max, const char *what, size_t *size);

/* An output being written. */
typedef struct {
    char path[CLRT__PATH_CAP]; /* the destination */
    char tmp[CLRT__PATH_CAP];  /* the temporary file beside it */
    const char *what;          /* names the output in messages, e.g. "--save" */
    int fd;                    /* -1 once closed */
    FILE *stream;              /* clrt__out_stream's, or NULL */
    clrt_status st;            /* the first failure */
} clrt__out_file;

/* Whether path can be written now: not empty, its folder exists and takes
 * a new file (one is made and removed), and nothing but a regular file
 * stands at path. CLRT_OK, or CLRT_EINVAL/CLRT_EIO with a message that
 * names `what`, the path and why. Changes nothing. */
clrt_status clrt__out_check(const char *path, const char *what);
/* Begins a write of path: the checks above, stale temporary files of path
 * removed, the temporary file made. On error f needs no clrt__out_abort. */
clrt_status clrt__out_open(clrt__out_file *f, const char *path, const char *what);
/* Appends n bytes; the first failure is kept in f->st and returned. */
clrt_status clrt__out_write(clrt__out_file *f, const void *p, size_t n);
/* A stdio stream on the temporary file (buffered writes: the trace's
 * JSON); NULL + error. clrt__out_finish flushes and closes it. */
FILE *clrt__out_stream(clrt__out_file *f);
/* Ends writing: flush, fsync, mode 0644, close. The temporary file stays
 * until clrt__out_rename or clrt__out_abort; on error it is removed. */
clrt_status clrt__out_finish(clrt__out_file *f);
/* Renames the finished temporary file over path, after checking once more
 * that nothing but a regular file stands there, and syncs the folder. On
 * error the temporary file is removed and path is as it was. */
clrt_status clrt__out_rename(clrt__out_file *f);
/* finish + rename. */
clrt_status clrt__out_commit(clrt__out_file *f);
/* Removes the temporary file (any state; a no-op after a commit). */
void clrt__out_abort(clrt__out_file *f);

/* Calls fn(tmp_path, ctx) for each temporary file of path ("<path>.tmp-*")
 * in its folder, oldest writers included, and returns how many there
 * were. For a reader that may finish what a killed writer left. */
int clrt__out_temporaries(const char *path, void (*fn)(const char *tmp, void *ctx), void *ctx);
/* Removes path's temporary files whose writer is gone. */
void clrt__out_remove_stale(const char *path);

/* Test seam (internal, never exported): when set, called at each step of
 * an output's write ("create", "write", "sync", "close", "rename",
 * "folder") with the destination path; a kill-loop test stops the
 * process there. NULL in normal use. */
extern void (*clrt__out_hook)(const char *step, const char *path);

#endif
