/* Tensors: creation, lifetime, host I/O, device moves and views. */
#include "runtime/tensor/tensor_internal.h"
#include "runtime/core/alloc_internal.h"
#include "runtime/core/clock_internal.h"
#include "runtime/core/env_internal.h"
#include "runtime/device/trace_internal.h"
#include "runtime/device/wait_internal.h"
#include "runtime/device/host_ptr_internal.h"

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
    if (cap == 0)
        return buf;
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
    s->mem = clrt__buffer_new(d, bytes, "tensor storage");
    if (!s->mem) {
        free(s);
        return NULL;
    }
    atomic_init(&s->refcount, 1);
    s->dev = d;
    s->bytes = bytes;
    return s;
}

static void storage_release(clrt__storage *s)
{
    if (s && atomic_fetch_sub(&s->refcount, 1) == 1) {
        clrt__buffer_release(s->dev, s->mem, s->bytes);
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
    unsigned char ff = 0xFF;
    cl_int err = CL_SUCCESS;
    cl_event ev = NULL;
    if (x->storage->bytes > 0)
        err = clEnqueueFillBuffer(clrt__dev(x)->queue, clrt__mem(x), &ff, 1, 0, x->storage->bytes,
                                  0, NULL, clrt__trace_slot(&ev));
    clrt__trace_command(clrt__dev(x), clrt__dev(x)->queue, ev, CLRT__TRACE_COPY,
                        "clEnqueueFillBuffer (CLRT_POISON)");
    return err == CL_SUCCESS ? CLRT_OK : clrt__fail_cl(err, "clEnqueueFillBuffer (CLRT_POISON)");
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
    if (t->numel == 0)
        return CLRT_OK;
    clrt_device *d = clrt__dev(t);
    cl_event ev;
    cl_int err = clEnqueueFillBuffer(d->queue, clrt__mem(t), &pattern, psize, 0,
                                     (size_t)t->numel * psize, 0, NULL, clrt__trace_slot(&ev));
    clrt__trace_command(d, d->queue, ev, CLRT__TRACE_COPY, "clEnqueueFillBuffer");
    return err == CL_SUCCESS ? CLRT_OK : clrt__fail_cl(err, "clEnqueueFillBuffer");
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

/* A blocking copy between host memory and t's buffer on a device whose
 * buffers live in host memory: once the queue has finished (what a blocking
 * read or write waits for too), one memcpy on this thread. PoCL would run a
 * read or write command on a worker thread and wake this one when done,
 * which costs more than copying a megabyte. CLRT__DECLINED where the
 * device's buffers have no host address. */
static clrt_status host_copy(const clrt_tensor *t, void *host, size_t bytes, int to_device)
{
    clrt_device *d = clrt__dev(t);
    void *p = clrt__host_ptr_get(d, clrt__mem(t));
    if (!p)
        return clrt__device_host_addressable(d) ? clrt_last_status() : CLRT__DECLINED;
    /* clFinish, not clrt__device_drain: on these devices (CPU drivers; no
     * copy queue) a marker costs a worker wake-up and sleeps, 50-300 us
     * per copy, where the driver's finish returns at once on an idle queue
     * (clrt-bench transfer). */
    long long t0 = clrt__trace_on() ? clrt__now_ns() : 0;
    cl_int err = clFinish(d->queue);
    if (err != CL_SUCCESS)
        return clrt__fail_cl(err, "clFinish (blocking copy)");
    clrt__trace_host(CLRT__TRACE_WAIT, "wait: clFinish (blocking copy)", t0);
    t0 = clrt__trace_on() ? clrt__now_ns() : 0;
    memcpy(to_device ? p : host, to_device ? host : p, bytes);
    clrt__trace_host(CLRT__TRACE_HOST, to_device ? "memcpy to device" : "memcpy to host", t0);
    return CLRT_OK;
}

static clrt_status write_host(clrt_tensor *t, const void *data, size_t bytes, cl_bool blocking)
{
    if (!t || !data)
        return clrt__fail(CLRT_EINVAL, "copy from host: NULL argument");
    size_t need = clrt_tensor_nbytes(t);
    if (bytes != need)
        return clrt__fail(CLRT_EINVAL, "copy from host: %zu bytes given, the tensor holds %zu",
                          bytes, need);
    if (need == 0)
        return CLRT_OK;
    clrt_status st = blocking ? host_copy(t, (void *)data, need, 1) : CLRT__DECLINED;
    if (st != CLRT__DECLINED)
        return st;
    cl_command_queue q = clrt__dev(t)->queue;
    cl_event ev = NULL;
    cl_int err = clEnqueueWriteBuffer(q, clrt__mem(t), CL_FALSE, 0, need, data, 0, NULL,
                                      blocking ? &ev : clrt__trace_slot(&ev));
    if (err != CL_SUCCESS)
        return clrt__fail_cl(err, "clEnqueueWriteBuffer");
    clrt__trace_keep(clrt__dev(t), q, ev, CLRT__TRACE_COPY, "clEnqueueWriteBuffer");
    if (!blocking && ev)
        clReleaseEvent(ev);
    if (!blocking) /* submitted now, so it runs beside the caller's work */
        return (err = clFlush(q)) == CL_SUCCESS ? CLRT_OK : clrt__fail_cl(err, "clFlush");
    st = clrt__wait_event(q, ev, 0, "clEnqueueWriteBuffer (copy from host)");
    clReleaseEvent(ev);
    return st;
}

clrt_status clrt_copy_from_host(clrt_tensor *t, const void *data, size_t bytes)
{
    return write_host(t, data, bytes, CL_TRUE);
}

clrt_status clrt_copy_from_host_async(clrt_tensor *t, const void *data, size_t bytes)
{
    return write_host(t, data, bytes, CL_FALSE);
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
    clrt_status st = host_copy(t, dst, need, 0);
    if (st != CLRT__DECLINED)
        return st;
    cl_command_queue q = clrt__dev(t)->queue;
    cl_event ev = NULL;
    cl_int err = clEnqueueReadBuffer(q, clrt__mem(t), CL_FALSE, 0, need, dst, 0, NULL, &ev);
    if (err != CL_SUCCESS)
        return clrt__fail_cl(err, "clEnqueueReadBuffer");
    clrt__trace_keep(clrt__dev(t), q, ev, CLRT__TRACE_COPY, "clEnqueueReadBuffer");
    st = clrt__wait_event(q, ev, 0, "clEnqueueReadBuffer (read to host)");
    clReleaseEvent(ev);
    return st;
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
        storage_release(t->storage);
        free(t);
    }
}

int clrt_tensor_refcount(const clrt_tensor *t) { return t ? atomic_load(&t->refcount) : 0; }

/* Copies src's bytes to dst on another device: from src's host address
 * when its device has one (after its queues drain), else through a mapped
 * source buffer: a map waited for (the values must exist before another
 * queue can see them), an upload, then an unmap. */
static clrt_status copy_across(clrt_tensor *src, clrt_tensor *dst)
{
    size_t bytes = clrt_tensor_nbytes(src);
    clrt_device *sd = clrt__dev(src);
    cl_int err = CL_SUCCESS;
    cl_event ev = NULL;
    if (bytes == 0)
        return CLRT_OK;
    void *host = clrt__host_ptr_get(sd, clrt__mem(src));
    if (!host && clrt__device_host_addressable(sd))
        return clrt_last_status();
    if (host) {
        clrt_status drained = clrt__device_drain(sd);
        return drained == CLRT_OK ? clrt_copy_from_host(dst, host, bytes) : drained;
    }
    void *p = clEnqueueMapBuffer(sd->queue, clrt__mem(src), CL_FALSE, CL_MAP_READ, 0, bytes, 0,
                                 NULL, &ev, &err);
    if (err != CL_SUCCESS)
        return clrt__fail_cl(err, "clEnqueueMapBuffer");
    clrt__trace_keep(sd, sd->queue, ev, CLRT__TRACE_COPY, "clEnqueueMapBuffer");
    clrt_status st = clrt__wait_event(sd->queue, ev, 0, "clEnqueueMapBuffer (copy across devices)");
    clReleaseEvent(ev);
    if (st == CLRT_OK)
        st = clrt_copy_from_host(dst, p, bytes);
    err = clEnqueueUnmapMemObject(sd->queue, clrt__mem(src), p, 0, NULL, clrt__trace_slot(&ev));
    clrt__trace_command(sd, sd->queue, ev, CLRT__TRACE_COPY, "clEnqueueUnmapMemObject");
    if (err == CL_SUCCESS)
        err = clFlush(sd->queue);
    if (st == CLRT_OK && err != CL_SUCCESS)
        st = clrt__fail_cl(err, "clEnqueueUnmapMemObject");
    return st;
}

clrt_tensor *clrt__tensor_copy_on(clrt_tensor *t, clrt_device *d)
{
    return clrt__dev(t) == d ? clrt_tensor_clone(t) : clrt_tensor_to(t, d);
}

clrt_tensor *clrt_tensor_to(clrt_tensor *t, clrt_device *d)
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
    if (x && copy_across(t, x) != CLRT_OK) {
        clrt_tensor_release(x);
        return NULL;
    }
    return x;
}

clrt_tensor *clrt_tensor_clone(clrt_tensor *t)
{
    if (!t) {
        clrt__fail(CLRT_EINVAL, "clrt_tensor_clone: tensor is NULL");
        return NULL;
    }
    clrt_tensor *x = clrt__alloc_like(t);
    size_t bytes = clrt_tensor_nbytes(t);
    if (!x || bytes == 0)
        return x;
    cl_event ev;
    cl_int err = clEnqueueCopyBuffer(clrt__dev(t)->queue, clrt__mem(t), clrt__mem(x), 0, 0, bytes,
                                     0, NULL, clrt__trace_slot(&ev));
    clrt__trace_command(clrt__dev(t), clrt__dev(t)->queue, ev, CLRT__TRACE_COPY,
                        "clEnqueueCopyBuffer");
    if (err != CL_SUCCESS) {
        clrt__fail_cl(err, "clEnqueueCopyBuffer");
        clrt_tensor_release(x);
        return NULL;
    }
    return x;
}

clrt_tensor *clrt_reshape(clrt_tensor *t, int ndim, const int64_t *shape)
{
    int64_t dims[CLRT_MAX_DIMS], known = 1, numel = 0;
    int infer = -1;
    char a[128], b[128];
    if (!t || ndim < 0 || ndim > CLRT_MAX_DIMS || (ndim > 0 && !shape)) {
        clrt__fail(CLRT_EINVAL, "clrt_reshape: NULL tensor or bad ndim %d", ndim);
        return NULL;
    }
    for (int i = 0; i < ndim; i++) {
        dims[i] = shape[i];
        if (shape[i] == -1 && infer < 0)
            infer = i;
        else if (shape[i] < 0) {
            clrt__fail(CLRT_EINVAL, "clrt_reshape: bad size %lld in dimension %d",
                       (long long)shape[i], i);
            return NULL;
        } else
            known = shape[i] && known > INT64_MAX / shape[i] ? INT64_MAX : known * shape[i];
    }
    /* -1 stands for what makes the sizes match; where nothing does, the
     * shapes mismatch (not a negative size). */
    int bad_infer = infer >= 0 && (known == 0 || t->numel % known != 0);
    if (infer >= 0 && !bad_infer)
        dims[infer] = t->numel / known;
    if (!bad_infer && check_shape("clrt_reshape", t->dtype, ndim, dims, &numel) != CLRT_OK)
        return NULL;
    if (bad_infer || numel != t->numel) {
        clrt__fail(CLRT_ESHAPE, "clrt_reshape: cannot view shape %s (%lld elements) as %s",
                   clrt_shape_str(t->ndim, t->shape, a, sizeof a), (long long)t->numel,
                   clrt_shape_str(ndim, shape, b, sizeof b));
        return NULL;
    }
    clrt_tensor *x = tensor_new(t->storage, t->dtype, ndim, dims, numel);
    if (x)
        atomic_fetch_add(&t->storage->refcount, 1);
    return x;
}

clrt_tensor *clrt_tensor_flatten(clrt_tensor *t)
{
    if (!t || t->ndim < 1) {
        clrt__fail(CLRT_EINVAL, "clrt_tensor_flatten: needs a tensor with at least one dimension");
        return NULL;
    }
    int64_t shape[2] = {t->shape[0], -1};
    if (t->shape[0] == 0)
        shape[1] = 0;
    else
        shape[1] = t->numel / t->shape[0];
    return clrt_reshape(t, 2, shape);
}
