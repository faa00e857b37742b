/* A graph's values on the host (onnx_internal.h): element types, host
 * buffers, and TensorProto contents (inline, typed or external). Needs no
 * device but for releasing a value's tensor. */
#include "runtime/core/alloc_internal.h"
#include "runtime/core/error_internal.h"
#include "runtime/core/file_internal.h"
#include "runtime/onnx/onnx_internal.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int64_t onnx_numel(const onnx_value *v)
{
    int64_t n = 1;
    for (int i = 0; i < v->ndim; i++)
        n *= v->shape[i];
    return n;
}

size_t onnx_type_size(int type)
{
    switch (type) {
    case ONNX_FLOAT:
    case ONNX_INT32:
        return 4;
    case ONNX_INT64:
        return 8;
    case ONNX_BOOL:
        return 1;
    default:
        return 0;
    }
}

const char *onnx_type_name(int type)
{
    static const char *names[] = {"undefined",  "float",   "uint8",  "int8",   "uint16",
                                  "int16",      "int32",   "int64",  "string", "bool",
                                  "float16",    "double",  "uint32", "uint64", "complex64",
                                  "complex128", "bfloat16"};
    return type >= 0 && type < (int)(sizeof names / sizeof *names) ? names[type] : "unknown";
}

const char *clrt_onnx_type_str(int elem_type) { return onnx_type_name(elem_type); }

clrt_dtype onnx_dev_dtype(int type)
{
    return type == ONNX_FLOAT ? CLRT_F32 : type == ONNX_BOOL ? CLRT_U8 : CLRT_I32;
}

void onnx_value_clear(onnx_value *v)
{
    clrt_tensor_release(v->dev);
    free(v->host);
    memset(v, 0, sizeof *v);
}

void *onnx_set_host(onnx_value *out, int type, int ndim, const int64_t *shape)
{
    out->type = type;
    out->ndim = ndim;
    for (int i = 0; i < ndim; i++)
        out->shape[i] = shape[i];
    int64_t n = onnx_numel(out);
    out->host = clrt__calloc((size_t)(n > 0 ? n : 1), onnx_type_size(type));
    if (!out->host)
        clrt__fail(CLRT_ENOMEM, "onnx: out of host memory for a tensor of %lld elements",
                   (long long)n);
    return out->host;
}

int64_t onnx_host_i64(const onnx_value *v, int64_t i)
{
    switch (v->type) {
    case ONNX_INT64:
        return ((const int64_t *)v->host)[i];
    case ONNX_INT32:
        return ((const int32_t *)v->host)[i];
    case ONNX_BOOL:
        return ((const uint8_t *)v->host)[i];
    default:
        return (int64_t)((const float *)v->host)[i];
    }
}

double onnx_host_f64(const onnx_value *v, int64_t i)
{
    return v->type == ONNX_FLOAT ? (double)((const float *)v->host)[i]
                                 : (double)onnx_host_i64(v, i);
}

/* How many elements a TensorProto's typed field holds (int32 and bool
 * both in int32_data). */
static size_t typed_count(const Onnx__TensorProto *t)
{
    return t->data_type == ONNX_FLOAT   ? t->n_float_data
           : t->data_type == ONNX_INT64 ? t->n_int64_data
                                        : t->n_int32_data;
}

/* The typed-field form (no raw_data) into dst; its count checked. */
static void copy_typed(const Onnx__TensorProto *t, int64_t cnt, void *dst)
{
    if (cnt == 0)
        return; /* an empty field's pointer may be NULL */
    if (t->data_type == ONNX_FLOAT)
        memcpy(dst, t->float_data, (size_t)cnt * 4);
    else if (t->data_type == ONNX_INT64)
        memcpy(dst, t->int64_data, (size_t)cnt * 8);
    else
        for (int64_t i = 0; i < cnt; i++) {
            if (t->data_type == ONNX_BOOL)
                ((uint8_t *)dst)[i] = t->int32_data[i] != 0;
            else
                ((int32_t *)dst)[i] = t->int32_data[i];
        }
}

static const char *external_field(const Onnx__TensorProto *t, const char *key)
{
    for (size_t i = 0; i < t->n_external_data; i++)
        if (t->external_data[i]->key && strcmp(t->external_data[i]->key, key) == 0)
            return t->external_data[i]->value;
    return NULL;
}

/* An external-data tensor: bytes [offset, offset + length) of a file
 * beside the model, a relative path that stays inside its folder. */
static clrt_status read_external(const Onnx__TensorProto *t, const char *dir, size_t bytes,
                                 onnx_value *v, const int64_t *shape, const char *what)
{
    const char *loc = external_field(t, "location"), *off = external_field(t, "offset"),
               *len = external_field(t, "length");
    if (!loc || !*loc || loc[0] == '/' || strstr(loc, ".."))
        return clrt__fail(CLRT_EFORMAT,
                          "onnx: tensor '%s': external data location '%s' is not a file name "
                          "relative to the model's folder",
                          what, loc ? loc : "(none)");
    char *end = NULL;
    unsigned long long o = off ? strtoull(off, &end, 10) : 0;
    if (off && (!*off || *end))
        return clrt__fail(CLRT_EFORMAT, "onnx: tensor '%s': bad external offset '%s'", what, off);
    if (len && (strtoull(len, &end, 10) != bytes || *end))
        return clrt__fail(CLRT_EFORMAT,
                          "onnx: tensor '%s': external length %s, its shape needs %zu", what, len,
                          bytes);
    char path[CLRT__PATH_CAP];
    if (snprintf(path, sizeof path, "%s/%s", dir, loc) >= (int)sizeof path)
        return clrt__fail(CLRT_EINVAL, "onnx: tensor '%s': external path too long", what);
    uint64_t size = 0;
    int fd = clrt__file_open_read(path, UINT64_MAX, "ONNX external data", &size);
    if (fd < 0)
        return clrt_last_status();
    clrt_status st = CLRT_OK;
    if (o > size || bytes > size - o)
        st = clrt__fail(CLRT_EFORMAT,
                        "onnx: tensor '%s': bytes %llu..%llu lie past the end of %s (%llu bytes)",
                        what, o, o + bytes, path, (unsigned long long)size);
    else if (!onnx_set_host(v, t->data_type, (int)t->n_dims, shape))
        st = clrt_last_status(); /* allocated once the file is known to hold it */
    else if (!clrt__pread_full(fd, v->host, bytes, o))
        st = clrt__fail(CLRT_EIO, "onnx: tensor '%s': cannot read %s", what, path);
    close(fd);
    return st;
}

clrt_status onnx_tensor_from_proto(const Onnx__TensorProto *t, const char *dir, onnx_value *v,
                                   const char *what)
{
    memset(v, 0, sizeof *v);
    size_t es = onnx_type_size(t->data_type);
    if (!es)
        return clrt__fail(CLRT_ENOTSUP,
                          "onnx: tensor '%s' has element type %s, which clrt does not run", what,
                          onnx_type_name(t->data_type));
    if (t->n_dims > CLRT_MAX_DIMS)
        return clrt__fail(CLRT_ENOTSUP, "onnx: tensor '%s' has %zu dims (clrt holds at most %d)",
                          what, t->n_dims, CLRT_MAX_DIMS);
    int64_t cnt = 1;
    for (size_t i = 0; i < t->n_dims; i++) {
        if (t->dims[i] < 0 || (t->dims[i] > 0 && cnt > INT64_MAX / 8 / t->dims[i]))
            return clrt__fail(CLRT_EFORMAT, "onnx: tensor '%s' has dim %zu of size %lld", what, i,
                              (long long)t->dims[i]);
        cnt *= t->dims[i];
    }
    int64_t shape[CLRT_MAX_DIMS];
    for (size_t i = 0; i < t->n_dims; i++)
        shape[i] = t->dims[i];
    size_t bytes = (size_t)cnt * es;
    int external =
        t->has_data_location && t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    /* The data's size checked before the shape's bytes are allocated: a
     * header cannot make the reader allocate what the file does not hold. */
    if (!external && t->has_raw_data && t->raw_data.len != bytes)
        return clrt__fail(CLRT_EFORMAT,
                          "onnx: tensor '%s' holds %zu bytes of data, its shape needs %zu", what,
                          t->raw_data.len, bytes);
    if (!external && !t->has_raw_data && typed_count(t) != (size_t)cnt)
        return clrt__fail(CLRT_EFORMAT, "onnx: tensor '%s' holds %zu elements, its shape %lld",
                          what, typed_count(t), (long long)cnt);
    if (external) {
        clrt_status st = read_external(t, dir, bytes, v, shape, what);
        if (st != CLRT_OK)
            onnx_value_clear(v);
        return st;
    }
    if (!onnx_set_host(v, t->data_type, (int)t->n_dims, shape))
        return clrt_last_status();
    clrt_status st = CLRT_OK;
    if (t->has_raw_data) {
        if (bytes)
            memcpy(v->host, t->raw_data.data, bytes);
        for (size_t i = 0; t->data_type == ONNX_BOOL && i < bytes; i++)
            ((uint8_t *)v->host)[i] = ((uint8_t *)v->host)[i] != 0;
    } else
        copy_typed(t, cnt, v->host);
    if (st != CLRT_OK)
        onnx_value_clear(v);
    return st;
}
