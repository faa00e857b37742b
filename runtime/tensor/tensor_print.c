/* clrt_tensor_print: PyTorch's repr, eliding the middle of large tensors. */
#include "runtime/tensor/tensor_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define ELIDE_ABOVE 1000 /* PyTorch's default threshold */
#define EDGE 3           /* items kept at each end of an elided dimension */

typedef struct {
    const clrt_tensor *t;
    const void *data;
    int elide;
    int width;    /* common field width */
    int decimals; /* -1: integers; 0: "1." style; else fixed decimals */
    int sci;
    FILE *f;
} printer;

static double value_at(const printer *p, int64_t i)
{
    switch (p->t->dtype) {
    case CLRT_F32:
        return ((const float *)p->data)[i];
    case CLRT_I32:
        return ((const int32_t *)p->data)[i];
    case CLRT_U8:
        return ((const uint8_t *)p->data)[i];
    }
    return 0;
}

static int format_value(const printer *p, double v, char *buf, size_t cap)
{
    if (p->decimals < 0)
        return snprintf(buf, cap, "%.0f", v);
    if (isnan(v))
        return snprintf(buf, cap, "nan");
    if (isinf(v))
        return snprintf(buf, cap, v > 0 ? "inf" : "-inf");
    if (p->sci)
        return snprintf(buf, cap, "%.4e", v);
    if (p->decimals == 0)
        return snprintf(buf, cap, "%.0f.", v);
    return snprintf(buf, cap, "%.*f", p->decimals, v);
}

/* Is index i of a dimension of size n shown? */
static int shown(const printer *p, int64_t i, int64_t n)
{
    return !p->elide || n <= 2 * EDGE || i < EDGE || i >= n - EDGE;
}

/* Visits the shown elements to pick the format (like PyTorch's _Formatter). */
static void choose_format(printer *p)
{
    const clrt_tensor *t = p->t;
    double max_abs = 0, min_abs = INFINITY;
    int all_int = 1;
    for (int64_t i = 0; i < t->numel; i++) {
        double v = value_at(p, i);
        if (!isfinite(v))
            continue;
        double a = fabs(v);
        if (a > max_abs)
            max_abs = a;
        if (a > 0 && a < min_abs)
            min_abs = a;
        if (v != floor(v))
            all_int = 0;
    }
    p->decimals = t->dtype != CLRT_F32 ? -1 : all_int ? 0 : 4;
    p->sci = t->dtype == CLRT_F32 &&
             (max_abs >= 1e8 || (!all_int && min_abs < 1e-4) ||
              (min_abs < INFINITY && max_abs / min_abs > 1000 && !all_int));
    if (p->sci && all_int && max_abs < 1e8)
        p->sci = 0;
    p->width = 1;
    char buf[64];
    for (int64_t i = 0; i < t->numel; i++) {
        int w = format_value(p, value_at(p, i), buf, sizeof buf);
        if (w > p->width)
            p->width = w;
    }
}

static void print_dim(const printer *p, int dim, int64_t offset, int indent)
{
    const clrt_tensor *t = p->t;
    int64_t n = t->shape[dim], stride = 1;
    for (int k = dim + 1; k < t->ndim; k++)
        stride *= t->shape[k];
    fputc('[', p->f);
    for (int64_t i = 0; i < n; i++) {
        if (!shown(p, i, n)) {
            if (i == EDGE)
                fprintf(p->f, dim == t->ndim - 1 ? "..., " : "...,\n%*s", indent + 1, "");
            continue;
        }
        if (dim == t->ndim - 1) {
            char buf[64];
            format_value(p, value_at(p, offset + i), buf, sizeof buf);
            fprintf(p->f, "%*s", p->width, buf);
        } else {
            print_dim(p, dim + 1, offset + i * stride, indent + 1);
        }
        if (i + 1 < n) {
            fputc(',', p->f);
            if (dim == t->ndim - 1)
                fputc(' ', p->f);
            else
                fprintf(p->f, "%.*s%*s", t->ndim - dim - 1, "\n\n\n\n\n\n\n\n", indent + 1, "");
        }
    }
    fputc(']', p->f);
}

clrt_status clrt_tensor_print(FILE *f, const clrt_tensor *t)
{
    if (!f || !t)
        return clrt__fail(CLRT_EINVAL, "clrt_tensor_print: NULL argument");
    size_t bytes = clrt_tensor_nbytes(t);
    void *data = malloc(bytes ? bytes : 1);
    if (!data)
        return clrt__fail(CLRT_ENOMEM, "clrt_tensor_print: out of host memory");
    clrt_status st = clrt_to_host(t, data, bytes);
    if (st != CLRT_OK) {
        free(data);
        return st;
    }
    printer p = {.t = t, .data = data, .elide = t->numel > ELIDE_ABOVE, .f = f};
    choose_format(&p);
    fputs("tensor(", f);
    if (t->ndim == 0) {
        char buf[64];
        format_value(&p, value_at(&p, 0), buf, sizeof buf);
        fputs(buf, f);
    } else if (t->numel == 0) {
        fputs("[]", f);
    } else {
        print_dim(&p, 0, 0, (int)strlen("tensor("));
    }
    if (t->ndim > 0 && t->numel == 0) {
        char s[128];
        fprintf(f, ", size=%s", clrt_shape_str(t->ndim, t->shape, s, sizeof s));
    }
    fprintf(f, ", device='%s'", clrt__dev(t)->info.name);
    if (t->dtype != CLRT_F32)
        fprintf(f, ", dtype=%s", clrt_dtype_str(t->dtype));
    fputs(")\n", f);
    free(data);
    return CLRT_OK;
}
