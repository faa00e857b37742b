/* clrt_tensor_print: PyTorch's repr (torch/_tensor_str.py), eliding the
 * middle of large tensors: the same number formats, field widths, 80-column
 * line wrapping and " ..." markers, so output reads like torch's. */
#include "runtime/tensor/tensor_internal.h"
#include "runtime/core/alloc_internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define ELIDE_ABOVE 1000 /* PyTorch's default threshold */
#define EDGE 3           /* items kept at each end of an elided dimension */
#define LINE_WIDTH 80
#define PREFIX "tensor("

typedef struct {
    const clrt_tensor *t;
    const void *data;
    int summarize; /* elide the middle of long dimensions */
    int int_mode;  /* float32 whose shown values are all integers: "1." */
    int sci;       /* "1.0000e-05" */
    int width;     /* common field width */
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

/* One value, unpadded. NaN prints as "nan" whatever its sign bit (glibc
 * would print the poison pattern as "-nan"). */
static int format_raw(const printer *p, double v, char *buf, size_t cap)
{
    if (p->t->dtype != CLRT_F32)
        return snprintf(buf, cap, "%.0f", v);
    if (isnan(v))
        return snprintf(buf, cap, "nan");
    if (isinf(v))
        return snprintf(buf, cap, v > 0 ? "inf" : "-inf");
    if (p->sci)
        return snprintf(buf, cap, "%.4e", v);
    if (p->int_mode)
        return snprintf(buf, cap, "%.0f.", v);
    return snprintf(buf, cap, "%.4f", v);
}

static void put_value(const printer *p, double v)
{
    char buf[64];
    format_raw(p, v, buf, sizeof buf);
    fprintf(p->f, "%*s", p->width, buf);
}

/* Is flat index i shown, or inside an elided middle? */
static int shown(const printer *p, int64_t i)
{
    if (!p->summarize)
        return 1;
    for (int d = p->t->ndim - 1; d >= 0; d--) {
        int64_t n = p->t->shape[d], k = i % n;
        i /= n;
        if (n > 2 * EDGE && k >= EDGE && k < n - EDGE)
            return 0;
    }
    return 1;
}

/* PyTorch's _Formatter over the shown values: integers print at their
 * widest; float32 chooses integer, fixed or scientific notation from the
 * nonzero finite values, and the width from those alone. */
static void choose_format(printer *p)
{
    double lo = INFINITY, hi = 0;
    char buf[64];
    p->int_mode = 1;
    p->sci = 0;
    p->width = 1;
    for (int64_t i = 0; i < p->t->numel; i++) {
        double v = value_at(p, i);
        if (!shown(p, i) || (p->t->dtype == CLRT_F32 && (!isfinite(v) || v == 0)))
            continue;
        if (p->t->dtype != CLRT_F32) {
            int w = format_raw(p, v, buf, sizeof buf);
            p->width = w > p->width ? w : p->width;
            continue;
        }
        lo = fmin(lo, fabs(v));
        hi = fmax(hi, fabs(v));
        if (v != ceil(v))
            p->int_mode = 0;
    }
    if (p->t->dtype != CLRT_F32 || hi == 0)
        return;
    p->sci = hi / lo > 1000.0 || hi > 1.0e8 || (!p->int_mode && lo < 1.0e-4);
    for (int64_t i = 0; i < p->t->numel; i++) {
        double v = value_at(p, i);
        if (shown(p, i) && isfinite(v) && v != 0) {
            int w = format_raw(p, v, buf, sizeof buf);
            p->width = w > p->width ? w : p->width;
        }
    }
}

static void newline_indent(const printer *p, int newlines, int indent)
{
    fputc(',', p->f);
    for (int i = 0; i < newlines; i++)
        fputc('\n', p->f);
    fprintf(p->f, "%*s", indent, "");
}

/* The last dimension: as many values per line as fit in 80 columns. */
static void print_vector(const printer *p, int64_t offset, int indent)
{
    int64_t n = p->t->shape[p->t->ndim - 1];
    int elide = p->summarize && n > 2 * EDGE;
    int64_t items = elide ? 2 * EDGE + 1 : n;
    int64_t per_line = (LINE_WIDTH - indent) / (p->width + 2);
    if (per_line < 1)
        per_line = 1;
    fputc('[', p->f);
    for (int64_t k = 0; k < items; k++) {
        if (k > 0 && k % per_line == 0)
            newline_indent(p, 1, indent + 1);
        else if (k > 0)
            fputs(", ", p->f);
        if (elide && k == EDGE)
            fputs(" ...", p->f);
        else
            put_value(p, value_at(p, offset + (elide && k > EDGE ? n - (items - k) : k)));
    }
    fputc(']', p->f);
}

static void print_dim(const printer *p, int dim, int64_t offset, int indent)
{
    const clrt_tensor *t = p->t;
    if (dim == t->ndim - 1) {
        print_vector(p, offset, indent);
        return;
    }
    int64_t n = t->shape[dim], stride = 1;
    for (int k = dim + 1; k < t->ndim; k++)
        stride *= t->shape[k];
    int elide = p->summarize && n > 2 * EDGE;
    fputc('[', p->f);
    for (int64_t i = 0; i < n; i++) {
        if (elide && i >= EDGE && i < n - EDGE) {
            if (i == EDGE) {
                fputs("...", p->f);
                newline_indent(p, t->ndim - dim - 1, indent + 1);
            }
            continue;
        }
        print_dim(p, dim + 1, offset + i * stride, indent + 1);
        if (i + 1 < n)
            newline_indent(p, t->ndim - dim - 1, indent + 1);
    }
    fputc(']', p->f);
}

/* Writes "tensor(<body>" to a string, so the suffixes can wrap as
 * PyTorch's do. */
static char *render_body(printer *p, size_t *len)
{
    char *text = NULL;
    FILE *f = open_memstream(&text, len);
    if (!f)
        return NULL;
    p->f = f;
    fputs(PREFIX, f);
    if (p->t->ndim == 0)
        put_value(p, value_at(p, 0));
    else if (p->t->numel == 0)
        fputs("[]", f);
    else
        print_dim(p, 0, 0, (int)strlen(PREFIX));
    if (fclose(f) != 0) {
        free(text);
        return NULL;
    }
    return text;
}

/* ", device='cpu'" and the like, on a new line when the last one is full. */
static void print_suffixes(FILE *f, const clrt_tensor *t, const char *body, size_t len)
{
    char suffixes[3][160], shape[128];
    int n = 0;
    snprintf(suffixes[n++], sizeof suffixes[0], "device='%s'", clrt__dev(t)->info.name);
    if (t->numel == 0 && t->ndim != 1)
        snprintf(suffixes[n++], sizeof suffixes[0], "size=%s",
                 clrt_shape_str(t->ndim, t->shape, shape, sizeof shape));
    if (t->dtype != CLRT_F32)
        snprintf(suffixes[n++], sizeof suffixes[0], "dtype=%s", clrt_dtype_str(t->dtype));
    const char *nl = strrchr(body, '\n');
    size_t last = nl ? (size_t)(body + len - nl) + 1 : len + 2; /* as _add_suffixes counts */
    fputs(body, f);
    for (int i = 0; i < n; i++) {
        size_t s = strlen(suffixes[i]);
        if (last + s + 2 > LINE_WIDTH) {
            fprintf(f, ",\n%*s%s", (int)strlen(PREFIX), "", suffixes[i]);
            last = strlen(PREFIX) + s;
        } else {
            fprintf(f, ", %s", suffixes[i]);
            last += s + 2;
        }
    }
    fputs(")\n", f);
}

clrt_status clrt_tensor_print(FILE *f, const clrt_tensor *t)
{
    if (!f || !t)
        return clrt__fail(CLRT_EINVAL, "clrt_tensor_print: NULL argument");
    size_t bytes = clrt_tensor_nbytes(t), len = 0;
    void *data = clrt__malloc(bytes ? bytes : 1);
    if (!data)
        return clrt__fail(CLRT_ENOMEM, "clrt_tensor_print: out of host memory");
    clrt_status st = clrt_to_host(t, data, bytes);
    if (st != CLRT_OK) {
        free(data);
        return st;
    }
    printer p = {.t = t, .data = data, .summarize = t->numel > ELIDE_ABOVE};
    choose_format(&p);
    char *body = render_body(&p, &len);
    if (body)
        print_suffixes(f, t, body, len);
    else
        st = clrt__fail(CLRT_ENOMEM, "clrt_tensor_print: out of host memory");
    /* What the stream took must reach its file: a full disk is an error. */
    if (body && (fflush(f) != 0 || ferror(f)))
        st = clrt__fail(CLRT_EIO, "clrt_tensor_print: writing failed: %s", strerror(errno));
    free(body);
    free(data);
    return st;
}
