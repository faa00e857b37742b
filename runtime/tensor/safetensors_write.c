/* Writes a safetensors file atomically: the header and data go to a
 * temporary file in the destination's folder, which is synced and then
 * renamed over the destination (and the folder synced), so a crash or a
 * full disk leaves the previous file whole. */
#include "runtime/tensor/safetensors_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void (*clrt__st_before_rename)(const char *tmp_path) = NULL;

/* A growing string for the JSON header. */
typedef struct {
    char *s;
    size_t n, cap;
    int oom;
} buf;

static void put(buf *b, const char *s, size_t n)
{
    if (b->oom)
        return;
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->n + n + 1)
            cap *= 2;
        char *p = clrt__realloc(b->s, cap);
        if (!p) {
            b->oom = 1;
            return;
        }
        b->s = p;
        b->cap = cap;
    }
    memcpy(b->s + b->n, s, n);
    b->n += n;
    b->s[b->n] = 0;
}

static void putf(buf *b, const char *fmt, long long v)
{
    char t[32];
    int n = snprintf(t, sizeof t, fmt, v);
    put(b, t, (size_t)n);
}

/* A JSON string: quotes, backslashes and control characters escaped. */
static void put_string(buf *b, const char *s)
{
    put(b, "\"", 1);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            char e[2] = {'\\', (char)c};
            put(b, e, 2);
        } else if (c < 0x20) {
            putf(b, "\\u%04llx", c);
        } else {
            put(b, (const char *)s, 1);
        }
    }
    put(b, "\"", 1);
}

/* The header, padded with spaces to a multiple of 8 bytes so the data
 * starts aligned (as the reference writer does). */
static void build_header(buf *b, const clrt__st_item *items, int n, const char *const *meta,
                         int nmeta)
{
    uint64_t at = 0;
    put(b, "{", 1);
    if (nmeta > 0) {
        put(b, "\"__metadata__\":{", 16);
        for (int i = 0; i < nmeta; i++) {
            put(b, i ? "," : "", i ? 1 : 0);
            put_string(b, meta[2 * i]);
            put(b, ":", 1);
            put_string(b, meta[2 * i + 1]);
        }
        put(b, "}", 1);
    }
    for (int i = 0; i < n; i++) {
        put(b, i || nmeta > 0 ? "," : "", i || nmeta > 0 ? 1 : 0);
        put_string(b, items[i].name);
        put(b, ":{\"dtype\":", 10);
        put_string(b, items[i].dtype);
        put(b, ",\"shape\":[", 10);
        for (int d = 0; d < items[i].ndim; d++)
            putf(b, d ? ",%lld" : "%lld", (long long)items[i].shape[d]);
        putf(b, "],\"data_offsets\":[%lld,", (long long)at);
        at += items[i].bytes;
        putf(b, "%lld]}", (long long)at);
    }
    put(b, "}", 1);
    while (b->n % 8)
        put(b, " ", 1);
}

static int write_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n > 0) {
        ssize_t w = write(fd, c, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return 0;
        c += w;
        n -= (size_t)w;
    }
    return 1;
}

static clrt_status write_body(int fd, const char *tmp, const buf *h, const clrt__st_item *items,
                              int n)
{
    unsigned char len[8];
    for (int i = 0; i < 8; i++)
        len[i] = (unsigned char)((uint64_t)h->n >> (8 * i));
    int ok = write_all(fd, len, 8) && write_all(fd, h->s, h->n);
    for (int i = 0; ok && i < n; i++)
        ok = write_all(fd, items[i].data, items[i].bytes);
    if (!ok || fsync(fd) != 0)
        return clrt__fail(CLRT_EIO, "%s: write failed: %s", tmp, strerror(errno));
    return CLRT_OK;
}

/* Syncs the folder holding path, so the rename itself is durable. */
static void sync_folder(const char *path)
{
    char dir[4096];
    const char *slash = strrchr(path, '/');
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path + (slash == path)) : 1,
             slash ? path : ".");
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    if (fd >= 0) {
        fsync(fd); /* best effort: some file systems refuse it on folders */
        close(fd);
    }
}

clrt_status clrt__st_write(const char *path, const clrt__st_item *items, int n,
                           const char *const *meta, int nmeta)
{
    buf h = {0};
    char tmp[4096];
    if (!path || (n > 0 && !items) || (nmeta > 0 && !meta))
        return clrt__fail(CLRT_EINVAL, "safetensors write: NULL argument");
    int len = snprintf(tmp, sizeof tmp, "%s.tmp-XXXXXX", path);
    if (len < 0 || (size_t)len >= sizeof tmp)
        return clrt__fail(CLRT_EINVAL, "safetensors write: path too long: %s", path);
    build_header(&h, items, n, meta, nmeta);
    if (h.oom) {
        free(h.s);
        return clrt__fail(CLRT_ENOMEM, "%s: out of host memory for the header", path);
    }
    int fd = mkstemp(tmp);
    if (fd < 0) {
        free(h.s);
        return clrt__fail(CLRT_EIO, "%s: cannot create a temporary file beside it: %s", path,
                          strerror(errno));
    }
    clrt_status st = write_body(fd, tmp, &h, items, n);
    free(h.s);
    if (fchmod(fd, 0644) != 0 && st == CLRT_OK)
        st = clrt__fail(CLRT_EIO, "%s: fchmod: %s", tmp, strerror(errno));
    if (close(fd) != 0 && st == CLRT_OK)
        st = clrt__fail(CLRT_EIO, "%s: close: %s", tmp, strerror(errno));
    if (st == CLRT_OK && clrt__st_before_rename)
        clrt__st_before_rename(tmp);
    if (st == CLRT_OK && rename(tmp, path) != 0)
        st = clrt__fail(CLRT_EIO, "%s: rename from %s: %s", path, tmp, strerror(errno));
    if (st != CLRT_OK)
        unlink(tmp);
    else
        sync_folder(path);
    return st;
}
