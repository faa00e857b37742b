/* Conv2d: x [N, in_ch, H, W] -> [N, out_ch, OH, OW] with weight
 * [out_ch, in_ch, k, k] and, unless built without one, bias [out_ch]
 * (nn.Conv2d with a square kernel, one stride and zero padding on both
 * axes). */
#include "runtime/nn/module_internal.h"

#include <clrt/ops_conv.h>
#include <math.h>

typedef struct {
    clrt_module base;
    int in_ch, out_ch, kernel, stride, padding;
    int bias;           /* has a bias parameter (PyTorch's bias=True) */
    int kaiming_normal; /* init: N(0, 2 / fan_out), torchvision's ResNet convolutions */
} conv2d;

#define WEIGHT(m) ((m)->params[0])
/* The bias parameter's tensors, or NULL without one. */
#define BIAS_VALUE(m) ((m)->nparams > 1 ? (m)->params[1].value : NULL)
#define BIAS_GRAD(m) ((m)->nparams > 1 ? (m)->params[1].grad : NULL)

/* PyTorch's default (kaiming_uniform_ with a = sqrt(5): U(+-1/sqrt(fan_in)),
 * the bias alike), or torchvision ResNet's kaiming_normal_(mode="fan_out",
 * nonlinearity="relu"): N(0, sqrt(2 / (out_ch * k * k))). */
static clrt_status conv2d_init(clrt_module *m)
{
    conv2d *c = (conv2d *)m;
    double fan_in = (double)c->in_ch * c->kernel * c->kernel;
    double fan_out = (double)c->out_ch * c->kernel * c->kernel;
    clrt_status st = c->kaiming_normal
                         ? clrt__init_normal(WEIGHT(m).value, sqrt(2.0 / fan_out), m->init_seed, 0)
                         : clrt__init_uniform(WEIGHT(m).value, 1.0 / sqrt(fan_in), m->init_seed, 0);
    if (st == CLRT_OK && BIAS_VALUE(m))
        st = clrt__init_uniform(BIAS_VALUE(m), 1.0 / sqrt(fan_in), m->init_seed, 1);
    return st;
}

void clrt__conv2d_init_kaiming_normal(clrt_module *m) { ((conv2d *)m)->kaiming_normal = 1; }

/* The output shape for x, or an ESHAPE error showing both. */
static clrt_status output_shape(const conv2d *c, const clrt_tensor *x, int64_t out[4])
{
    char s[128];
    const int64_t *in = x->shape;
    int64_t span_h = x->ndim == 4 ? in[2] + 2 * c->padding : 0;
    int64_t span_w = x->ndim == 4 ? in[3] + 2 * c->padding : 0;
    if (x->ndim != 4 || in[1] != c->in_ch || span_h < c->kernel || span_w < c->kernel)
        return clrt__fail(CLRT_ESHAPE,
                          "clrt_module_forward: Conv2d(%d, %d, kernel_size=%d, stride=%d, "
                          "padding=%d) expects input [N, %d, H, W] with H and W + 2*padding >= "
                          "%d, got %s",
                          c->in_ch, c->out_ch, c->kernel, c->stride, c->padding, c->in_ch,
                          c->kernel, clrt_shape_str(x->ndim, in, s, sizeof s));
    out[0] = in[0];
    out[1] = c->out_ch;
    out[2] = (span_h - c->kernel) / c->stride + 1;
    out[3] = (span_w - c->kernel) / c->stride + 1;
    return CLRT_OK;
}

static clrt_tensor *conv2d_forward_epi(clrt_module *m, clrt_tensor *x, const clrt__epilogue *epi)
{
    conv2d *c = (conv2d *)m;
    int64_t shape[4];
    if (output_shape(c, x, shape) != CLRT_OK ||
        clrt__tensor_reuse(&m->out, m->device, CLRT_F32, 4, shape) != CLRT_OK ||
        clrt__conv2d_fused_out(m->out, x, WEIGHT(m).value, BIAS_VALUE(m), c->stride, c->padding,
                               epi) != CLRT_OK)
        return NULL;
    return clrt__nn_share(m->out);
}

static clrt_tensor *conv2d_forward(clrt_module *m, clrt_tensor *x)
{
    return conv2d_forward_epi(m, x, &CLRT__NO_EPILOGUE);
}

static clrt_status conv2d_backward_epi(clrt_module *m, clrt_tensor *grad_out, clrt_tensor **grad_in,
                                       const clrt__epilogue *epi)
{
    conv2d *c = (conv2d *)m;
    clrt_tensor *x = m->saved;
    clrt_status st = clrt__conv2d_backward_params_out(WEIGHT(m).grad, BIAS_GRAD(m), grad_out, x,
                                                      c->stride, c->padding, 1);
    if (st != CLRT_OK || !grad_in)
        return st;
    if ((st = clrt__tensor_reuse(&m->grad_in, m->device, CLRT_F32, 4, x->shape)) != CLRT_OK)
        return st;
    st = clrt__conv2d_backward_input_fused_out(m->grad_in, grad_out, WEIGHT(m).value, c->stride,
                                               c->padding, epi);
    return clrt__nn_give_grad_in(m, st, grad_in);
}

static clrt_status conv2d_backward(clrt_module *m, clrt_tensor *grad_out, clrt_tensor **grad_in)
{
    return conv2d_backward_epi(m, grad_out, grad_in, &CLRT__NO_EPILOGUE);
}

static void conv2d_describe(const clrt_module *m, char *buf, size_t cap)
{
    const conv2d *c = (const conv2d *)m;
    snprintf(buf, cap, "(%d, %d, kernel_size=%d, stride=%d, padding=%d%s)", c->in_ch, c->out_ch,
             c->kernel, c->stride, c->padding, c->bias ? "" : ", bias=False");
}

static const clrt__module_vt conv2d_vt = {.kind = "Conv2d",
                                          .forward = conv2d_forward,
                                          .backward = conv2d_backward,
                                          .describe = conv2d_describe,
                                          .init = conv2d_init,
                                          .forward_epi = conv2d_forward_epi,
                                          .backward_epi = conv2d_backward_epi};

clrt_module *clrt_conv2d_ex(int in_ch, int out_ch, int kernel, int stride, int padding, int bias)
{
    if (in_ch < 1 || out_ch < 1 || kernel < 1 || stride < 1 || padding < 0) {
        clrt__fail(CLRT_EINVAL,
                   "clrt_conv2d(in_ch=%d, out_ch=%d, kernel=%d, stride=%d, padding=%d): "
                   "channels, kernel and stride must be >= 1 and padding >= 0",
                   in_ch, out_ch, kernel, stride, padding);
        return NULL;
    }
    conv2d *c = (conv2d *)clrt__module_new(&conv2d_vt, sizeof(conv2d));
    if (!c)
        return NULL;
    *c = (conv2d){c->base, in_ch, out_ch, kernel, stride, padding, bias != 0, 0};
    int64_t wshape[4] = {out_ch, in_ch, kernel, kernel}, bshape[1] = {out_ch};
    clrt_module *m = &c->base;
    if (clrt__module_add_param(m, "weight", 4, wshape) != CLRT_OK ||
        (bias && clrt__module_add_param(m, "bias", 1, bshape) != CLRT_OK) ||
        conv2d_init(m) != CLRT_OK) {
        clrt_module_free(m);
        return NULL;
    }
    return m;
}

clrt_module *clrt_conv2d(int in_ch, int out_ch, int kernel, int stride, int padding)
{
    return clrt_conv2d_ex(in_ch, out_ch, kernel, stride, padding, 1);
}
