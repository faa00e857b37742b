/* Reading a node: its attributes with their defaults, int64 inputs read
 * on the host, axes, and the error that names the node. */
#include "runtime/core/error_internal.h"
#include "runtime/onnx/onnx_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

clrt_status onnx_fail_node(const onnx_node *n, clrt_status code, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    const Onnx__NodeProto *p = n ? n->proto : NULL;
    if (!p)
        return clrt__fail(code, "onnx: %s", msg);
    return clrt__fail(code, "onnx: %s node '%s': %s", p->op_type ? p->op_type : "?",
                      p->name && *p->name           ? p->name
                      : p->n_output && p->output[0] ? p->output[0]
                                                    : "(unnamed)",
                      msg);
}

const Onnx__AttributeProto *onnx_attr(const onnx_node *n, const char *name)
{
    for (size_t i = 0; i < n->proto->n_attribute; i++)
        if (n->proto->attribute[i]->name && strcmp(n->proto->attribute[i]->name, name) == 0)
            return n->proto->attribute[i];
    return NULL;
}

int64_t onnx_attr_int(const onnx_node *n, const char *name, int64_t def)
{
    const Onnx__AttributeProto *a = onnx_attr(n, name);
    return a && a->has_i ? a->i : def;
}

double onnx_attr_float(const onnx_node *n, const char *name, double def)
{
    const Onnx__AttributeProto *a = onnx_attr(n, name);
    return a && a->has_f ? a->f : def;
}

int onnx_attr_ints(const onnx_node *n, const char *name, int64_t *out, int cap)
{
    const Onnx__AttributeProto *a = onnx_attr(n, name);
    if (!a)
        return -1;
    for (size_t i = 0; i < a->n_ints && (int)i < cap; i++)
        out[i] = a->ints[i];
    return (int)a->n_ints;
}

const char *onnx_attr_string(const onnx_node *n, const char *name, const char *def)
{
    const Onnx__AttributeProto *a = onnx_attr(n, name);
    static __thread char buf[256];
    if (!a || !a->has_s)
        return def;
    size_t len = a->s.len < sizeof buf - 1 ? a->s.len : sizeof buf - 1;
    memcpy(buf, a->s.data, len);
    buf[len] = 0;
    return buf;
}

int onnx_input_ints(clrt_onnx_model *m, const onnx_node *n, onnx_value *v, int64_t *out, int cap)
{
    if (v->type != ONNX_INT64 && v->type != ONNX_INT32) {
        onnx_fail_node(n, CLRT_EINVAL, "an input that should hold integers is %s",
                       onnx_type_name(v->type));
        return -1;
    }
    int64_t cnt = onnx_numel(v);
    if (v->ndim > 1 || cnt > cap) {
        onnx_fail_node(n, CLRT_EINVAL, "an integer list input has %lld values (at most %d)",
                       (long long)cnt, cap);
        return -1;
    }
    if (!onnx_need_host(m, n, v))
        return -1;
    for (int64_t i = 0; i < cnt; i++)
        out[i] = onnx_host_i64(v, i);
    return (int)cnt;
}

int onnx_axis(const onnx_node *n, int64_t axis, int ndim)
{
    if (axis < -ndim || axis >= (ndim ? ndim : 1)) {
        onnx_fail_node(n, CLRT_EINVAL, "axis %lld is out of range for %d dims", (long long)axis,
                       ndim);
        return -1;
    }
    return (int)(axis < 0 ? axis + ndim : axis);
}

clrt_status onnx_refuse_grad(const onnx_node *n, int k, clrt_tensor *const *ts)
{
    if (!clrt_is_grad_enabled())
        return CLRT_OK;
    for (int i = 0; i < k; i++)
        if (ts[i] && clrt_tensor_requires_grad(ts[i]))
            return onnx_fail_node(n, CLRT_ENOTSUP,
                                  "these arguments take a kernel without a gradient rule; run it "
                                  "with grad mode off or keep its inputs out of training");
    return CLRT_OK;
}
