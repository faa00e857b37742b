/* A graph's values between host and device (onnx_internal.h): int64
 * narrowed to the device's int32 on the way up (refused when a value does
 * not fit), widened on the way down. */
#include "runtime/core/alloc_internal.h"
#include "runtime/core/error_internal.h"
#include "runtime/onnx/onnx_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void onnx_set_dev(onnx_value *out, int type, clrt_tensor *t)
{
    clrt_tensor_retain(t);
    out->dev = t;
    out->type = type;
    out->ndim = t->ndim;
    memcpy(out->shape, t->shape, sizeof out->shape);
}

clrt_tensor *onnx_need_dev(clrt_onnx_model *m, const onnx_node *n, onnx_value *v)
{
    if (v->dev)
        return v->dev;
    if (!v->host) {
        onnx_fail_node(n, CLRT_EINVAL, "an input has no value");
        return NULL;
    }
    int64_t cnt = onnx_numel(v);
    const void *src = v->host;
    int32_t *narrow = NULL;
    if (v->type == ONNX_INT64) { /* int64 goes up as int32 when every value fits */
        narrow = clrt__malloc((size_t)(cnt > 0 ? cnt : 1) * 4);
        if (!narrow)
            return NULL;
        for (int64_t i = 0; i < cnt; i++) {
            int64_t x = ((const int64_t *)v->host)[i];
            if (x < INT32_MIN || x > INT32_MAX) {
                free(narrow);
                onnx_fail_node(n, CLRT_ENOTSUP,
                               "int64 value %lld (element %lld) does not fit the device's int32",
                               (long long)x, (long long)i);
                return NULL;
            }
            narrow[i] = (int32_t)x;
        }
        src = narrow;
    }
    v->dev = clrt_from_host(m->dev, onnx_dev_dtype(v->type), v->ndim, v->shape, src);
    free(narrow);
    return v->dev;
}

const void *onnx_need_host(clrt_onnx_model *m, const onnx_node *n, onnx_value *v)
{
    (void)m;
    if (v->host)
        return v->host;
    if (!v->dev) {
        onnx_fail_node(n, CLRT_EINVAL, "an input has no value");
        return NULL;
    }
    int64_t cnt = onnx_numel(v);
    if (!onnx_set_host(v, v->type, v->ndim, v->shape))
        return NULL;
    size_t bytes = (size_t)cnt * clrt_dtype_size(v->dev->dtype);
    void *buf = v->type == ONNX_INT64 ? clrt__malloc(bytes ? bytes : 1) : v->host;
    if (!buf || clrt_to_host(v->dev, buf, bytes) != CLRT_OK) {
        if (buf != v->host)
            free(buf);
        free(v->host);
        v->host = NULL;
        return NULL;
    }
    if (v->type == ONNX_INT64) {
        for (int64_t i = 0; i < cnt; i++)
            ((int64_t *)v->host)[i] = ((const int32_t *)buf)[i];
        free(buf);
    }
    return v->host;
}

clrt_status onnx_take_dev(const onnx_node *n, onnx_value *out, int type, clrt_tensor *t)
{
    if (!t) {
        char msg[1024];
        snprintf(msg, sizeof msg, "%s", clrt_last_error());
        return onnx_fail_node(n, clrt_last_status(), "%s", msg);
    }
    onnx_set_dev(out, type, t);
    clrt_tensor_release(t);
    return CLRT_OK;
}
