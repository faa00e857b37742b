/* CLRT_PROGRAM_LOG: the programs a run builds and the work-group shapes it
 * launches, for scripts/nvptx.sh (program_log_internal.h). */
#include "runtime/device/program_log_internal.h"
#include "runtime/core/env_internal.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Hashes of the lines written; when full, lines are written again (the
 * reader keeps distinct ones). */
#define SEEN_SLOTS 8192
#define LINE_MAX_BYTES 2048

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t seen[SEEN_SLOTS];
static int log_fd = -2; /* -2: not opened yet, -1: could not be */

static uint64_t line_hash(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
    return h ? h : 1;
}

/* 1 when line was not seen before (and is now). Under log_lock. */
static int first_sight(const char *line)
{
    uint64_t h = line_hash(line);
    for (size_t i = 0, at = h % SEEN_SLOTS; i < SEEN_SLOTS; i++, at = (at + 1) % SEEN_SLOTS) {
        if (seen[at] == h)
            return 0;
        if (!seen[at]) {
            seen[at] = h;
            return 1;
        }
    }
    return 1;
}

/* The log's descriptor, opened at the first line; -1 after one warning
 * when it cannot be. Under log_lock. */
static int log_file(void)
{
    if (log_fd == -2) {
        const char *path = clrt__env()->program_log;
        log_fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
        if (log_fd < 0)
            fprintf(stderr, "clrt: warning: CLRT_PROGRAM_LOG='%s' cannot be opened; no log\n",
                    path);
    }
    return log_fd;
}

/* s as one field: a copy in buf (cap bytes), tabs and line breaks made
 * spaces, which would break the format. */
static const char *field(const char *s, char *buf, size_t cap)
{
    size_t n = 0;
    for (; s[n] && n + 1 < cap; n++)
        buf[n] = s[n] == '\t' || s[n] == '\n' || s[n] == '\r' ? ' ' : s[n];
    buf[n] = '\0';
    return buf;
}

/* Writes line (room for LINE_MAX_BYTES), whose text snprintf said takes
 * `len` bytes, with its line break; a line that was cut is not written. */
static void write_line(char *line, int len)
{
    if (len < 0 || len >= LINE_MAX_BYTES - 1)
        return;
    size_t n = (size_t)len;
    line[n] = '\n';
    line[n + 1] = '\0';
    pthread_mutex_lock(&log_lock);
    int fd = first_sight(line) ? log_file() : -1;
    if (fd >= 0 && write(fd, line, n + 1) != (ssize_t)(n + 1))
        fprintf(stderr, "clrt: warning: CLRT_PROGRAM_LOG: a line could not be written\n");
    pthread_mutex_unlock(&log_lock);
}

void clrt__program_log_build(const clrt_device *d, const char *family, const char *options)
{
    char line[LINE_MAX_BYTES], f[3][LINE_MAX_BYTES];
    if (!clrt__env()->program_log)
        return;
    write_line(line, snprintf(line, sizeof line, "build\t%s\t%s\t%s",
                              field(d->info.model, f[0], sizeof f[0]),
                              field(family, f[1], sizeof f[1]), field(options, f[2], sizeof f[2])));
}

/* "AxBxC" for a work-group, "-" for none. */
static void shape_text(cl_uint dims, const size_t *local, char *out, size_t cap)
{
    snprintf(out, cap, "-");
    for (cl_uint i = 0; local && i < dims && i < 3; i++) {
        size_t used = i ? strlen(out) : 0;
        snprintf(out + used, cap - used, "%s%zu", i ? "x" : "", local[i]);
    }
}

void clrt__program_log_launch(clrt_device *d, cl_kernel k, cl_uint dims, const size_t *local,
                              size_t local_bytes)
{
    char line[LINE_MAX_BYTES], name[128] = "?", shape[64], f[4][LINE_MAX_BYTES];
    const char *family = "?", *options = "?";
    if (!clrt__env()->program_log)
        return;
    clrt__kernel_origin(d, k, &family, &options);
    if (clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, sizeof name, name, NULL) != CL_SUCCESS)
        snprintf(name, sizeof name, "?");
    name[sizeof name - 1] = '\0';
    shape_text(dims, local, shape, sizeof shape);
    write_line(line, snprintf(line, sizeof line, "launch\t%s\t%s\t%s\t%s\t%s\t%zu",
                              field(d->info.model, f[0], sizeof f[0]),
                              field(family, f[1], sizeof f[1]), field(options, f[2], sizeof f[2]),
                              field(name, f[3], sizeof f[3]), shape, local_bytes));
}
