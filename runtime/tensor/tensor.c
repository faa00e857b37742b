/* Tensors: creation, lifetime, host I/O, device moves and views. */
#include "runtime/tensor/tensor_internal.h"
#include "runtime/core/alloc_internal.h"
#include "runtime/core/env_internal.h"
#include "runtime/device/command_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t clrt_dtype_size(clrt_dtype t)
{
    switch (t) {
    case CLRT_F32:
    case CLRT_I32:
        return 4;
    case CLRT_U8:
        return 1;
    }
    return 0;
}

const char *clrt_dtype_str(clrt_dtype t)
{
    switch (t) {
    case CLRT_F32:
        return "float32";
    case CLRT_I32:
        return "int32";
    case CLRT_U8:
        return "uint8";
    }
    return "invalid-dtype";
}

/* Appends s to buf[*used..cap), as much as fits (one byte kept for the NUL). */
static void append(char *buf, size_t cap, size_t *used, const char *s, size_t len)
{
    for (size_t i = 0; i < len && *used + 1 < cap; i++)
        buf[(*used)++] = s[i];
}

/* Without snprintf: ops call this on every call (their checks name shapes),
 * and a formatted print per dimension cost as much as a small GEMM's
 * dispatch. */
char *clrt_shape_str(int ndim, const int64_t *shape, char *buf, size_t cap)
{
    size_t used = 0;
    if (!buf || cap == 0)
        return buf;
    if (ndim < 0 || ndim > CLRT_MAX_DIMS || (ndim > 0 && !shape)) {
        static const char bad[] = "[invalid shape]"; /* rather than a crash in a message */
        append(buf, cap, &used, bad, sizeof bad - 1);
        buf[used] = '\0';
        return buf;
    }
    append(buf, cap, &used, "[", 1);
    for (int i = 0; i < ndim; i++) {
        char digits[24];
        size_t n = 0;
        uint64_t v = shape[i] < 0 ? 0 - (uint64_t)shape[i] : (uint64_t)shape[i];
        do
            digits[sizeof digits - ++n] = (char)('0' + v % 10);
        while ((v /= 10) != 0);
        if (shape[i] < 0)
            digits[sizeof digits - ++n] = '-';
        if (i)
            append(buf, cap, &used, ", ", 2);
        append(buf, cap, &used, digits + sizeof digits - n, n);
    }
    append(buf, cap, &used, "]", 1);
    buf[used] = '\0';
    return buf;
}

/* Validates a shape; on success stores the element count. */
static clrt_status check_shape(const char *op, clrt_dtype t, int ndim, const int64_t *shape,
                               int64_t *numel)
{
    char s[160];
    if (clrt_dtype_size(t) == 0)
        return clrt__fail(CLRT_EDTYPE, "%s: invalid dtype %d", op, (int)t);
    if (ndim < 0 || ndim > CLRT_MAX_DIMS)
        return clrt__fail(CLRT_EINVAL, "%s: ndim %d outside 0..%d", op, ndim, CLRT_MAX_DIMS);
    if (ndim > 0 && !shape)
        return clrt__fail(CLRT_EINVAL, "%s: shape is NULL with ndim %d", op, ndim);
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 0)
            return clrt__fail(CLRT_EINVAL, "%s: shape %s has negative size %lld in dimension %d",
                              op, clrt_shape_str(ndim, shape, s, sizeof s), (long long)shape[i], i);
        if (shape[i] > 0 && n > (INT64_MAX / 8) / shape[i])
            return clrt__fail(CLRT_ENOMEM, "%s: shape %s overflows the element count", op,
                              clrt_shape_str(ndim, shape, s, sizeof s));
        n *= shape[i];
    }
    *numel = n;
    return CLRT_OK;
}

static clrt__storage *storage_new(clrt_device *d, size_t bytes)
{
    clrt__storage *s = clrt__malloc(sizeof *s);
    if (!s) {
        clrt__fail(CLRT_ENOMEM, "out of host memory");
        return NULL;
    }
    s->mem = clrt__storage_buffer_new(d, bytes);
    if (!s->mem) {
        free(s);
        return NULL;
    }
    static atomic_ullong serials;
    atomic_init(&s->refcount, 1);
    atomic_init(&s->version, 0);
    s->dev = d;
    s->bytes = bytes;
    s->serial = atomic_fetch_add(&serials, 1) + 1;
    s->derived = (clrt__derived){0};
    return s;
}

static void storage_release(clrt__storage *s)
{
    if (s && atomic_fetch_sub(&s->refcount, 1) == 1) {
        clrt__derived_free(s);
        clrt__storage_buffer_release(s->dev, s->mem, s->bytes);
        free(s);
    }
}

static clrt_tensor *tensor_new(clrt__storage *s, clrt_dtype t, int ndim, const int64_t *shape,
                               int64_t numel)
{
    clrt_tensor *x = clrt__calloc(1, sizeof *x);
    if (!x) {
        clrt__fail(CLRT_ENOMEM, "out of host memory");
        return NULL;
    }
    atomic_init(&x->refcount, 1);
    x->storage = s;
    x->dtype = t;
    x->ndim = ndim;
    if (ndim > 0)
        memcpy(x->shape, shape, (size_t)ndim * sizeof *shape);
    x->numel = numel;
    return x;
}

/* CLRT_POISON=1 (the tests set it): every new buffer starts as 0xFF bytes,
 * NaN in float32, so an op that leaves part of its output unwritten fails
 * its test instead of passing on leftover values. */
static clrt_status poison(clrt_tensor *x)
{
    const unsigned char ff = 0xFF;
    return clrt__fill_buffer(clrt__dev(x), clrt__mem(x), &ff, 1, 0, x->storage->bytes,
                             "fill (CLRT_POISON)");
}

clrt_tensor *clrt__alloc(clrt_device *d, clrt_dtype t, int ndim, const int64_t *shape)
{
    int64_t numel = 0;
    if (!d) {
        clrt__fail(CLRT_EINVAL, "tensor creation: device is NULL");
        return NULL;
    }
    if (check_shape("tensor creation", t, ndim, shape, &numel) != CLRT_OK)
        return NULL;
    clrt__storage *s = storage_new(d, (size_t)numel * clrt_dtype_size(t));
    if (!s)
        return NULL;
    clrt_tensor *x = tensor_new(s, t, ndim, shape, numel);
    if (!x)
        storage_release(s);
    else if (clrt__env()->poison && poison(x) != CLRT_OK) {
        clrt_tensor_release(x);
        return NULL;
    }
    return x;
}

clrt_tensor *clrt__alloc_like(const clrt_tensor *t)
{
    return clrt__alloc(clrt__dev(t), t->dtype, t->ndim, t->shape);
}

clrt_status clrt__fill(clrt_tensor *t, double value)
{
    clrt__bump_version(t);
    union {
        float f;
        int32_t i;
        uint8_t u;
    } pattern;
    size_t psize = clrt_dtype_size(t->dtype);
    /* Converting an out-of-range double to an integer is undefined in C. */
    if ((t->dtype == CLRT_I32 && !(value > -2147483649.0 && value < 2147483648.0)) ||
        (t->dtype == CLRT_U8 && !(value > -1.0 && value < 256.0)))
        return clrt__fail(CLRT_EINVAL, "fill: value %g does not fit %s", value,
                          clrt_dtype_str(t->dtype));
    if (t->dtype == CLRT_F32)
        pattern.f = (float)value;
    else if (t->dtype == CLRT_I32)
        pattern.i = (int32_t)value;
    else
        pattern.u = (uint8_t)value;
    return clrt__fill_buffer(clrt__dev(t), clrt__mem(t), &pattern, psize, 0,
                             (size_t)t->numel * psize, "fill");
}

clrt_status clrt__tensor_reuse(clrt_tensor **buf, clrt_device *d, clrt_dtype dtype, int ndim,
                               const int64_t *shape)
{
    clrt_tensor *b = *buf;
    if (b && clrt__dev(b) == d && b->dtype == dtype && b->ndim == ndim) {
        int same = 1;
        for (int i = 0; i < ndim; i++)
            same &= b->shape[i] == shape[i];
        if (same)
            return CLRT_OK;
    }
    /* Commands still queued on the old buffer keep it alive: OpenCL frees a
     * released cl_mem only after they finish. */
    clrt_tensor *fresh = clrt__alloc(d, dtype, ndim, shape);
    if (!fresh)
        return clrt_last_status();
    clrt_tensor_release(b);
    *buf = fresh;
    return CLRT_OK;
}

void clrt__tensor_swap_storage(clrt_tensor *a, clrt_tensor *b)
{
    clrt__storage *s = a->storage;
    a->storage = b->storage;
    b->storage = s;
}

clrt_status clrt__tensor_replace_all(int n, clrt_tensor *const *dst, const void *const *src)
{
    clrt_tensor **fresh = clrt__calloc((size_t)n + 1, sizeof *fresh);
    clrt_status st = fresh ? CLRT_OK : clrt__fail(CLRT_ENOMEM, "replacing tensors: out of memory");
    for (int i = 0; st == CLRT_OK && i < n; i++) {
        const clrt_tensor *d = dst[i];
        if (src[i] &&
            !(fresh[i] = clrt_from_host(clrt__dev(d), d->dtype, d->ndim, d->shape, src[i])))
            st = clrt_last_status();
    }
    for (int i = 0; fresh && i < n; i++) {
        if (st == CLRT_OK && fresh[i])
            clrt__tensor_swap_storage(dst[i], fresh[i]);
        clrt_tensor_release(fresh[i]);
    }
    free(fresh);
    return st;
}

clrt_tensor *clrt_empty(clrt_device *d, clrt_dtype t, int ndim, const int64_t *shape)
{
    return clrt__alloc(d, t, ndim, shape);
}

clrt_tensor *clrt_full(clrt_device *d, clrt_dtype t, int ndim, const int64_t *shape, double value)
{
    clrt_tensor *x = clrt__alloc(d, t, ndim, shape);
    if (x && clrt__fill(x, value) != CLRT_OK) {
        clrt_tensor_release(x);
        return NULL;
    }
    return x;
}

clrt_tensor *clrt_zeros(clrt_device *d, clrt_dtype t, int ndim, const int64_t *shape)
{
    return clrt_full(d, t, ndim, shape, 0.0);
}

clrt_tensor *clrt_ones(clrt_device *d, clrt_dtype t, int ndim, const int64_t *shape)
{
    return clrt_full(d, t, ndim, shape, 1.0);
}

clrt_tensor *clrt_from_host(clrt_device *d, clrt_dtype t, int ndim, const int64_t *shape,
                            const void *data)
{
    if (!data) {
        clrt__fail(CLRT_EINVAL, "clrt_from_host: data is NULL");
        return NULL;
    }
    clrt_tensor *x = clrt__alloc(d, t, ndim, shape);
    if (x && clrt_copy_from_host(x, data, clrt_tensor_nbytes(x)) != CLRT_OK) {
        clrt_tensor_release(x);
        return NULL;
    }
    return x;
}

static clrt_status write_host(clrt_tensor *t, const void *data, size_t bytes, int blocking)
{
    if (!t || !data)
        return clrt__fail(CLRT_EINVAL, "copy from host: NULL argument");
    size_t need = clrt_tensor_nbytes(t);
    if (bytes != need)
        return clrt__fail(CLRT_EINVAL, "copy from host: %zu bytes given, the tensor holds %zu",
                          bytes, need);
    clrt_device *d = clrt__dev(t);
    if (need == 0)
        return CLRT_OK;
    clrt__bump_version(t);
    if (blocking)
        return clrt__write_wait(d, clrt__mem(t), need, data, "copy from host");
    clrt_status st = clrt__write_buffer(d, CLRT__COMPUTE, clrt__mem(t), 0, need, data, NULL, NULL,
                                        "copy from host (async)");
    /* submitted now, so it runs beside the caller's work */
    return st == CLRT_OK ? clrt__flush(d, CLRT__COMPUTE, "copy from host (async)") : st;
}

clrt_status clrt_copy_from_host(clrt_tensor *t, const void *data, size_t bytes)
{
    return write_host(t, data, bytes, 1);
}

clrt_status clrt_copy_from_host_async(clrt_tensor *t, const void *data, size_t bytes)
{
    return write_host(t, data, bytes, 0);
}

clrt_status clrt_to_host(const clrt_tensor *t, void *dst, size_t dst_bytes)
{
    if (!t || !dst)
        return clrt__fail(CLRT_EINVAL, "clrt_to_host: NULL argument");
    size_t need = clrt_tensor_nbytes(t);
    if (dst_bytes < need)
        return clrt__fail(CLRT_EINVAL, "clrt_to_host: destination has %zu bytes, tensor needs %zu",
                          dst_bytes, need);
    if (need == 0)
        return CLRT_OK;
    /* The caller asked for the values: wait for them (without a spin). */
    return clrt__read_wait(clrt__dev(t), clrt__mem(t), need, dst, "read to host");
}

clrt_status clrt_item(const clrt_tensor *t, double *out)
{
    if (!t || !out)
        return clrt__fail(CLRT_EINVAL, "clrt_item: NULL argument");
    if (t->numel != 1)
        return clrt__fail(CLRT_ESHAPE, "clrt_item: tensor has %lld elements, not 1",
                          (long long)t->numel);
    union {
        float f;
        int32_t i;
        uint8_t u;
    } v;
    clrt_status st = clrt_to_host(t, &v, sizeof v);
    if (st == CLRT_OK)
        *out = t->dtype == CLRT_F32 ? (double)v.f : t->dtype == CLRT_I32 ? (double)v.i : v.u;
    return st;
}

clrt_device *clrt_tensor_device(const clrt_tensor *t) { return t ? clrt__dev(t) : NULL; }
clrt_dtype clrt_tensor_dtype(const clrt_tensor *t) { return t ? t->dtype : CLRT_F32; }
int clrt_tensor_ndim(const clrt_tensor *t) { return t ? t->ndim : -1; }
const int64_t *clrt_tensor_shape(const clrt_tensor *t) { return t ? t->shape : NULL; }
int64_t clrt_tensor_numel(const clrt_tensor *t) { return t ? t->numel : 0; }

size_t clrt_tensor_nbytes(const clrt_tensor *t)
{
    return t ? (size_t)t->numel * clrt_dtype_size(t->dtype) : 0;
}

void clrt_tensor_retain(clrt_tensor *t)
{
    if (t)
        atomic_fetch_add(&t->refcount, 1);
}

void clrt_tensor_release(clrt_tensor *t)
{
    if (t && atomic_fetch_sub(&t->refcount, 1) == 1) {
        clrt__graph_ref_release(t->grad_fn);
        clrt_tensor_release(t->grad);
        storage_release(t->storage);
        free(t);
    }
}

int clrt_tensor_refcount(const clrt_tensor *t) { return t ? atomic_load(&t->refcount) : 0; }

clrt_tensor *clrt__tensor_copy_on(clrt_tensor *t, clrt_device *d)
{
    return clrt__dev(t) == d ? clrt__clone(t) : clrt__tensor_to(t, d);
}

clrt_tensor *clrt__tensor_to(clrt_tensor *t, clrt_device *d)
{
    if (!t || !d) {
        clrt__fail(CLRT_EINVAL, "clrt_tensor_to: NULL argument");
        return NULL;
    }
    if (clrt__dev(t) == d) {
        clrt_tensor_retain(t);
        return t;
    }
    clrt_tensor *x = clrt__alloc(d, t->dtype, t->ndim, t->shape);
    if (x && clrt__copy_across(clrt__dev(t), clrt__mem(t), d, clrt__mem(x),
                               clrt_tensor_nbytes(t)) != CLRT_OK) {
        clrt_tensor_release(x);
        return NULL;
    }
    return x;
}

clrt_tensor *clrt__clone(clrt_tensor *t)
{
    if (!t) {
        clrt__fail(CLRT_EINVAL, "clrt_tensor_clone: tensor is NULL");
        return NULL;
    }
    clrt_tensor *x = clrt__alloc_like(t);
    if (x && clrt__copy_buffer(clrt__dev(t), clrt__mem(t), 0, clrt__mem(x), 0,
                               clrt_tensor_nbytes(t), "clone") != CLRT_OK) {
        clrt_tensor_release(x);
        return NULL;
    }
    return x;
}

clrt_tensor *clrt__view(const char *op, clrt_tensor *t, int ndim, const int64_t *shape)
{
    int64_t dims[CLRT_MAX_DIMS], known = 1, numel = 0;
    int infer = -1;
    char a[128], b[128];
    if (!t || ndim < 0 || ndim > CLRT_MAX_DIMS || (ndim > 0 && !shape)) {
        clrt__fail(CLRT_EINVAL, "%s: NULL tensor or bad ndim %d", op, ndim);
        return NULL;
    }
    for (int i = 0; i < ndim; i++) {
        dims[i] = shape[i];
        if (shape[i] == -1 && infer < 0)
            infer = i;
        else if (shape[i] < 0) {
            clrt__fail(CLRT_EINVAL, "%s: bad size %lld in dimension %d", op, (long long)shape[i],
                       i);
            return NULL;
        } else
            known = shape[i] && known > INT64_MAX / shape[i] ? INT64_MAX : known * shape[i];
    }
    /* -1 stands for what makes the sizes match; where nothing does, the
     * shapes mismatch (not a negative size). */
    int bad_infer = infer >= 0 && (known == 0 || t->numel % known != 0);
    if (infer >= 0 && !bad_infer)
        dims[infer] = t->numel / known;
    if (!bad_infer && check_shape(op, t->dtype, ndim, dims, &numel) != CLRT_OK)
        return NULL;
    if (bad_infer || numel != t->numel) {
        clrt__fail(CLRT_ESHAPE, "%s: cannot view shape %s (%lld elements) as %s", op,
                   clrt_shape_str(t->ndim, t->shape, a, sizeof a), (long long)t->numel,
                   clrt_shape_str(ndim, shape, b, sizeof b));
        return NULL;
    }
    clrt_tensor *x = tensor_new(t->storage, t->dtype, ndim, dims, numel);
    if (x)
        atomic_fetch_add(&t->storage->refcount, 1);
    return x;
}
