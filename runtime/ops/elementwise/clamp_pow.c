/* clrt_clamp and clrt_pow_scalar on float32 as ops of the table, with
 * their backward rules (kernels in clkernels/select.cl). */
#include "runtime/ops/elementwise/select_internal.h"
#include "runtime/ops/ops_internal.h"
#include "runtime/tensor/check_internal.h"

#include <math.h>

/* attrs f[0] lo, f[1] hi. */
static clrt_tensor *clamp_forward(int n, clrt_tensor *const *in, const clrt__op_attrs *a, int keep,
                                  clrt_tensor **extra)
{
    (void)n, (void)keep, (void)extra;
    const char *api = "clrt_clamp";
    clrt_tensor *x = in[0];
    if (clrt__check_dtype(api, "x", x, CLRT_F32) != CLRT_OK)
        return NULL;
    clrt_tensor *out = clrt__alloc_like(x);
    if (!out)
        return NULL;
    if (isnan(a->f[0]) || isnan(a->f[1])) { /* NaN everywhere, as torch.clamp */
        if (clrt__fill(out, NAN) != CLRT_OK) {
            clrt_tensor_release(out);
            return NULL;
        }
        return out;
    }
    cl_mem mx = clrt__mem(x), mo = clrt__mem(out);
    cl_ulong cnt = (cl_ulong)x->numel;
    cl_float lo = (cl_float)a->f[0], hi = (cl_float)a->f[1];
    clrt__karg args[] = {CLRT__ARG(mx), CLRT__ARG(mo), CLRT__ARG(cnt), CLRT__ARG(lo),
                         CLRT__ARG(hi)};
    if (clrt__run_1d(clrt__dev(x), "select", NULL, "clamp_f32", (size_t)cnt, 5, args) != CLRT_OK) {
        clrt_tensor_release(out);
        return NULL;
    }
    return out;
}

/* g where lo < x < hi, else 0, as PyTorch 2.15 (x at a bound gets 0; none
 * passes with a NaN bound). */
clrt_status clrt__clamp_backward(const clrt__grad_ctx *c, clrt_tensor *g, clrt_tensor **grad_in)
{
    clrt_tensor *x = c->in[0];
    clrt_tensor *out = clrt__alloc_like(x);
    if (!out)
        return clrt_last_status();
    cl_mem mg = clrt__mem(g), mx = clrt__mem(x), mo = clrt__mem(out);
    cl_ulong cnt = (cl_ulong)x->numel;
    cl_float lo = (cl_float)c->attrs->f[0], hi = (cl_float)c->attrs->f[1];
    clrt__karg args[] = {CLRT__ARG(mg),  CLRT__ARG(mx), CLRT__ARG(mo),
                         CLRT__ARG(cnt), CLRT__ARG(lo), CLRT__ARG(hi)};
    clrt_status st =
        clrt__run_1d(clrt__dev(x), "select", NULL, "clamp_backward_f32", (size_t)cnt, 6, args);
    if (st != CLRT_OK) {
        clrt_tensor_release(out);
        return st;
    }
    grad_in[0] = out;
    return CLRT_OK;
}

const clrt__op_def clrt__op_clamp = {"clrt_clamp", 1, CLRT__SAVE_IN(0), clamp_forward,
                                     clrt__clamp_backward};

/* An exponent as select.cl's pow_of takes it: the float, an integer form
 * and the mode (1 square, 2 integer, 3 square root, 0 any). */
typedef struct {
    cl_float p;
    cl_int ip, mode;
} pow_form;

static pow_form form_of(double p)
{
    pow_form f = {(cl_float)p, 0, 0};
    if (f.p == 2.0f)
        f.mode = 1;
    else if (f.p == 0.5f)
        f.mode = 3;
    else if (f.p == truncf(f.p) && fabsf(f.p) <= 16777216.0f) {
        f.mode = 2;
        f.ip = (cl_int)f.p;
    }
    return f;
}

/* attrs f[0]: the exponent. */
static clrt_tensor *pow_forward(int n, clrt_tensor *const *in, const clrt__op_attrs *a, int keep,
                                clrt_tensor **extra)
{
    (void)n, (void)keep, (void)extra;
    clrt_tensor *x = in[0];
    if (clrt__check_dtype("clrt_pow_scalar", "x", x, CLRT_F32) != CLRT_OK)
        return NULL;
    clrt_tensor *out = clrt__alloc_like(x);
    if (!out)
        return NULL;
    pow_form f = form_of(a->f[0]);
    cl_mem mx = clrt__mem(x), mo = clrt__mem(out);
    cl_ulong cnt = (cl_ulong)x->numel;
    clrt__karg args[] = {CLRT__ARG(mx),  CLRT__ARG(mo),   CLRT__ARG(cnt),
                         CLRT__ARG(f.p), CLRT__ARG(f.ip), CLRT__ARG(f.mode)};
    if (clrt__run_1d(clrt__dev(x), "select", NULL, "pow_f32", (size_t)cnt, 6, args) != CLRT_OK) {
        clrt_tensor_release(out);
        return NULL;
    }
    return out;
}

/* g p x^(p-1); zeros for p = 0 (as PyTorch: not 0 * x^-1, NaN at 0). */
clrt_status clrt__pow_scalar_backward(const clrt__grad_ctx *c, clrt_tensor *g,
                                      clrt_tensor **grad_in)
{
    clrt_tensor *x = c->in[0];
    clrt_tensor *out = clrt__alloc_like(x);
    if (!out)
        return clrt_last_status();
    double p = c->attrs->f[0];
    clrt_status st;
    if ((cl_float)p == 0.0f)
        st = clrt__fill(out, 0.0);
    else {
        pow_form q = form_of(p - 1.0);
        cl_float pf = (cl_float)p;
        cl_mem mg = clrt__mem(g), mx = clrt__mem(x), mo = clrt__mem(out);
        cl_ulong cnt = (cl_ulong)x->numel;
        clrt__karg args[] = {CLRT__ARG(mg), CLRT__ARG(mx),  CLRT__ARG(mo),   CLRT__ARG(cnt),
                             CLRT__ARG(pf), CLRT__ARG(q.p), CLRT__ARG(q.ip), CLRT__ARG(q.mode)};
        st = clrt__run_1d(clrt__dev(x), "select", NULL, "pow_backward_f32", (size_t)cnt, 8, args);
    }
    if (st != CLRT_OK) {
        clrt_tensor_release(out);
        return st;
    }
    grad_in[0] = out;
    return CLRT_OK;
}

const clrt__op_def clrt__op_pow_scalar = {"clrt_pow_scalar", 1, CLRT__SAVE_IN(0), pow_forward,
                                          clrt__pow_scalar_backward};
