/* Linear: y = x W^T + b, x [*, in], W [out, in], b [out] (nn.Linear, and
 * nn.LazyLinear when in_features is 0); without b for bias=False. The leading dims of x are one row
 * index (tensors are contiguous), so all three products are single GEMMs
 * through the dispatch, on the layer's buffers. */
#include "runtime/nn/module_internal.h"
#include "runtime/ops/gemm/gemm_internal.h"

#include <math.h>
#include <string.h>

typedef struct {
    clrt_module base;
    int in, out; /* in == 0 until a lazy layer sees its first input */
    int has_bias;
    clrt_tensor *ones; /* [N] of 1: bias gradient = ones^T g as a GEMM */
} linear;

#define WEIGHT(m) ((m)->params[0])
#define BIAS_VALUE(m) ((m)->nparams > 1 ? (m)->params[1].value : NULL)
#define BIAS_GRAD(m) ((m)->nparams > 1 ? (m)->params[1].grad : NULL)

static clrt_status linear_init(clrt_module *m)
{
    linear *l = (linear *)m;
    double bound = 1.0 / sqrt((double)l->in);
    clrt_status st = clrt__init_uniform(WEIGHT(m).value, bound, m->init_seed, 0);
    if (st != CLRT_OK || !l->has_bias)
        return st;
    return clrt__init_uniform(BIAS_VALUE(m), bound, m->init_seed, 1);
}

static clrt_status create_params(clrt_module *m)
{
    linear *l = (linear *)m;
    int64_t wshape[2] = {l->out, l->in}, bshape[1] = {l->out};
    clrt_status st = clrt__module_add_param(m, "weight", 2, wshape);
    if (st == CLRT_OK && l->has_bias)
        st = clrt__module_add_param(m, "bias", 1, bshape);
    return st != CLRT_OK ? st : linear_init(m);
}

static clrt_status check_input(clrt_module *m, const clrt_tensor *x)
{
    linear *l = (linear *)m;
    char s[128];
    if (x->ndim >= 1 && (l->in == 0 || x->shape[x->ndim - 1] == l->in))
        return CLRT_OK;
    char want[32] = "in_features";
    if (l->in > 0)
        snprintf(want, sizeof want, "%d", l->in);
    return clrt__fail(CLRT_ESHAPE,
                      "clrt_module_forward: Linear(in_features=%d, out_features=%d) expects input "
                      "[*, %s], got %s",
                      l->in, l->out, want, clrt_shape_str(x->ndim, x->shape, s, sizeof s));
}

/* Rows of x as a matrix: every index but the last (1 for a vector). */
static size_t rows_of(const clrt_tensor *x)
{
    int64_t last = x->shape[x->ndim - 1];
    return last > 0 ? (size_t)(clrt_tensor_numel(x) / last) : 0;
}

/* Lazy layer: parameters appear at the first forward, from its init seed. */
static clrt_status materialize(clrt_module *m, const clrt_tensor *x)
{
    linear *l = (linear *)m;
    if (l->in > 0)
        return CLRT_OK;
    int64_t features = x->shape[x->ndim - 1];
    if (features < 1 || features > INT32_MAX)
        return clrt__fail(CLRT_ESHAPE,
                          "clrt_module_forward: lazy Linear cannot infer "
                          "in_features from %lld input features",
                          (long long)features);
    l->in = (int)features;
    clrt_status st = create_params(m);
    if (st != CLRT_OK) {
        for (int i = 0; i < m->nparams; i++) {
            clrt_tensor_release(m->params[i].value);
            clrt_tensor_release(m->params[i].grad);
        }
        m->nparams = 0;
        l->in = 0;
    }
    return st;
}

static clrt_tensor *linear_forward_epi(clrt_module *m, clrt_tensor *x, const clrt__epilogue *epi)
{
    linear *l = (linear *)m;
    if (check_input(m, x) != CLRT_OK || materialize(m, x) != CLRT_OK)
        return NULL;
    int64_t shape[CLRT_MAX_DIMS];
    memcpy(shape, x->shape, sizeof shape[0] * (size_t)x->ndim);
    shape[x->ndim - 1] = l->out;
    /* y [M, out] = epi(x [M, in] W^T [in, out] + b broadcast over rows) */
    if (clrt__tensor_reuse(&m->out, m->device, CLRT_F32, x->ndim, shape) != CLRT_OK ||
        clrt__gemm_whole(m->device, 0, 1, rows_of(x), (size_t)l->out, (size_t)l->in, clrt__mem(x),
                         clrt__mem(WEIGHT(m).value), 0, clrt__mem(m->out)) != CLRT_OK ||
        clrt__bias_epilogue(m->out, BIAS_VALUE(m), epi) != CLRT_OK)
        return NULL;
    return clrt__nn_share(m->out);
}

static clrt_tensor *linear_forward(clrt_module *m, clrt_tensor *x)
{
    return linear_forward_epi(m, x, &CLRT__NO_EPILOGUE);
}

/* A [M] vector of ones, rebuilt only when the row count changes. */
static clrt_status ensure_ones(linear *l, int64_t n)
{
    clrt_tensor *old = l->ones;
    if (clrt__tensor_reuse(&l->ones, l->base.device, CLRT_F32, 1, &n) != CLRT_OK)
        return clrt_last_status();
    return l->ones == old ? CLRT_OK : clrt__fill(l->ones, 1.0);
}

static clrt_status linear_backward_epi(clrt_module *m, clrt_tensor *grad_out, clrt_tensor **grad_in,
                                       const clrt__epilogue *epi)
{
    linear *l = (linear *)m;
    clrt_tensor *x = m->saved;
    size_t n = rows_of(x), in = (size_t)l->in, out = (size_t)l->out;
    cl_mem g = clrt__mem(grad_out);
    /* grad_W [out, in] += g^T [out, M] x [M, in]; grad_b [1, out] += ones [1, M] g [M, out] */
    clrt_status st = clrt__gemm_whole(m->device, 1, 0, out, in, n, g, clrt__mem(x), 1,
                                      clrt__mem(WEIGHT(m).grad));
    if (st == CLRT_OK && l->has_bias)
        st = ensure_ones(l, (int64_t)n);
    if (st == CLRT_OK && l->has_bias)
        st = clrt__gemm_whole(m->device, 0, 0, 1, out, n, clrt__mem(l->ones), g, 1,
                              clrt__mem(BIAS_GRAD(m)));
    if (st != CLRT_OK || !grad_in)
        return st;
    /* grad_x [M, in] = epi(g [M, out] W [out, in]) */
    st = clrt__tensor_reuse(&m->grad_in, m->device, CLRT_F32, x->ndim, x->shape);
    if (st == CLRT_OK)
        st = clrt__gemm_whole(m->device, 0, 0, n, in, out, g, clrt__mem(WEIGHT(m).value), 0,
                              clrt__mem(m->grad_in));
    if (st == CLRT_OK)
        st = clrt__bias_epilogue(m->grad_in, NULL, epi);
    return clrt__nn_give_grad_in(m, st, grad_in);
}

static clrt_status linear_backward(clrt_module *m, clrt_tensor *grad_out, clrt_tensor **grad_in)
{
    return linear_backward_epi(m, grad_out, grad_in, &CLRT__NO_EPILOGUE);
}

static void linear_describe(const clrt_module *m, char *buf, size_t cap)
{
    const linear *l = (const linear *)m;
    snprintf(buf, cap, "(in_features=%d, out_features=%d, bias=%s)", l->in, l->out,
             l->has_bias ? "True" : "False");
}

static void linear_free_fields(clrt_module *m) { clrt_tensor_release(((linear *)m)->ones); }
static void linear_clone_fields(clrt_module *copy) { ((linear *)copy)->ones = NULL; }

static const clrt__module_vt linear_vt = {.kind = "Linear",
                                          .forward = linear_forward,
                                          .backward = linear_backward,
                                          .describe = linear_describe,
                                          .init = linear_init,
                                          .free_fields = linear_free_fields,
                                          .clone_fields = linear_clone_fields,
                                          .forward_epi = linear_forward_epi,
                                          .backward_epi = linear_backward_epi};

clrt_module *clrt_linear_ex(int in_features, int out_features, int bias)
{
    if (in_features < 0 || out_features < 1) {
        clrt__fail(CLRT_EINVAL,
                   "clrt_linear(%d, %d): in_features must be >= 0 (0: inferred) and "
                   "out_features >= 1",
                   in_features, out_features);
        return NULL;
    }
    linear *l = (linear *)clrt__module_new(&linear_vt, sizeof(linear));
    if (!l)
        return NULL;
    l->in = in_features;
    l->out = out_features;
    l->has_bias = bias != 0;
    if (in_features > 0 && create_params(&l->base) != CLRT_OK) {
        clrt_module_free(&l->base);
        return NULL;
    }
    return &l->base;
}

clrt_module *clrt_linear(int in_features, int out_features)
{
    return clrt_linear_ex(in_features, out_features, 1);
}
