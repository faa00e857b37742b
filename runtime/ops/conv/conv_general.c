/* ONNX Conv (clrt__conv2d_general): groups, dilation, asymmetric zero
 * pads, rectangular kernels and unequal strides, forward only
 * (runtime/ops/onnx_ops_internal.h). What the table's convolution takes
 * (a square kernel, equal strides, no dilation) goes to clrt_f_conv2d_out
 * and its tuned algorithms: unequal pads through a zero-padded copy of x,
 * groups of 8 or more channels one call per group. The rest runs the
 * direct kernels of clkernels/conv_general.cl, whose depthwise case
 * (groups == C == O: conv_dw_vec on CPU devices, conv_dw_rows elsewhere)
 * is MobileNet's hot one. Every path applies a fused ReLU or ReLU6 as it
 * stores (clrt__conv2d_general_fused, the ONNX fusions). */
#include "runtime/ops/onnx_ops_internal.h"

#include "runtime/ops/conv/conv_internal.h"
#include "runtime/ops/ops_internal.h"
#include "runtime/tensor/check_internal.h"

#include <clrt/ops_conv.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

/* Must match conv_geom in clkernels/conv_general.cl. */
typedef struct {
    cl_int C, H, W, O, OH, OW;
    cl_int cpg, opg;
    cl_int sh, sw, dh, dw, pt, pl;
    cl_int planes, blocks;
    cl_uint ow_mul, ow_shift, bl_mul, bl_shift;
} conv_geom_t;
_Static_assert(sizeof(conv_geom_t) == 20 * 4 && offsetof(conv_geom_t, ow_mul) == 64,
               "conv_geom_t must match conv_geom in clkernels/conv_general.cl");

/* Checks every argument; fills the output's shape. */
static clrt_status check(const char *api, const clrt_tensor *x, const clrt_tensor *w,
                         const clrt_tensor *b, const clrt__conv_geom *g, int64_t *oshape)
{
    char sx[128], sw[128], sb[128];
    clrt__arg args[] = {{"x", x, 0}, {"w", w, 0}, {"b", b, 1}};
    clrt_status st = clrt__check_args(api, 3, args);
    if (st == CLRT_OK)
        st = clrt__check_dtype(api, "x", x, CLRT_F32);
    if (st == CLRT_OK)
        st = clrt__check_dtype(api, "w", w, CLRT_F32);
    if (st == CLRT_OK && b)
        st = clrt__check_dtype(api, "b", b, CLRT_F32);
    if (st != CLRT_OK)
        return st;
    if (!g)
        return clrt__fail(CLRT_EINVAL, "%s: geometry is NULL", api);
    clrt_shape_str(x->ndim, x->shape, sx, sizeof sx);
    clrt_shape_str(w->ndim, w->shape, sw, sizeof sw);
    if (x->ndim != 4)
        return clrt__fail(CLRT_ESHAPE, "%s: x must be 4-D [N, C, H, W], got %s", api, sx);
    if (w->ndim != 4)
        return clrt__fail(CLRT_ESHAPE, "%s: w must be 4-D [O, C/groups, kh, kw], got %s", api, sw);
    int64_t C = x->shape[1], O = w->shape[0];
    if (g->groups < 1)
        return clrt__fail(CLRT_EINVAL, "%s: groups must be >= 1, got %d", api, g->groups);
    if (C % g->groups || O % g->groups)
        return clrt__fail(CLRT_ESHAPE,
                          "%s: groups %d must divide the input channels (x %s) and the output "
                          "channels (w %s)",
                          api, g->groups, sx, sw);
    if (w->shape[1] != C / g->groups)
        return clrt__fail(CLRT_ESHAPE,
                          "%s: w %s must have C/groups = %lld input channels for x %s and "
                          "groups %d",
                          api, sw, (long long)(C / g->groups), sx, g->groups);
    if (w->shape[2] != g->kh || w->shape[3] != g->kw)
        return clrt__fail(CLRT_ESHAPE, "%s: w %s does not have the kernel size %dx%d", api, sw,
                          g->kh, g->kw);
    if (b && (b->ndim != 1 || b->shape[0] != O))
        return clrt__fail(CLRT_ESHAPE, "%s: b must be [%lld] for w %s, got %s", api, (long long)O,
                          sw, clrt_shape_str(b->ndim, b->shape, sb, sizeof sb));
    if (g->kh < 1 || g->kw < 1 || g->sh < 1 || g->sw < 1 || g->dh < 1 || g->dw < 1)
        return clrt__fail(CLRT_EINVAL,
                          "%s: kernel %dx%d, strides %d,%d and dilations %d,%d must all be >= 1",
                          api, g->kh, g->kw, g->sh, g->sw, g->dh, g->dw);
    if (g->pt < 0 || g->pl < 0 || g->pb < 0 || g->pr < 0)
        return clrt__fail(CLRT_EINVAL,
                          "%s: pads (top %d, left %d, bottom %d, right %d) must be >= 0", api,
                          g->pt, g->pl, g->pb, g->pr);
    if ((int64_t)g->kh * g->kw > 1024)
        return clrt__fail(CLRT_ENOTSUP, "%s: kernel %dx%d is larger than the 1024 taps unrolled",
                          api, g->kh, g->kw);
    int64_t sh = x->shape[2] + g->pt + g->pb - (int64_t)g->dh * (g->kh - 1) - 1;
    int64_t sw2 = x->shape[3] + g->pl + g->pr - (int64_t)g->dw * (g->kw - 1) - 1;
    if (sh < 0 || sw2 < 0)
        return clrt__fail(CLRT_ESHAPE,
                          "%s: kernel %dx%d (dilation %d,%d) is larger than x %s with pads (top "
                          "%d, left %d, bottom %d, right %d)",
                          api, g->kh, g->kw, g->dh, g->dw, sx, g->pt, g->pl, g->pb, g->pr);
    oshape[0] = x->shape[0];
    oshape[1] = O;
    oshape[2] = sh / g->sh + 1;
    oshape[3] = sw2 / g->sw + 1;
    if (x->numel > INT32_MAX || w->numel > INT32_MAX ||
        (double)oshape[0] * O * oshape[2] * oshape[3] > INT32_MAX)
        return clrt__fail(CLRT_ENOTSUP, "%s: x %s or w %s too large for 32-bit indexing", api, sx,
                          sw);
    return CLRT_OK;
}

/* Whether the table's convolution takes each group of g once the pads
 * are made equal (zero pads added to x first). */
static int table_geom(const clrt__conv_geom *g)
{
    return g->kh == g->kw && g->sh == g->sw && g->dh == 1 && g->dw == 1;
}

/* out = the table's convolution of one group (clrt_f_conv2d_out and its
 * tuned algorithms); unequal pads go into a zero-padded copy of x. */
static clrt_status table_conv(clrt_tensor *out, clrt_tensor *x, clrt_tensor *w, clrt_tensor *b,
                              const clrt__conv_geom *g, const clrt__epilogue *epi)
{
    if (g->pt == g->pl && g->pt == g->pb && g->pt == g->pr)
        return clrt__conv2d_fused_out(out, x, w, b, g->sh, g->pt, epi);
    int64_t pads[8] = {0, 0, g->pt, g->pl, 0, 0, g->pb, g->pr};
    clrt_tensor *xp = clrt__pad(x, pads, 0, 0.0);
    if (!xp)
        return clrt_last_status();
    clrt_status st = clrt__conv2d_fused_out(out, xp, w, b, g->sh, 0, epi);
    clrt_tensor_release(xp);
    return st;
}

static clrt_tensor *narrow(clrt_tensor *t, int dim, int64_t start, int64_t len)
{
    clrt__op_attrs a = {.i = {dim, start, len}, .ni = 3};
    return clrt__call1(&clrt__op_narrow, t, &a);
}

/* Groups of many channels each (ResNeXt, AlexNet's halves) one table
 * convolution per group: the channels of x, w and b narrowed (copies), the
 * outputs concatenated. NULL + error when a step fails. */
static clrt_tensor *by_groups(clrt_tensor *x, clrt_tensor *w, clrt_tensor *b,
                              const clrt__conv_geom *g, const clrt__epilogue *epi,
                              const int64_t *os)
{
    int G = g->groups;
    int64_t cpg = w->shape[1], opg = os[1] / G;
    int64_t ys[4] = {os[0], opg, os[2], os[3]};
    clrt_tensor **parts = calloc((size_t)G, sizeof *parts), *out = NULL;
    if (!parts) {
        clrt__fail(CLRT_ENOMEM, "clrt__conv2d_general: no memory for %d groups", G);
        return NULL;
    }
    int i = 0;
    for (; i < G; i++) {
        clrt_tensor *xg = narrow(x, 1, i * cpg, cpg), *wg = narrow(w, 0, i * opg, opg);
        clrt_tensor *bg = b ? narrow(b, 0, i * opg, opg) : NULL;
        parts[i] = xg && wg && (bg || !b) ? clrt__alloc(clrt__dev(x), CLRT_F32, 4, ys) : NULL;
        clrt_status st = parts[i] ? table_conv(parts[i], xg, wg, bg, g, epi) : clrt_last_status();
        clrt_tensor_release(xg), clrt_tensor_release(wg), clrt_tensor_release(bg);
        if (st != CLRT_OK)
            break;
    }
    if (i == G) {
        clrt__op_attrs a = {.i = {1}, .ni = 1};
        out = clrt__call(&clrt__op_cat, G, parts, &a);
    }
    for (int k = 0; k < G; k++)
        clrt_tensor_release(parts[k]);
    free(parts);
    return out;
}

/* Whether the depthwise row kernel takes it: one channel in and out per
 * group, rows of at least 2 outputs, a row span the unrolled loads allow. */
static int depthwise_rows(const clrt__conv_geom *g, int cpg, int opg, int64_t OW)
{
    return cpg == 1 && opg == 1 && OW >= 2 && g->kh * g->kw <= 49 && g->sw <= 4 &&
           g->dw * (g->kw - 1) <= 24;
}

/* conv_dw_vec's lanes on d for output rows of OW (0: it does not take
 * them): clrt__cpu_vector_lanes halved
 * while wider than the row. Rows narrower than 4 take conv_dw_rows. */
static int depthwise_lanes(const clrt_device *d, const clrt__conv_geom *g, int64_t OW)
{
    int vw = (int)clrt__cpu_vector_lanes(d);
    while (vw > 4 && vw > OW)
        vw /= 2;
    return clrt__cpu_style(d) && OW >= vw && g->kh * g->kw <= 49 ? vw : 0;
}

/* The geometry the kernels of conv_general.cl take. */
static conv_geom_t kernel_geom(const clrt_tensor *x, const clrt__conv_geom *g, const int64_t *os,
                               int cpg, int opg, int ob)
{
    int blocks = (int)(os[1] / ob), planes = (int)os[0] * blocks;
    clrt__divisor dow = clrt__divisor_of((uint32_t)os[3]), dbl = clrt__divisor_of((uint32_t)blocks);
    conv_geom_t cg = {(cl_int)x->shape[1],
                      (cl_int)x->shape[2],
                      (cl_int)x->shape[3],
                      (cl_int)os[1],
                      (cl_int)os[2],
                      (cl_int)os[3],
                      cpg,
                      opg,
                      g->sh,
                      g->sw,
                      g->dh,
                      g->dw,
                      g->pt,
                      g->pl,
                      planes,
                      blocks,
                      dow.mul,
                      dow.shift,
                      dbl.mul,
                      dbl.shift};
    return cg;
}

/* Depthwise on a CPU device: rows of RB output rows by vw columns per
 * item, RB the rows a quarter of the vector registers hold (the rest take
 * the loads and the weights), at most OH. */
static clrt_status run_dw_vec(clrt_device *d, clrt__karg *args, const conv_geom_t *cg,
                              const clrt__conv_geom *g, int vw)
{
    int quarter = clrt__device_vector_registers(d) / 4, rb = cg->OH < quarter ? cg->OH : quarter;
    cl_int blocks_w = (cl_int)clrt__ceil_div((size_t)cg->OW, (size_t)vw);
    cl_int row_blocks = (cl_int)clrt__ceil_div((size_t)cg->OH, (size_t)rb);
    args[6] = CLRT__ARG(blocks_w), args[7] = CLRT__ARG(row_blocks);
    char options[112];
    snprintf(options, sizeof options, "-DKH=%d -DKW=%d -DVW=%d -DRB=%d -DSW=%d -DDW=%d", g->kh,
             g->kw, vw, rb, g->sw, g->dw);
    return clrt__run_planes(d, clrt__kernel(d, "conv_general", options, "conv_dw_vec"),
                            (size_t)row_blocks * (size_t)blocks_w, (size_t)cg->planes, 9, args);
}

/* Depthwise elsewhere: rows of PW outputs per item, taps loaded once. */
static clrt_status run_dw_rows(clrt_device *d, clrt__karg *args, const conv_geom_t *cg,
                               const clrt__conv_geom *g)
{
    int pw = cg->OW >= 8 && g->sw == 1 ? 8 : 4;
    cl_int blocks_w = (cl_int)clrt__ceil_div((size_t)cg->OW, (size_t)pw);
    clrt__divisor dbw = clrt__divisor_of((uint32_t)blocks_w);
    args[6] = CLRT__ARG(blocks_w), args[7] = CLRT__ARG(dbw.mul), args[8] = CLRT__ARG(dbw.shift);
    char options[112];
    snprintf(options, sizeof options, "-DKH=%d -DKW=%d -DOB=1 -DPW=%d -DSW=%d -DDW=%d", g->kh,
             g->kw, pw, g->sw, g->dw);
    return clrt__run_planes(d, clrt__kernel(d, "conv_general", options, "conv_dw_rows"),
                            (size_t)cg->OH * (size_t)blocks_w, (size_t)cg->planes, 10, args);
}

/* The direct kernels into out: depthwise where one takes it, else
 * conv_general with OB outputs per item. */
static clrt_status run_direct(clrt_tensor *out, clrt_tensor *x, clrt_tensor *w, clrt_tensor *b,
                              const clrt__conv_geom *g, const clrt__epilogue *epi, int cpg, int opg)
{
    const char *api = "clrt__conv2d_general";
    clrt_device *d = clrt__dev(x);
    const int64_t *os = out->shape;
    int ob = opg % 4 == 0 ? 4 : opg % 2 == 0 ? 2 : 1;
    size_t taps = (size_t)g->kh * (size_t)g->kw;
    if ((size_t)cpg * (taps * (size_t)(ob + 1) + (size_t)g->kh + 1) > clrt__loop_budget(d))
        return clrt__fail(CLRT_ENOTSUP,
                          "%s: %d input channels per group of %dx%d taps exceed the loop budget "
                          "of device %s",
                          api, cpg, g->kh, g->kw, clrt_device_str(d));
    int depthwise = depthwise_rows(g, cpg, opg, os[3]), vw = depthwise_lanes(d, g, os[3]);
    conv_geom_t cg = kernel_geom(x, g, os, cpg, opg, depthwise ? 1 : ob);
    clrt__karg args[10];
    cl_mem mx = clrt__mem(x), mw = clrt__mem(w), mb = b ? clrt__mem(b) : mw, mo = clrt__mem(out);
    cl_int has_b = b != NULL, kind = (cl_int)epi->kind;
    args[0] = CLRT__ARG(mx), args[1] = CLRT__ARG(mw), args[2] = CLRT__ARG(mb);
    args[3] = CLRT__ARG(has_b), args[4] = CLRT__ARG(mo), args[5] = CLRT__ARG(cg);
    if (depthwise && vw) {
        args[8] = CLRT__ARG(kind);
        return run_dw_vec(d, args, &cg, g, vw);
    }
    if (depthwise) {
        args[9] = CLRT__ARG(kind);
        return run_dw_rows(d, args, &cg, g);
    }
    /* Few channels per group (depthwise: 1) are unrolled too (-DCPG). */
    char cpg_opt[24] = "", options[112];
    if ((size_t)cpg * taps * (size_t)ob <= 64)
        snprintf(cpg_opt, sizeof cpg_opt, " -DCPG=%d", cpg);
    snprintf(options, sizeof options, "-DKH=%d -DKW=%d -DOB=%d%s", g->kh, g->kw, ob, cpg_opt);
    args[6] = CLRT__ARG(kind);
    return clrt__run_planes(d, clrt__kernel(d, "conv_general", options, "conv_general"),
                            (size_t)(os[2] * os[3]), (size_t)cg.planes, 7, args);
}

clrt_tensor *clrt__conv2d_general_fused(clrt_tensor *x, clrt_tensor *w, clrt_tensor *b,
                                        const clrt__conv_geom *g, const clrt__epilogue *epi)
{
    const char *api = "clrt__conv2d_general";
    int64_t os[4];
    if (check(api, x, w, b, g, os) != CLRT_OK)
        return NULL;
    if (!epi || epi->kind == CLRT__EPI_MASK) {
        clrt__fail(CLRT_EINVAL, "%s: takes no epilogue, a ReLU or a ReLU6", api);
        return NULL;
    }
    if (clrt__check_epilogue(api, epi, x) != CLRT_OK)
        return NULL;
    int cpg = (int)w->shape[1], opg = (int)(os[1] / g->groups);
    /* Groups of 8 or more channels: one table convolution each. A refusal
     * on any tuned path (a grad-mode input, a size one does not fit) leaves
     * the direct kernels below. */
    if (g->groups > 1 && g->groups <= 64 && cpg >= 8 && table_geom(g) && os[0] * os[1] > 0) {
        clrt_tensor *y = by_groups(x, w, b, g, epi, os);
        if (y)
            return y;
    }
    clrt_tensor *out = clrt__alloc(clrt__dev(x), CLRT_F32, 4, os);
    if (!out || out->numel == 0)
        return out;
    if (g->groups == 1 && table_geom(g) && table_conv(out, x, w, b, g, epi) == CLRT_OK)
        return out;
    if (run_direct(out, x, w, b, g, epi, cpg, opg) != CLRT_OK) {
        clrt_tensor_release(out);
        return NULL;
    }
    return out;
}

clrt_tensor *clrt__conv2d_general(clrt_tensor *x, clrt_tensor *w, clrt_tensor *b,
                                  const clrt__conv_geom *g)
{
    return clrt__conv2d_general_fused(x, w, b, g, &CLRT__NO_EPILOGUE);
}
