/* The gradient-check harness (gradcheck.h): fresh inputs, the op's forward
 * against the float64 reference, its gradients from clrt_backward_with
 * against central finite differences of the reference. */
#include "gradcheck.h"

#include <math.h>
#include <string.h>

#define FD_EPS 1e-6
#define MAX_FD 64 /* finite-difference coordinates per input at most */

int64_t gc_numel(int ndim, const int64_t *shape)
{
    int64_t n = 1;
    for (int i = 0; i < ndim; i++)
        n *= shape[i];
    return n;
}

void gc_coords(int64_t k, int ndim, const int64_t *shape, int64_t *idx)
{
    for (int i = ndim - 1; i >= 0; i--) {
        idx[i] = shape[i] ? k % shape[i] : 0;
        k = shape[i] ? k / shape[i] : 0;
    }
}

int64_t gc_bcast_index(const int64_t *idx, int out_ndim, int ndim, const int64_t *shape)
{
    int64_t k = 0;
    for (int i = 0; i < ndim; i++) {
        int64_t c = shape[i] == 1 ? 0 : idx[out_ndim - ndim + i];
        k = k * shape[i] + c;
    }
    return k;
}

/* One input: the leaf's values (float64 master, exactly what float32
 * holds), the leaf, and what the op sees (the leaf, or its transpose). */
typedef struct {
    int64_t leaf_shape[8];
    size_t n;
    double *v;
    clrt_tensor *leaf, *seen;
} gc_value;

static double draw(gc_values kind, int range, uint64_t *rng)
{
    switch (kind) {
    case GC_POSITIVE:
        return tu_uniform(rng, 0.5, 2.0);
    case GC_AWAY: {
        double v = tu_uniform(rng, 0.1, 1.0);
        return tu_next(rng) & 1 ? v : -v;
    }
    case GC_INDEX:
        return (double)(tu_next(rng) % (uint64_t)(range > 0 ? range : 1));
    case GC_MASK:
        return (double)(tu_next(rng) & 1);
    case GC_UNIFORM:
        break;
    }
    return tu_uniform(rng, -1.0, 1.0);
}

static int is_float(const gc_input *in) { return in->values != GC_INDEX && in->values != GC_MASK; }

/* v (leaf layout) as the op sees it, into out. */
static void seen_values(const gc_input *in, const gc_value *val, double *out)
{
    if (!in->transposed) {
        memcpy(out, val->v, val->n * sizeof *out);
        return;
    }
    int nd = in->ndim;
    int64_t idx[8], lidx[8];
    for (size_t k = 0; k < val->n; k++) {
        gc_coords((int64_t)k, nd, in->shape, idx);
        memcpy(lidx, idx, sizeof idx);
        lidx[nd - 1] = idx[nd - 2], lidx[nd - 2] = idx[nd - 1];
        int64_t lk = 0;
        for (int i = 0; i < nd; i++)
            lk = lk * val->leaf_shape[i] + lidx[i];
        out[k] = val->v[lk];
    }
}

/* Uploads input i as its dtype; float leaves require grad unless constant. */
static clrt_tensor *upload(const gc_input *in, gc_value *val)
{
    void *host = malloc(val->n * 4 + 4);
    clrt_dtype dt = in->values == GC_INDEX ? CLRT_I32 : in->values == GC_MASK ? CLRT_U8 : CLRT_F32;
    for (size_t k = 0; k < val->n; k++) {
        if (dt == CLRT_F32)
            ((float *)host)[k] = (float)val->v[k];
        else if (dt == CLRT_I32)
            ((int32_t *)host)[k] = (int32_t)val->v[k];
        else
            ((uint8_t *)host)[k] = (uint8_t)val->v[k];
    }
    clrt_tensor *t = TU_NONNULL(clrt_from_host(tu_device(), dt, in->ndim, val->leaf_shape, host));
    free(host);
    if (dt == CLRT_F32 && !in->constant)
        TU_OK(clrt_requires_grad_(t, 1));
    return t;
}

static void make_inputs(const gc_case *c, gc_value *vals, uint64_t *rng)
{
    for (int i = 0; i < c->n_in; i++) {
        const gc_input *in = &c->in[i];
        gc_value *val = &vals[i];
        memcpy(val->leaf_shape, in->shape, sizeof in->shape);
        if (in->transposed) {
            val->leaf_shape[in->ndim - 1] = in->shape[in->ndim - 2];
            val->leaf_shape[in->ndim - 2] = in->shape[in->ndim - 1];
        }
        val->n = (size_t)gc_numel(in->ndim, in->shape);
        val->v = malloc((val->n + 1) * sizeof *val->v);
        for (size_t k = 0; k < val->n; k++)
            val->v[k] = (double)(float)draw(in->values, in->range, rng);
        val->leaf = upload(in, val);
        val->seen = in->transposed ? TU_NONNULL(clrt_transpose(val->leaf, -1, -2)) : val->leaf;
        if (in->transposed)
            ck_assert(clrt_tensor_requires_grad(val->seen));
        else
            clrt_tensor_retain(val->seen);
    }
}

/* sum(ref(inputs) * r) in float64, the inputs as the op sees them. An
 * output that is not finite (a fill of -inf) is a constant of the inputs:
 * left out, so that the differences stay finite. */
static double ref_loss(const gc_case *c, gc_value *vals, const double *r, size_t nout, double *out,
                       double **seen)
{
    for (int i = 0; i < c->n_in; i++)
        seen_values(&c->in[i], &vals[i], seen[i]);
    size_t n = c->ref(c, (const double *const *)seen, out);
    double l = 0;
    for (size_t k = 0; k < n && k < nout; k++)
        if (isfinite(out[k]))
            l += out[k] * r[k];
    return l;
}

/* Central differences of the loss over up to MAX_FD coordinates of input
 * i (spread over it), against clrt's gradient there: ||g - fd|| / ||fd||. */
static double grad_error(const gc_case *c, gc_value *vals, int i, const float *g, const double *r,
                         size_t nout, double *out, double **seen)
{
    gc_value *val = &vals[i];
    size_t step = val->n > MAX_FD ? val->n / MAX_FD : 1;
    double diff = 0, norm = 0;
    for (size_t k = 0; k < val->n; k += step) {
        double keep = val->v[k];
        val->v[k] = keep + FD_EPS;
        double up = ref_loss(c, vals, r, nout, out, seen);
        val->v[k] = keep - FD_EPS;
        double down = ref_loss(c, vals, r, nout, out, seen);
        val->v[k] = keep;
        double fd = (up - down) / (2 * FD_EPS);
        diff += (g[k] - fd) * (g[k] - fd);
        norm += fd * fd;
    }
    return norm > 0 ? sqrt(diff / norm) : sqrt(diff);
}

static void set_failed(gc_result *res, const char *fmt, const char *what)
{
    res->failed = 1;
    snprintf(res->why, sizeof res->why, fmt, what);
}

/* y's values as floats, whatever its dtype (malloc'ed). */
static float *read_as_floats(const clrt_tensor *y)
{
    size_t n = (size_t)clrt_tensor_numel(y);
    clrt_dtype t = clrt_tensor_dtype(y);
    if (t == CLRT_F32)
        return tu_read(y);
    void *raw = malloc(clrt_tensor_nbytes(y) + 4);
    float *f = malloc((n + 1) * sizeof *f);
    TU_OK(clrt_to_host(y, raw, clrt_tensor_nbytes(y)));
    for (size_t k = 0; k < n; k++)
        f[k] = t == CLRT_I32 ? (float)((int32_t *)raw)[k] : (float)((uint8_t *)raw)[k];
    free(raw);
    return f;
}

/* The forward: clrt's output against the reference; sets res. */
static void check_forward(const gc_case *c, clrt_tensor *y, gc_value *vals, double *out,
                          double **seen, size_t *nout, gc_result *res)
{
    for (int i = 0; i < c->n_in; i++)
        seen_values(&c->in[i], &vals[i], seen[i]);
    size_t n = c->ref(c, (const double *const *)seen, out);
    *nout = (size_t)clrt_tensor_numel(y);
    if (n != *nout) {
        res->failed = 1;
        snprintf(res->why, sizeof res->why, "output has %zu elements, the reference %zu", *nout, n);
        return;
    }
    float *got = read_as_floats(y);
    res->forward = n ? tu_rel_err(got, out, n, 1.0) : 0.0;
    free(got);
}

gc_result gc_run(const gc_case *c, gc_call call, uint64_t seed)
{
    gc_result res = {0, 0, 0, ""};
    gc_value vals[GC_MAX_IN] = {0};
    double *seen[GC_MAX_IN] = {NULL};
    uint64_t rng = seed;
    make_inputs(c, vals, &rng);
    clrt_tensor *seen_t[GC_MAX_IN];
    for (int i = 0; i < c->n_in; i++) {
        seen_t[i] = vals[i].seen;
        seen[i] = malloc((vals[i].n + 1) * sizeof *seen[i]);
    }
    clrt_tensor *y = (call ? call : c->call)(c, seen_t);
    if (!y)
        set_failed(&res, "the op failed: %s", clrt_last_error());
    size_t big = 1 << 20, nout = 0;
    double *out = malloc(big * sizeof *out), *r = NULL;
    if (!res.failed)
        check_forward(c, y, vals, out, seen, &nout, &res);
    clrt_tensor *rt = NULL;
    /* A result that is not float32 (a comparison's) has no gradient: the
     * forward is all there is to check, and autograd must not record it. */
    int forward_only = y && clrt_tensor_dtype(y) != CLRT_F32;
    if (!res.failed && forward_only && clrt_tensor_requires_grad(y))
        set_failed(&res, "%s", "a result that is not float32 was recorded");
    if (!res.failed && !forward_only) {
        float *rf = tu_random_floats(&rng, nout, -1, 1);
        r = malloc((nout + 1) * sizeof *r);
        for (size_t k = 0; k < nout; k++)
            r[k] = rf[k];
        rt = TU_NONNULL(
            clrt_from_host(tu_device(), CLRT_F32, clrt_tensor_ndim(y), clrt_tensor_shape(y), rf));
        free(rf);
        if (clrt_backward_with(y, rt) != CLRT_OK)
            set_failed(&res, "clrt_backward_with failed: %s", clrt_last_error());
    }
    for (int i = 0; !res.failed && !forward_only && i < c->n_in; i++) {
        if (!is_float(&c->in[i]) || c->in[i].constant)
            continue;
        clrt_tensor *g = clrt_tensor_grad(vals[i].leaf);
        if (!g) {
            set_failed(&res, "input %s got no gradient", c->in[i].transposed ? "(transposed)" : "");
            break;
        }
        float *gf = tu_read(g);
        double e = grad_error(c, vals, i, gf, r, nout, out, seen);
        res.grad = !(e <= res.grad) ? e : res.grad; /* NaN wins */
        free(gf);
        clrt_tensor_release(g);
    }
    for (int i = 0; i < c->n_in; i++) {
        clrt_tensor_release(vals[i].leaf);
        clrt_tensor_release(vals[i].seen);
        free(vals[i].v);
        free(seen[i]);
    }
    clrt_tensor_release(y);
    clrt_tensor_release(rt);
    free(out);
    free(r);
    return res;
}
