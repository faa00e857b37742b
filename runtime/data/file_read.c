/* Reads a data file whole into memory, gzipped or not, through zlib. */
#include "runtime/data/dataset_internal.h"
#include "runtime/core/alloc_internal.h"
#include "runtime/core/file_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

/* No data set file comes near this (Fashion-MNIST's largest is 47 MB);
 * anything bigger is a mistake or a gzip bomb, not something to load. The
 * fuzz targets build this file with a smaller cap. */
#ifndef CLRT__DATA_FILE_MAX
#define CLRT__DATA_FILE_MAX ((size_t)1 << 30)
#endif
#define FILE_MAX ((size_t)CLRT__DATA_FILE_MAX)

/* out = dir/name + suffix; CLRT_EINVAL if it does not fit. */
static clrt_status join_path(char *out, size_t cap, const char *dir, const char *name,
                             const char *suffix)
{
    size_t dlen = strlen(dir);
    if (dlen == 0) /* "" + "/name" would be a file at the root */
        return clrt__fail(CLRT_EINVAL, "data set folder is an empty string; give a folder "
                                       "(\".\" for the current one)");
    const char *sep = dlen > 0 && dir[dlen - 1] == '/' ? "" : "/";
    int n = snprintf(out, cap, "%s%s%s%s", dir, sep, name, suffix);
    if (n < 0 || (size_t)n >= cap)
        return clrt__fail(CLRT_EINVAL, "data set path too long: %s%s%s%s", dir, sep, name, suffix);
    return CLRT_OK;
}

/* Picks <name>.gz when it exists, else <name>, and checks it is a regular
 * file; st receives its metadata. */
static clrt_status choose_path(const char *dir, const char *name, char *path, size_t cap,
                               struct stat *st)
{
    char plain[PATH_MAX];
    clrt_status s = join_path(path, cap, dir, name, ".gz");
    if (s == CLRT_OK)
        s = join_path(plain, sizeof plain, dir, name, "");
    if (s != CLRT_OK)
        return s;
    if (stat(path, st) != 0) {
        if (stat(plain, st) != 0)
            return clrt__fail(CLRT_EIO, "cannot open %s or %s: %s", path, plain, strerror(errno));
        memcpy(path, plain, strlen(plain) + 1);
    }
    if (!S_ISREG(st->st_mode))
        return clrt__fail(CLRT_EIO, "cannot read %s: not a regular file", path);
    return CLRT_OK;
}

/* Why gzread stopped: a read error (EIO), bad or cut-off gzip data
 * (EFORMAT), or CLRT_OK at a clean end of file. */
static clrt_status read_error(gzFile g, const char *path)
{
    int code = Z_OK;
    const char *msg = gzerror(g, &code);
    if (code == Z_OK || code == Z_STREAM_END)
        return CLRT_OK;
    if (code == Z_ERRNO)
        return clrt__fail(CLRT_EIO, "cannot read %s: %s", path, strerror(errno));
    if (code == Z_MEM_ERROR)
        return clrt__fail(CLRT_ENOMEM, "out of host memory decompressing %s", path);
    if (code == Z_BUF_ERROR)
        return clrt__fail(CLRT_EFORMAT, "%s: gzip data ends early (truncated file)", path);
    /* zlib's message starts with the path it was opened with: said once. */
    size_t n = strlen(path);
    if (strncmp(msg, path, n) == 0 && strncmp(msg + n, ": ", 2) == 0)
        msg += n + 2;
    return clrt__fail(CLRT_EFORMAT, "%s: corrupt gzip data: %s", path, msg);
}

/* Reads g to its end into a buffer that grows by doubling from `hint`
 * bytes but never past FILE_MAX + 1 bytes: reading stops as soon as the
 * data passes the cap, whatever it inflates to. */
static clrt_status read_all(gzFile g, const char *path, size_t hint, uint8_t **data, size_t *size)
{
    const size_t limit = FILE_MAX + 1;
    size_t cap = hint < 65536 ? 65536 : hint < limit ? hint : limit, len = 0;
    uint8_t *buf = clrt__malloc(cap);
    for (;;) {
        if (buf && len == cap && cap == limit) {
            free(buf);
            return clrt__fail(CLRT_EFORMAT, "%s: more than %zu bytes of data; not a data set file",
                              path, FILE_MAX);
        }
        if (buf && len == cap) {
            size_t grown = cap > limit / 2 ? limit : 2 * cap;
            uint8_t *bigger = clrt__realloc(buf, grown);
            if (!bigger)
                free(buf);
            buf = bigger;
            cap = grown;
        }
        if (!buf)
            return clrt__fail(CLRT_ENOMEM, "out of host memory reading %s", path);
        size_t room = cap - len;
        int got = gzread(g, buf + len, (unsigned)(room < INT_MAX ? room : INT_MAX));
        if (got <= 0)
            break;
        len += (size_t)got;
    }
    clrt_status s = read_error(g, path);
    if (s != CLRT_OK) {
        free(buf);
        return s;
    }
    *data = buf;
    *size = len;
    return CLRT_OK;
}

clrt_status clrt__file_read(const char *dir, const char *name, clrt__file *out)
{
    struct stat st;
    uint64_t size = 0;
    memset(out, 0, sizeof *out);
    clrt_status s = choose_path(dir, name, out->path, sizeof out->path, &st);
    if (s != CLRT_OK)
        return s;
    /* Opened without blocking and checked again: the file may have changed. */
    int fd = clrt__file_open_read(out->path, FILE_MAX, "data set", &size);
    gzFile g = fd >= 0 ? gzdopen(fd, "rb") : NULL;
    if (fd >= 0 && !g) {
        close(fd);
        return clrt__fail(CLRT_ENOMEM, "out of memory opening %s", out->path);
    }
    if (!g)
        return clrt_last_status();
    gzbuffer(g, 1 << 17); /* fewer, larger reads: loading is I/O-bound */
    /* Twice the file's size holds a plain file and usually the whole of a
     * gzipped one (pixels compress about 2:1), so most reads never realloc. */
    size_t hint = size < FILE_MAX / 2 ? (size_t)size * 2 + 1 : FILE_MAX + 1;
    s = read_all(g, out->path, hint, &out->data, &out->size);
    gzclose(g);
    return s;
}

void clrt__file_free(clrt__file *f)
{
    free(f->data);
    f->data = NULL;
    f->size = 0;
}
