/* Reads a safetensors file and validates all of it (see
 * safetensors_internal.h): a small JSON parser for the header's fixed
 * shape, then the checks of every tensor's dtype, shape and offsets. From
 * a file only the header is read at first; the tensors a caller wants are
 * read later (clrt__st_fetch), so a file's size never decides how much
 * memory a load takes. Names go into a hash index as they are read, so a
 * header of n tensors costs O(n) (the 100 MiB cap admits ~1.9 M). */
#include "runtime/tensor/safetensors_internal.h"
#include "runtime/core/text_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The reference implementation's limit on the header. */
#define HEADER_MAX ((uint64_t)100 << 20)
#define NAME_MAX_LEN 1024

static const struct {
    const char *name;
    size_t size;
} dtypes[] = {{"BOOL", 1}, {"U8", 1},  {"I8", 1},  {"F8_E5M2", 1}, {"F8_E4M3", 1},
              {"I16", 2},  {"U16", 2}, {"F16", 2}, {"BF16", 2},    {"I32", 4},
              {"U32", 4},  {"F32", 4}, {"I64", 8}, {"U64", 8},     {"F64", 8}};

const char *clrt__st_dtype(clrt_dtype t)
{
    return t == CLRT_F32 ? "F32" : t == CLRT_I32 ? "I32" : t == CLRT_U8 ? "U8" : "?";
}

/* --- the JSON header --- */

typedef struct {
    const char *path;
    const char *start, *p, *end;
    clrt_status st; /* first error, with its message set */
} json;

static int bad(json *j, const char *what)
{
    if (j->st == CLRT_OK)
        j->st = clrt__fail(CLRT_EFORMAT, "%s: safetensors header, byte %td: %s", j->path,
                           j->p - j->start, what);
    return 0;
}

static void skip_ws(json *j)
{
    while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
        j->p++;
}

/* Skips white space and consumes c; 0 (with an error) if c is not next. */
static int take(json *j, char c)
{
    char msg[32];
    skip_ws(j);
    if (j->p < j->end && *j->p == c) {
        j->p++;
        return 1;
    }
    snprintf(msg, sizeof msg, "expected '%c'", c);
    return bad(j, msg);
}

/* Consumes c if it is next (after white space). */
static int peek_take(json *j, char c)
{
    skip_ws(j);
    if (j->p < j->end && *j->p == c) {
        j->p++;
        return 1;
    }
    return 0;
}

static int hex4(json *j, unsigned *v)
{
    *v = 0;
    for (int i = 0; i < 4; i++, j->p++) {
        char c = j->p < j->end ? *j->p : 0;
        int d = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
        if (d < 0)
            return bad(j, "bad \\u escape in a string");
        *v = *v * 16 + (unsigned)d;
    }
    return 1;
}

/* Appends code point u as UTF-8 (surrogates must come in pairs). */
static int put_utf8(json *j, unsigned u, char *out, size_t cap, size_t *n)
{
    char b[4];
    size_t k;
    if (u < 0x80)
        b[0] = (char)u, k = 1;
    else if (u < 0x800)
        b[0] = (char)(0xC0 | u >> 6), b[1] = (char)(0x80 | (u & 0x3F)), k = 2;
    else if (u < 0x10000)
        b[0] = (char)(0xE0 | u >> 12), b[1] = (char)(0x80 | (u >> 6 & 0x3F)),
        b[2] = (char)(0x80 | (u & 0x3F)), k = 3;
    else
        b[0] = (char)(0xF0 | u >> 18), b[1] = (char)(0x80 | (u >> 12 & 0x3F)),
        b[2] = (char)(0x80 | (u >> 6 & 0x3F)), b[3] = (char)(0x80 | (u & 0x3F)), k = 4;
    if (*n + k >= cap)
        return bad(j, "string too long");
    memcpy(out + *n, b, k);
    *n += k;
    return 1;
}

static int escape(json *j, char *out, size_t cap, size_t *n)
{
    static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
    char c = j->p < j->end ? *j->p++ : 0;
    const char *at = c ? strchr(from, c) : NULL;
    if (at)
        return put_utf8(j, (unsigned char)to[at - from], out, cap, n);
    if (c != 'u')
        return bad(j, "bad escape in a string");
    unsigned u, lo;
    if (!hex4(j, &u))
        return 0;
    if (u >= 0xD800 && u < 0xDC00) {
        if (j->end - j->p < 2 || j->p[0] != '\\' || j->p[1] != 'u')
            return bad(j, "unpaired surrogate in a string");
        j->p += 2;
        if (!hex4(j, &lo) || lo < 0xDC00 || lo >= 0xE000)
            return bad(j, "unpaired surrogate in a string");
        u = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
    } else if (u >= 0xDC00 && u < 0xE000) {
        return bad(j, "unpaired surrogate in a string");
    } else if (u == 0) {
        /* Kept, it would end the C string there: "a\u0000b" would load as
         * "a" (or be reported as a duplicate of it). */
        return bad(j, "\\u0000 (NUL) in a string: clrt's names and metadata are C strings, "
                      "which cannot hold it");
    }
    return put_utf8(j, u, out, cap, n);
}

/* A string into out (NUL-terminated, at most cap-1 bytes). */
static int string(json *j, char *out, size_t cap)
{
    size_t n = 0;
    if (!take(j, '"'))
        return 0;
    while (j->p < j->end && *j->p != '"') {
        unsigned char c = (unsigned char)*j->p++;
        if (c < 0x20)
            return bad(j, "control character in a string");
        if (c == '\\') {
            if (!escape(j, out, cap, &n))
                return 0;
        } else if (n + 1 >= cap) {
            return bad(j, "string too long");
        } else {
            out[n++] = (char)c;
        }
    }
    if (j->p >= j->end)
        return bad(j, "unterminated string");
    j->p++;
    out[n] = 0;
    return 1;
}

/* A non-negative integer without sign, fraction or exponent, < 2^63. */
static int integer(json *j, uint64_t *v)
{
    skip_ws(j);
    const char *s = j->p;
    *v = 0;
    while (j->p < j->end && *j->p >= '0' && *j->p <= '9') {
        unsigned d = (unsigned)(*j->p - '0');
        if (*v > (((uint64_t)1 << 63) - 1 - d) / 10)
            return bad(j, "integer too large");
        *v = *v * 10 + d;
        j->p++;
    }
    if (j->p == s)
        return bad(j, "expected a non-negative integer");
    if (j->p - s > 1 && *s == '0')
        return bad(j, "integer with a leading zero");
    if (j->p < j->end && (*j->p == '.' || *j->p == 'e' || *j->p == 'E'))
        return bad(j, "expected an integer, found a fraction or exponent");
    return 1;
}

/* [a, b, ...] of at most max integers. */
static int int_array(json *j, uint64_t *v, int max, int *n, const char *what)
{
    char msg[64];
    *n = 0;
    if (!take(j, '['))
        return 0;
    if (peek_take(j, ']'))
        return 1;
    do {
        if (*n == max) {
            snprintf(msg, sizeof msg, "%s has more than %d entries", what, max);
            return bad(j, msg);
        }
        if (!integer(j, &v[(*n)++]))
            return 0;
    } while (peek_take(j, ','));
    return take(j, ']');
}

/* --- one tensor's entry --- */

static int parse_dtype(json *j, clrt__st_tensor *t)
{
    char s[32];
    if (!string(j, s, sizeof s))
        return 0;
    for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
        if (strcmp(s, dtypes[i].name) == 0) {
            strcpy(t->dtype, dtypes[i].name); /* at most 7 characters */
            t->dtype_size = dtypes[i].size;
            return 1;
        }
    char msg[96];
    snprintf(msg, sizeof msg, "unknown dtype \"%.32s\"", s);
    return bad(j, msg);
}

/* {"dtype": ..., "shape": [...], "data_offsets": [begin, end]}, any order,
 * each exactly once, nothing else. Offsets are stored in t->data/bytes as
 * (offset, length) until they are checked against the data section. */
static int parse_entry(json *j, clrt__st_tensor *t, uint64_t off[2])
{
    int seen[3] = {0, 0, 0}, n;
    uint64_t shape[CLRT_MAX_DIMS];
    char key[32];
    if (!take(j, '{'))
        return 0;
    do {
        if (!string(j, key, sizeof key) || !take(j, ':'))
            return 0;
        int k = strcmp(key, "dtype") == 0          ? 0
                : strcmp(key, "shape") == 0        ? 1
                : strcmp(key, "data_offsets") == 0 ? 2
                                                   : -1;
        if (k < 0)
            return bad(j, "unknown key in a tensor entry (want dtype, shape, data_offsets)");
        if (seen[k]++)
            return bad(j, "duplicate key in a tensor entry");
        if (k == 0 && !parse_dtype(j, t))
            return 0;
        if (k == 1 && !int_array(j, shape, CLRT_MAX_DIMS, &t->ndim, "shape"))
            return 0;
        if (k == 2 && (!int_array(j, off, 2, &n, "data_offsets") ||
                       (n != 2 && !bad(j, "data_offsets needs [begin, end]"))))
            return 0;
    } while (peek_take(j, ','));
    if (!take(j, '}'))
        return 0;
    if (!seen[0] || !seen[1] || !seen[2])
        return bad(j, "tensor entry lacks dtype, shape or data_offsets");
    for (int i = 0; i < t->ndim; i++)
        t->shape[i] = (int64_t)shape[i];
    return 1;
}

static int parse_metadata(json *j, clrt__st_file *f)
{
    char k[NAME_MAX_LEN], v[NAME_MAX_LEN];
    if (f->meta)
        return bad(j, "duplicate __metadata__");
    if (!take(j, '{'))
        return 0;
    f->meta = clrt__calloc(1, sizeof *f->meta);
    if (peek_take(j, '}'))
        return f->meta ? 1 : bad(j, "out of host memory");
    do {
        if (!string(j, k, sizeof k) || !take(j, ':') || !string(j, v, sizeof v))
            return 0;
        char **m = f->meta;
        if (f->meta_count + 2 > f->meta_cap) {
            int cap = f->meta_cap ? 2 * f->meta_cap : 8;
            if (!(m = clrt__realloc(f->meta, (size_t)cap * sizeof *m)))
                return bad(j, "out of host memory");
            f->meta = m, f->meta_cap = cap;
        }
        m[f->meta_count] = clrt__strdup(k);
        m[f->meta_count + 1] = clrt__strdup(v);
        f->meta_count += 2;
        if (!m[f->meta_count - 2] || !m[f->meta_count - 1])
            return bad(j, "out of host memory");
    } while (peek_take(j, ','));
    return take(j, '}');
}

/* --- the whole header --- */

/* Room for one more tensor (and its offsets), growing both arrays by
 * doubling. */
static int reserve(json *j, clrt__st_file *f, uint64_t **offs)
{
    if (f->count < f->cap)
        return 1;
    if (f->cap > INT32_MAX / 2)
        return bad(j, "too many tensors");
    int cap = f->cap ? 2 * f->cap : 16;
    clrt__st_tensor *t = clrt__realloc(f->tensors, (size_t)cap * sizeof *t);
    uint64_t *o = t ? clrt__realloc(*offs, (size_t)cap * 2 * sizeof *o) : NULL;
    if (t)
        f->tensors = t;
    if (!o)
        return bad(j, "out of host memory");
    *offs = o;
    f->cap = cap;
    return 1;
}

static int add_tensor(json *j, clrt__st_file *f, uint64_t **offs, const char *name)
{
    if (!reserve(j, f, offs))
        return 0;
    clrt__st_tensor *t = &f->tensors[f->count];
    memset(t, 0, sizeof *t);
    t->name = clrt__strdup(name);
    if (!t->name)
        return bad(j, "out of host memory");
    int had = clrt__name_index_put(&f->by_name, t->name, f->count);
    if (had != -1) {
        char msg[NAME_MAX_LEN + 32];
        snprintf(msg, sizeof msg, "duplicate tensor name '%s'", t->name);
        free(t->name);
        t->name = NULL;
        return bad(j, had == -2 ? "out of host memory" : msg);
    }
    f->count++;
    return parse_entry(j, t, &(*offs)[2 * (f->count - 1)]);
}

static int parse_header(json *j, clrt__st_file *f, uint64_t **offs)
{
    char name[NAME_MAX_LEN];
    if (!take(j, '{'))
        return 0;
    if (!peek_take(j, '}')) {
        do {
            if (!string(j, name, sizeof name) || !take(j, ':'))
                return 0;
            if (strcmp(name, "__metadata__") == 0 ? !parse_metadata(j, f)
                                                  : !add_tensor(j, f, offs, name))
                return 0;
        } while (peek_take(j, ','));
        if (!take(j, '}'))
            return 0;
    }
    skip_ws(j);
    return j->p == j->end || bad(j, "trailing bytes after the header's JSON object");
}

/* --- checks of the data section --- */

static int by_offset(const void *a, const void *b, void *offs)
{
    const uint64_t *o = offs;
    uint64_t x = o[2 * *(const int *)a], y = o[2 * *(const int *)b];
    return x < y ? -1 : x > y;
}

static int64_t checked_bytes(const clrt__st_tensor *t)
{
    int64_t n = (int64_t)t->dtype_size;
    for (int i = 0; i < t->ndim; i++) {
        if (t->shape[i] != 0 && n > INT64_MAX / t->shape[i])
            return -1;
        n *= t->shape[i];
    }
    return n;
}

/* Each tensor's bytes match dtype x shape; sorted by begin, the ranges
 * tile [0, data_size) exactly (no overlap, no hole, nothing past the end).
 * data: the data section in memory, or NULL when it stays in the file. */
static clrt_status check_offsets(const char *path, clrt__st_file *f, const uint64_t *offs,
                                 const unsigned char *data, uint64_t data_size)
{
    int *order = clrt__malloc((size_t)(f->count ? f->count : 1) * sizeof *order);
    if (!order)
        return clrt__fail(CLRT_ENOMEM, "%s: out of host memory", path);
    for (int i = 0; i < f->count; i++) {
        const uint64_t *o = &offs[2 * i];
        clrt__st_tensor *t = &f->tensors[i];
        int64_t want = checked_bytes(t);
        order[i] = i;
        if (o[1] < o[0] || want < 0 || o[1] - o[0] != (uint64_t)want) {
            free(order);
            return clrt__fail(CLRT_EFORMAT,
                              "%s: tensor '%s': data_offsets [%llu, %llu] hold %llu bytes, "
                              "dtype %s x shape needs %lld",
                              path, t->name, (unsigned long long)o[0], (unsigned long long)o[1],
                              (unsigned long long)(o[1] - o[0]), t->dtype, (long long)want);
        }
        t->offset = o[0];
        t->data = data ? data + (o[0] <= data_size ? o[0] : 0) : NULL;
        t->bytes = (size_t)want;
    }
    qsort_r(order, (size_t)f->count, sizeof *order, by_offset, (void *)offs);
    uint64_t at = 0;
    clrt_status st = CLRT_OK;
    for (int k = 0; k < f->count && st == CLRT_OK; k++) {
        const uint64_t *o = &offs[2 * order[k]];
        const char *name = f->tensors[order[k]].name;
        if (o[1] > data_size)
            st = clrt__fail(CLRT_EFORMAT,
                            "%s: tensor '%s': data_offsets end %llu is past the data (%llu bytes)",
                            path, name, (unsigned long long)o[1], (unsigned long long)data_size);
        else if (o[0] != at)
            st = clrt__fail(CLRT_EFORMAT,
                            "%s: tensor '%s': data_offsets begin %llu %s (expected %llu)", path,
                            name, (unsigned long long)o[0],
                            o[0] < at ? "overlaps the tensor before it" : "leaves a hole",
                            (unsigned long long)at);
        at = o[1];
    }
    free(order);
    if (st == CLRT_OK && at != data_size)
        st = clrt__fail(CLRT_EFORMAT, "%s: %llu bytes of data after the last tensor", path,
                        (unsigned long long)(data_size - at));
    return st;
}

/* --- the file --- */

static int little_endian(void)
{
    const uint16_t one = 1;
    return *(const unsigned char *)&one == 1;
}

/* The header's length from the first 8 bytes, checked against the file. */
static clrt_status header_length(const char *path, const unsigned char *b8, uint64_t size,
                                 uint64_t *n)
{
    if (!little_endian())
        return clrt__fail(CLRT_ENOTSUP, "safetensors: big-endian hosts are not supported");
    if (size < 8)
        return clrt__fail(CLRT_EFORMAT, "%s: %llu bytes, too short for a safetensors file", path,
                          (unsigned long long)size);
    *n = 0;
    for (int i = 7; i >= 0; i--)
        *n = *n << 8 | b8[i];
    if (*n < 2 || *n > HEADER_MAX || *n > size - 8)
        return clrt__fail(CLRT_EFORMAT,
                          "%s: header length %llu does not fit the file (%llu bytes; at most %llu)",
                          path, (unsigned long long)*n, (unsigned long long)size,
                          (unsigned long long)(size - 8 < HEADER_MAX ? size - 8 : HEADER_MAX));
    return CLRT_OK;
}

/* Parses the n-byte header h and checks the offsets against a data
 * section of data_size bytes (at data, or in the file when NULL). */
static clrt_status parse_parts(const char *path, clrt__st_file *f, const char *h, uint64_t n,
                               const unsigned char *data, uint64_t data_size)
{
    json j = {path, h, h, h + n, CLRT_OK};
    uint64_t *offs = NULL;
    long at = clrt__utf8_bad_at(h, (size_t)n);
    if (at >= 0)
        return clrt__fail(CLRT_EFORMAT,
                          "%s: safetensors header, byte %ld: 0x%02x is not UTF-8 (the format's "
                          "header is UTF-8 JSON; PyTorch's reader refuses it too)",
                          path, at, (unsigned char)h[at]);
    if (!parse_header(&j, f, &offs)) {
        free(offs);
        return j.st;
    }
    clrt_status st = check_offsets(path, f, offs, data, data_size);
    free(offs);
    return st;
}

/* The header of the open file fd (size bytes) into f->bytes, validated. */
static clrt_status read_header(const char *path, int fd, uint64_t size, clrt__st_file *f)
{
    unsigned char b8[8];
    uint64_t n = 0;
    if (size >= 8 && !clrt__read_full(fd, b8, 8))
        return clrt__fail(CLRT_EIO, "%s: read failed", path);
    clrt_status st = header_length(path, b8, size, &n);
    if (st != CLRT_OK)
        return st;
    f->bytes = clrt__malloc((size_t)n);
    if (!f->bytes)
        return clrt__fail(CLRT_ENOMEM, "%s: out of host memory for a %llu-byte header", path,
                          (unsigned long long)n);
    f->size = (size_t)n;
    if (!clrt__read_full(fd, f->bytes, (size_t)n))
        return clrt__fail(CLRT_EIO, "%s: read of the header failed", path);
    f->data_start = 8 + n;
    return parse_parts(path, f, (const char *)f->bytes, n, NULL, size - 8 - n);
}

clrt_status clrt__st_read(const char *path, clrt__st_file *f)
{
    uint64_t size = 0;
    memset(f, 0, sizeof *f);
    if (!path)
        return clrt__fail(CLRT_EINVAL, "safetensors: path is NULL");
    f->fd = clrt__file_open_read(path, UINT64_MAX, "safetensors", &size);
    if (f->fd < 0)
        return clrt_last_status();
    f->fd_open = 1;
    snprintf(f->path, sizeof f->path, "%s", path);
    clrt_status st = read_header(path, f->fd, size, f);
    if (st != CLRT_OK)
        clrt__st_close(f);
    return st;
}

clrt_status clrt__st_parse(const char *name, unsigned char *bytes, size_t size, clrt__st_file *f)
{
    uint64_t n = 0;
    memset(f, 0, sizeof *f);
    f->bytes = bytes;
    f->size = size;
    clrt_status st = header_length(name, bytes, size, &n);
    if (st == CLRT_OK)
        st = parse_parts(name, f, (const char *)bytes + 8, n, bytes + 8 + n, size - 8 - n);
    if (st != CLRT_OK)
        clrt__st_close(f);
    return st;
}

clrt_status clrt__st_fetch(clrt__st_file *f, int n, const clrt__st_tensor *const *want)
{
    size_t total = 0, at = 0;
    if (!f->fd_open)
        return CLRT_OK; /* parsed in memory: the data is there */
    if (f->data_buf)
        return clrt__fail(CLRT_ESTATE, "%s: tensors already fetched", f->path);
    for (int i = 0; i < n; i++)
        total += want[i] ? want[i]->bytes : 0;
    f->data_buf = clrt__malloc(total ? total : 1);
    if (!f->data_buf)
        return clrt__fail(CLRT_ENOMEM, "%s: out of host memory for %zu bytes of tensors", f->path,
                          total);
    for (int i = 0; i < n; i++) {
        if (!want[i])
            continue;
        clrt__st_tensor *t = &f->tensors[want[i] - f->tensors];
        if (!clrt__pread_full(f->fd, f->data_buf + at, t->bytes, f->data_start + t->offset))
            return clrt__fail(CLRT_EIO, "%s: tensor '%s': read failed (the file changed?)", f->path,
                              t->name);
        t->data = f->data_buf + at;
        at += t->bytes;
    }
    return CLRT_OK;
}

void clrt__st_close(clrt__st_file *f)
{
    for (int i = 0; i < f->count; i++)
        free(f->tensors[i].name);
    for (int i = 0; i < f->meta_count; i++)
        free(f->meta[i]);
    free(f->tensors);
    clrt__name_index_free(&f->by_name);
    free(f->meta);
    free(f->bytes);
    free(f->data_buf);
    if (f->fd_open)
        close(f->fd);
    memset(f, 0, sizeof *f);
}

const clrt__st_tensor *clrt__st_find(const clrt__st_file *f, const char *name)
{
    int i = clrt__name_index_get(&f->by_name, name);
    return i >= 0 ? &f->tensors[i] : NULL;
}

const char *clrt__st_meta(const clrt__st_file *f, const char *key)
{
    for (int i = 0; i + 1 < f->meta_count; i += 2)
        if (f->meta[i] && strcmp(f->meta[i], key) == 0)
            return f->meta[i + 1];
    return NULL;
}
