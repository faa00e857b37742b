/* Writes a safetensors file atomically, through the library's one writer
 * (runtime/core/file_internal.h: a temporary file beside the destination,
 * synced and renamed only over a regular file or nothing), so a crash or a
 * full disk leaves the previous file whole. */
#include "runtime/tensor/safetensors_internal.h"
#include "runtime/core/text_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* Every name and metadata string is UTF-8, as the format's JSON header
 * must be: a file PyTorch's reader would refuse is never written. */
static clrt_status check_text(const clrt__st_item *items, int n, const char *const *meta, int nmeta,
                              const char *what, const char *path)
{
    char shown[128];
    for (int i = 0; i < n + 2 * nmeta; i++) {
        const char *s = i < n ? items[i].name : meta[i - n];
        if (!s)
            return clrt__fail(CLRT_EINVAL, "%s: %s: a NULL name or metadata string", what, path);
        long at = clrt__utf8_bad_at(s, strlen(s));
        if (at >= 0)
            return clrt__fail(CLRT_EINVAL,
                              "%s: %s: %s '%s' is not UTF-8 (byte 0x%02x at offset %ld); a "
                              "safetensors header is UTF-8 JSON",
                              what, path, i < n ? "tensor name" : "metadata string",
                              clrt__text_shown(s, shown, sizeof shown), (unsigned char)s[at], at);
    }
    return CLRT_OK;
}

void clrt__st_items_free(clrt__st_item *items, int n)
{
    for (int i = 0; items && i < n; i++)
        free((void *)items[i].data);
    free(items);
}

/* The header's length, the header and each tensor's data into o. */
static clrt_status write_body(clrt__out_file *o, const buf *h, const clrt__st_item *items, int n)
{
    unsigned char len[8];
    for (int i = 0; i < 8; i++)
        len[i] = (unsigned char)((uint64_t)h->n >> (8 * i));
    clrt_status st = clrt__out_write(o, len, 8);
    if (st == CLRT_OK)
        st = clrt__out_write(o, h->s, h->n);
    for (int i = 0; st == CLRT_OK && i < n; i++)
        st = clrt__out_write(o, items[i].data, items[i].bytes);
    return st;
}

clrt_status clrt__st_write_tmp(clrt__out_file *o, const char *path, const clrt__st_item *items,
                               int n, const char *const *meta, int nmeta, const char *what)
{
    buf h = {0};
    memset(o, 0, sizeof *o);
    o->fd = -1;
    if (!path || (n > 0 && !items) || (nmeta > 0 && !meta))
        return clrt__fail(CLRT_EINVAL, "%s: NULL argument", what);
    clrt_status st = check_text(items, n, meta, nmeta, what, path);
    if (st != CLRT_OK)
        return st;
    build_header(&h, items, n, meta, nmeta);
    if (h.oom) {
        free(h.s);
        return clrt__fail(CLRT_ENOMEM, "%s: %s: out of host memory for the header", what, path);
    }
    st = clrt__out_open(o, path, what);
    if (st == CLRT_OK)
        st = write_body(o, &h, items, n);
    free(h.s);
    if (st == CLRT_OK)
        return clrt__out_finish(o);
    clrt__out_abort(o);
    return st;
}

clrt_status clrt__st_write(const char *path, const clrt__st_item *items, int n,
                           const char *const *meta, int nmeta, const char *what)
{
    clrt__out_file o;
    clrt_status st = clrt__st_write_tmp(&o, path, items, n, meta, nmeta, what);
    return st == CLRT_OK ? clrt__out_rename(&o) : st;
}
