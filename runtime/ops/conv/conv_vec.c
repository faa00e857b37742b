/* Direct convolution for CPU devices (clkernels/conv_vec.cl): kernels
 * vectorised by hand over output channels, used instead of im2col + GEMM on
 * CPU devices for every kernel size up to MAX_KSIZE:
 *   forward         one launch after a weight re-layout (kept with the
 *                   weight tensor for inference: clrt__conv_keep); items of
 *                   a few rows by a few pixels (item_block); at stride 1
 *                   with at most MAX_PX_CHANNELS output channels the
 *                   kernel vectorises over output pixels instead, on a
 *                   copy of the input in a zero border;
 *   input gradient  (stride 1) the forward kernel run on grad_out with the
 *                   weights flipped and transposed, padding K-1-pad;
 *   weight gradient per-group partial sums, then a sum over the groups;
 *                   vectorised over output channels, or at stride 1 with
 *                   few of them over output pixels (plan_weight); with
 *                   padding, the input is first copied into a zero
 *                   border so the inner loop has no bounds checks.
 * With few output channels (LeNet's 6 and 16) im2col's column matrices
 * cost more memory traffic than the arithmetic they feed, so these beat
 * im2col + the host's BLAS on CPU devices (clrt-bench conv, BENCHMARKS.md).
 * On a device that ends long loops early (llvmpipe: clrt__loop_budget) the
 * plans keep every item's loops within its budget: the weight gradient
 * splits images into ranges of rows, and a forward whose items' channel
 * loops cannot fit declines to im2col. */
#include "runtime/ops/conv/conv_internal.h"
#include "runtime/core/env_internal.h"
#include "runtime/ops/workspace_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>

/* MAX_KSIZE bounds the unrolled taps; MAX_PX_CHANNELS the
 * pixel-vectorised kernels' channels (one vector each) and MAX_WGRAD_ACC
 * the weight gradient's accumulators (KB*K vectors), so all fit AVX-512's
 * 32 vector registers (max_pixels: the forward's); ITEMS_PER_UNIT
 * weight-gradient items per compute unit balance the cores. */
enum {
    MAX_KSIZE = 7,
    MAX_PX_CHANNELS = 8,
    MAX_WGRAD_ACC = 25,
    ITEMS_PER_UNIT = 32,
    GROUP_SLICE_BYTES = 128 * 1024 /* half the smallest L2 of today's server cores */
};

/* Must match vec_geom in clkernels/conv_vec.cl. */
typedef struct {
    cl_int N, C, H, W, O, OH, OW, pad, lanes;
} vec_geom;
_Static_assert(sizeof(vec_geom) == 9 * sizeof(cl_int) && offsetof(vec_geom, lanes) == 32,
               "vec_geom must match clkernels/conv_vec.cl");

int clrt__conv_vec_ok(const clrt_device *d, const clrt__conv_dims *cd)
{
    return clrt__cpu_style(d) && cd->K <= MAX_KSIZE;
}

int clrt__conv_vec_input_ok(const clrt_device *d, const clrt__conv_dims *cd)
{
    return clrt__conv_vec_ok(d, cd) && cd->stride == 1;
}

/* Lanes per vector: the smallest of 4, 8, 16 that holds `channels`, at
 * most the device's preferred float vector width (16 with AVX-512). */
static int vector_width(const clrt_device *d, int channels)
{
    unsigned pref = d->vector_width;
    int max = pref >= 16 ? 16 : pref >= 8 ? 8 : 4, vw = 4;
    while (vw < max && vw < channels)
        vw *= 2;
    return vw;
}

/* `channels` rounded up to whole vectors of vw lanes. */
static cl_int lanes_for(int channels, int vw)
{
    return (cl_int)(clrt__ceil_div((size_t)channels, (size_t)vw) * (size_t)vw);
}

/* Loop back edges the driver may run, counting every loop as if not
 * unrolled and each loop's exit test as one more (llvmpipe counts so; with
 * K = KB = 3 measured 18 per pixel of conv_vec_wgrad, estimated 22 here):
 * a loop over the K taps of a row costs K + 2. */
static size_t taps_cost(size_t K, size_t inner)
{
    return 2 + (K + 2) + K * (K + 2) + K * K * (inner + 2);
}

/* pad_planes' item: each row of a plane in 16-float copies and zero fills. */
static size_t pad_cost(const vec_geom *g)
{
    size_t WP = (size_t)(g->W + 2 * g->pad), pad = (size_t)(g->pad < 0 ? -g->pad : g->pad);
    return (size_t)(g->H + 2 * g->pad) * (WP / 16 + 2 * pad + 48);
}

/* The -D options of a conv_vec program besides the kernel size and stride
 * (see clkernels/conv_vec.cl). Helper kernels (weight re-layout, padding)
 * run from their caller's program, so a layer builds the family once per
 * option set rather than once more for the helpers. */
typedef struct {
    int vw, pw, kb, cout, rb;
} vec_opts;

static cl_kernel vec_kernel(clrt_device *d, const clrt__conv_dims *cd, vec_opts o, const char *name)
{
    char options[160];
    snprintf(options, sizeof options,
             "-DKSIZE=%d -DSTRIDE=%d -DVW=%d -DPW=%d -DKB=%d -DCOUT=%d -DRB=%d", cd->K, cd->stride,
             o.vw, o.pw, o.kb, o.cout, o.rb);
    return clrt__kernel(d, "conv_vec", options, name);
}

/* Launches k over `items` heavy work items (dim 0) times `blocks` channel
 * blocks (dim 1) in work-groups of `local` items (0: small enough that
 * every compute unit gets several). */
static clrt_status launch_items(clrt_device *d, cl_kernel k, int nargs, const clrt__karg *args,
                                size_t items, size_t blocks, size_t local)
{
    if (!k)
        return clrt_last_status();
    size_t wg = clrt__wg_size(d, k);
    if (!local)
        local = items / (8 * (size_t)(d->info.compute_units ? d->info.compute_units : 1));
    local = local < 1 ? 1 : local > wg ? wg : local;
    size_t global[2] = {clrt__ceil_div(items, local) * local, blocks}, lws[2] = {local, 1};
    return clrt__launch(d, k, nargs, args, 2, global, lws);
}

/* wt <- w [layer O, layer C, K, K] re-laid for geometry g (flip for an
 * input gradient) with g.lanes lanes, in blocks of o's VW lanes
 * (blocked) or one block, each tap-major, bias optional (vec_weights in
 * clkernels/conv_vec.cl). */
static clrt_status relay_into(clrt_device *d, const clrt__conv_dims *cd, vec_opts o, cl_mem w,
                              cl_mem bias, cl_int flip, const vec_geom *g, cl_int blocked,
                              cl_mem wt)
{
    size_t taps = (size_t)g->C * (size_t)cd->K * (size_t)cd->K;
    cl_int has_bias = bias != NULL, O = cd->O, C = cd->C;
    cl_mem b = bias ? bias : w; /* any valid buffer: the kernel skips it */
    clrt__karg args[] = {CLRT__ARG(w),        CLRT__ARG(b),    CLRT__ARG(has_bias),
                         CLRT__ARG(wt),       CLRT__ARG(O),    CLRT__ARG(C),
                         CLRT__ARG(g->lanes), CLRT__ARG(flip), CLRT__ARG(blocked)};
    return clrt__run_planes(d, vec_kernel(d, cd, o, "vec_weights"), (size_t)g->lanes, taps + 1, 9,
                            args);
}

/* xp <- images [img0, img0 + n) of x (geometry g) in a zero border of
 * g->pad, with `spare` floats after them; NULL + error. */
static cl_mem padded_copy(clrt_device *d, const clrt__conv_dims *cd, vec_opts o, cl_mem x,
                          const vec_geom *g, int img0, int n, size_t spare)
{
    cl_int HP = g->H + 2 * g->pad, WP = g->W + 2 * g->pad, planes = n * g->C;
    cl_int plane0 = img0 * g->C;
    size_t floats = (size_t)planes * (size_t)HP * (size_t)WP + spare;
    cl_mem xp = clrt__workspace(d, CLRT__WS_COL, floats * sizeof(float));
    clrt__karg args[] = {CLRT__ARG(x),    CLRT__ARG(xp),     CLRT__ARG(planes), CLRT__ARG(g->H),
                         CLRT__ARG(g->W), CLRT__ARG(g->pad), CLRT__ARG(plane0)};
    if (xp && launch_items(d, vec_kernel(d, cd, o, "pad_planes"), 7, args, (size_t)planes, 1, 0) !=
                  CLRT_OK)
        return NULL;
    return xp;
}

/* One direct convolution: geometry g of in by w (flipped for an input
 * gradient), optional bias, into out through the epilogue. */
typedef struct {
    const clrt__conv_dims *cd; /* the layer's */
    cl_mem in, w, bias, out;
    cl_int flip;
    const clrt__epilogue *epi;
    const clrt__conv_keep *keep; /* NULL: the weights re-laid on each call */
} vec_call;

/* The epilogue's kernel arguments: its kind and a buffer (out when there
 * is no mask: the kernel never reads it then). */
static void epi_args(const vec_call *c, clrt__karg *args, cl_int *kind, cl_mem *mask)
{
    *kind = (cl_int)c->epi->kind;
    *mask = c->epi->mask ? clrt__mem(c->epi->mask) : c->out;
    args[0] = CLRT__ARG(*kind);
    args[1] = CLRT__ARG(*mask);
}

/* The block of output pixels a conv_vec_fwd item accumulates, pw pixels
 * of rb rows: a record of the tuning store for the class (kernel size,
 * stride, output rows and columns) when the tuner left one, else the
 * default from the device: pw the output row split evenly into blocks of
 * at most half the vector registers less one, rb as many rows as the rest
 * of that half holds. Half: on PoCL's AVX-512 code (Intel Xeon,
 * 2026-12-02, ResNet-18's 3x3 layers at 7 to 56 pixels a row) 28
 * accumulators ran 1.3 to 2 times slower than 14, the unrolled loads and
 * addresses needing the rest; and a second row where the row is short (7
 * pixels: rb 2) halves the weight loads per FMA, which made the
 * 512-channel 7x7 layers 2 times faster. The vector registers come from
 * the preferred width (clrt__device_vector_registers: OpenCL has no query
 * for them). */
static const clrt__kparam item_params[] = {{"rb", 1, 16}, {"pw", 1, 32}};

/* At most as many accumulators as the vector registers hold, less two for
 * the loads: more spill, and do not unroll (a build error under
 * CLRT_KERNEL_WERROR). */
static const char *item_fits(const clrt_device *d, const int *v, char *why, size_t cap)
{
    int acc = clrt__device_vector_registers(d) - 2;
    if (v[0] * v[1] <= acc)
        return NULL;
    snprintf(why, cap, "rb=%d x pw=%d accumulators exceed the %d that %s's vector registers hold",
             v[0], v[1], acc, d->info.name);
    return why;
}

const clrt__kfamily clrt__conv_vec_fwd_family = {"conv_vec_fwd", 1, 2, item_params, item_fits};

void clrt__conv_vec_fwd_class(const clrt__conv_dims *cd, int OH, int OW, char *out, size_t cap)
{
    snprintf(out, cap, "k%d,s%d,%dx%d", cd->K, cd->stride, OH, OW);
}

static void default_item_block(const clrt_device *d, const vec_geom *g, int *rb, int *pw)
{
    int acc = clrt__device_vector_registers(d) / 2 - 1, most = g->OW < acc ? g->OW : acc;
    int blocks = (int)clrt__ceil_div((size_t)g->OW, (size_t)(most < 1 ? 1 : most));
    *pw = (int)clrt__ceil_div((size_t)g->OW, (size_t)blocks);
    int rows = acc / *pw;
    *rb = rows < 1 ? 1 : rows > g->OH ? g->OH : rows;
}

static void item_block(const clrt_device *d, const clrt__conv_dims *cd, const vec_geom *g, int *rb,
                       int *pw)
{
    default_item_block(d, g, rb, pw);
    char cls[64];
    int tuned[2];
    clrt__conv_vec_fwd_class(cd, g->OH, g->OW, cls, sizeof cls);
    if (clrt__kparams_get(d, &clrt__conv_vec_fwd_family, cls, tuned) == 1) {
        *rb = tuned[0] < g->OH ? tuned[0] : g->OH;
        *pw = tuned[1] < g->OW ? tuned[1] : g->OW;
    }
}

/* How a forward-type convolution (a forward, or an input gradient on
 * flipped weights) runs: conv_px_fwd (vectorised over output pixels) at
 * stride 1 with at most MAX_PX_CHANNELS output channels, else
 * conv_vec_fwd (over output channels). Both read the input in a zero
 * border, copied per chunk of images (conv_vec_fwd reads an unpadded input
 * in place); `spare` floats after the copy take conv_px_fwd's vector loads
 * past the last row. */
typedef struct {
    const char *kernel;
    vec_opts o;
    cl_int blocks;
    size_t row_blocks, channel_blocks, spare;
    cl_int blocked; /* the re-laid weights in blocks of an item's lanes */
    int copy;
    const vec_call *call;
    vec_geom g;
    cl_mem wt;
} fwd_plan;

/* Whether a forward-type pass of geometry g runs conv_px_fwd. */
static int by_pixel(const clrt__conv_dims *cd, const vec_geom *g)
{
    return g->O <= MAX_PX_CHANNELS && cd->stride == 1 && g->pad >= 0;
}

static fwd_plan plan_forward(const clrt_device *d, const clrt__conv_dims *cd, const vec_call *c,
                             vec_geom g)
{
    fwd_plan p = {.call = c, .copy = g.pad != 0, .row_blocks = (size_t)g.OH};
    if (by_pixel(cd, &g)) {
        int vw = vector_width(d, 16);
        g.lanes = g.O;
        p.kernel = "conv_px_fwd";
        p.o = (vec_opts){vw, 1, 1, g.O, 1};
        p.blocks = (cl_int)clrt__ceil_div((size_t)g.OW, (size_t)vw);
        p.channel_blocks = 1;
        /* A row narrower than a vector is loaded past its end: copied
         * then, with floats to spare after the last one. */
        p.spare = (size_t)vw;
        p.copy = g.pad != 0 || g.OW < vw;
    } else {
        int vw = vector_width(d, g.O), rb, pw;
        item_block(d, cd, &g, &rb, &pw);
        g.lanes = lanes_for(g.O, vw);
        p.kernel = "conv_vec_fwd";
        p.blocks = (cl_int)clrt__ceil_div((size_t)g.OW, (size_t)pw);
        p.o = (vec_opts){vw, pw, 1, 1, rb};
        p.channel_blocks = (size_t)(g.lanes / vw);
        p.row_blocks = clrt__ceil_div((size_t)g.OH, (size_t)rb);
        p.blocked = 1;
    }
    p.g = g;
    return p;
}

/* Whether a planned forward's items (a channel loop of the taps, then the
 * stores) and its padded copy keep within d's loop budget. */
static int forward_fits(const clrt_device *d, const fwd_plan *p)
{
    size_t budget = clrt__loop_budget(d), K = (size_t)p->call->cd->K;
    size_t inner = p->o.cout > 1 ? (size_t)p->o.cout : (size_t)p->o.rb * ((size_t)p->o.pw + 2);
    size_t item = (size_t)p->g.C * taps_cost(K, inner) + inner * ((size_t)p->o.vw + 2) + 8;
    return item <= budget && (!p->copy || pad_cost(&p->g) <= budget);
}

/* What the re-laid weights of a plan are: the layout (lanes, vector
 * width, flip, blocked) and the bias's storage and version (the weight's
 * own version the derived buffer checks itself). */
static void keep_tag(const fwd_plan *p, uint64_t tag[3])
{
    const clrt_tensor *b = p->call->keep->bias;
    tag[0] = b ? b->storage->serial : 0;
    tag[1] = b ? atomic_load(&b->storage->version) : 0;
    tag[2] = (uint64_t)p->g.lanes << 16 | (uint64_t)p->o.vw << 8 | (uint64_t)p->call->flip << 1 |
             (uint64_t)p->blocked;
}

/* The plan's re-laid weights: kept with the weight tensor where the call
 * keeps them (re-laid only when the weights or the bias changed since),
 * else re-laid into the workspace. NULL + error. */
static cl_mem plan_weights(clrt_device *d, const fwd_plan *p)
{
    const vec_call *c = p->call;
    const vec_geom *g = &p->g;
    size_t bytes =
        ((size_t)g->C * (size_t)c->cd->K * (size_t)c->cd->K + 1) * (size_t)g->lanes * sizeof(float);
    uint64_t tag[3];
    int fresh = 1;
    cl_mem wt;
    if (c->keep) {
        keep_tag(p, tag);
        wt = clrt__derived_get(c->keep->weight, tag, bytes, &fresh);
    } else {
        wt = clrt__workspace(d, CLRT__WS_VEC_WEIGHTS, bytes);
    }
    if (!wt || !fresh)
        return wt;
    if (relay_into(d, c->cd, p->o, c->w, c->bias, c->flip, g, p->blocked, wt) != CLRT_OK)
        return NULL;
    if (c->keep)
        clrt__derived_made(c->keep->weight, tag);
    return wt;
}

/* Images [img0, img0 + n) of a planned forward: the padded copy, then one
 * launch. The weights are re-laid with the first chunk. */
static clrt_status forward_chunk(clrt_device *d, void *ctx, int img0, int n)
{
    fwd_plan *p = ctx;
    const vec_call *c = p->call;
    const clrt__conv_dims *cd = c->cd;
    vec_geom g = p->g;
    if (img0 == 0 && !(p->wt = plan_weights(d, p)))
        return clrt_last_status();
    g.N = n;
    cl_int x_img0 = p->copy ? 0 : img0, out_img0 = img0, kind;
    cl_mem xp = p->copy ? padded_copy(d, cd, p->o, c->in, &g, img0, n, p->spare) : c->in, mask;
    if (!xp)
        return clrt_last_status();
    clrt__karg args[9] = {CLRT__ARG(xp),        CLRT__ARG(p->wt),  CLRT__ARG(c->out),  CLRT__ARG(g),
                          CLRT__ARG(p->blocks), CLRT__ARG(x_img0), CLRT__ARG(out_img0)};
    epi_args(c, &args[7], &kind, &mask);
    return launch_items(d, vec_kernel(d, cd, p->o, p->kernel), 9, args,
                        (size_t)n * p->row_blocks * (size_t)p->blocks, p->channel_blocks, 0);
}

/* Images per chunk of a planned forward whose padded copies fit the
 * scratch cap (all of them when it reads its input in place); 0 when not
 * even one image's copy does. */
static size_t forward_chunk_images(const clrt_device *d, const fwd_plan *p)
{
    const vec_geom *g = &p->g;
    size_t image = (size_t)g->C * (size_t)(g->H + 2 * g->pad) * (size_t)(g->W + 2 * g->pad);
    size_t room = clrt__conv_scratch_cap(d) / sizeof(float);
    if (!p->copy)
        return (size_t)g->N;
    return room > p->spare ? clrt__min_size((room - p->spare) / image, (size_t)g->N) : 0;
}

/* Runs a planned convolution in chunks of images; the plan must fit
 * (clrt__conv_vec_fits made it a candidate). */
static clrt_status run_forward(clrt_device *d, const vec_call *c, vec_geom g)
{
    fwd_plan p = plan_forward(d, c->cd, c, g);
    size_t chunk = forward_chunk_images(d, &p);
    if (!forward_fits(d, &p) || chunk < 1)
        return clrt__fail(CLRT_ENOTSUP,
                          "conv2d: the direct kernels cannot run this pass on %s (an image's "
                          "padded copy above the scratch cap, or loops longer than it runs)",
                          d->info.name);
    return clrt__conv_over_chunks(d, g.N, (int)chunk, forward_chunk, &p);
}

/* The forward's geometry, and the input gradient's: grad_x[h, w] = sum
 * over o, kh, kw of gy[h + pad - kh, w + pad - kw] * w[o, c, kh, kw], a
 * stride-1 convolution of gy with the flipped weights and padding
 * K-1-pad (negative padding crops: the copy holds the inner part). */
static vec_geom forward_geom(const clrt__conv_dims *cd)
{
    return (vec_geom){cd->N, cd->C, cd->H, cd->W, cd->O, cd->OH, cd->OW, cd->pad, 0};
}

static vec_geom input_geom(const clrt__conv_dims *cd)
{
    return (vec_geom){cd->N, cd->O, cd->OH, cd->OW, cd->C, cd->H, cd->W, cd->K - 1 - cd->pad, 0};
}

int clrt__conv_vec_item_block(const clrt_device *d, const clrt__conv_dims *cd, clrt__conv_pass pass,
                              char *cls, size_t cap, int block[2])
{
    if (pass == CLRT__CONV_BWD_WEIGHT || !(clrt__conv_candidates(d, cd, pass) & CLRT__ALGO_VEC))
        return 0;
    vec_geom g = pass == CLRT__CONV_FWD ? forward_geom(cd) : input_geom(cd);
    if (by_pixel(cd, &g))
        return 0;
    default_item_block(d, &g, &block[0], &block[1]);
    clrt__conv_vec_fwd_class(cd, g.OH, g.OW, cls, cap);
    return 1;
}

clrt_status clrt__conv_vec_forward(clrt_device *d, cl_mem x, cl_mem w, cl_mem bias, cl_mem out,
                                   const clrt__conv_dims *cd, const clrt__epilogue *epi,
                                   const clrt__conv_keep *keep)
{
    vec_call c = {cd, x, w, bias, out, 0, epi, keep};
    return run_forward(d, &c, forward_geom(cd));
}

clrt_status clrt__conv_vec_input(clrt_device *d, cl_mem gy, cl_mem w, cl_mem gx,
                                 const clrt__conv_dims *cd, const clrt__epilogue *epi)
{
    vec_call c = {cd, gy, w, NULL, gx, 1, epi, NULL};
    return run_forward(d, &c, input_geom(cd));
}

/* Kernel rows per weight-gradient item: the largest divisor of K whose
 * KB*K accumulators fit MAX_WGRAD_ACC. */
static int row_block(int K)
{
    int kb = 1;
    for (int i = 1; i <= K; i++)
        if (K % i == 0 && i * K <= MAX_WGRAD_ACC)
            kb = i;
    return kb;
}

/* How a weight gradient runs. conv_vec_wgrad vectorises over output
 * channels on grad_out made channel-minor (vec_channels_last); with few
 * channels most lanes would idle (LeNet's and the seed CNN's first layers:
 * 6 channels fill 6 of AVX-512's 16), so at stride 1, when output rows fill
 * more lanes than the channels do, conv_px_wgrad vectorises over output
 * pixels and reads grad_out as it is. Both write partial sums per group of
 * images, `lanes` apart per tap, that vec_wgrad_sum adds. */
typedef struct {
    int by_pixel; /* conv_px_wgrad, else conv_vec_wgrad */
    vec_opts o;
    cl_int lanes;
    size_t items_per_group, channel_blocks;
    size_t row_cost; /* an item's loop back edges per output row of an image */
    cl_int rows;     /* output rows per item: all of them, unless the loop
                        budget needs fewer (0: not even one row fits) */
} wgrad_plan;

/* Pixel lanes for conv_px_wgrad, or 0 where it does not apply or
 * conv_vec_wgrad's channel lanes are the fuller. Fill: useful lanes per
 * lane of the widest vector, over the vectors an item's row or channels
 * take. */
static int px_wgrad_width(const clrt_device *d, const clrt__conv_dims *cd)
{
    int widest = vector_width(d, 16), px = widest, vw = vector_width(d, cd->O);
    while (px > cd->OW && px > 4)
        px /= 2;
    if (cd->stride != 1 || cd->OW < px)
        return 0;
    double px_fill = (double)cd->OW / (double)(clrt__ceil_div((size_t)cd->OW, (size_t)px) * widest);
    double ch_fill = (double)cd->O / (double)(lanes_for(cd->O, vw) / vw * widest);
    return px_fill > ch_fill ? px : 0;
}

/* The row costs of a plan and the rows per item that keep an item within
 * d's loop budget. */
static wgrad_plan plan_rows(const clrt_device *d, const clrt__conv_dims *cd, wgrad_plan p)
{
    size_t K = (size_t)cd->K, budget = clrt__loop_budget(d), fixed = 16;
    if (p.by_pixel) /* per block: K input vectors, COUT x K FMAs */
        p.row_cost = 2 + clrt__ceil_div((size_t)cd->OW, (size_t)p.o.vw) *
                             (2 + (K + 2) + ((size_t)p.o.cout + 2) * (K + 2));
    else /* per pixel: KB x K FMAs */
        p.row_cost = 2 + (size_t)cd->OW * (2 + ((size_t)p.o.kb + 2) * (K + 2));
    size_t rows = budget > fixed ? (budget - fixed) / p.row_cost : 0;
    p.rows = (cl_int)clrt__min_size(rows, (size_t)cd->OH);
    return p;
}

static wgrad_plan plan_weight(const clrt_device *d, const clrt__conv_dims *cd)
{
    int px = px_wgrad_width(d, cd);
    if (px) {
        /* COUT channels per item, split evenly: COUT*(K+1) accumulators
         * (taps and bias) and K+1 loaded vectors within 30 of AVX-512's 32
         * registers. */
        int most = (29 - cd->K) / (cd->K + 1),
            cout = most > MAX_PX_CHANNELS ? MAX_PX_CHANNELS : most;
        size_t blocks = clrt__ceil_div((size_t)cd->O, (size_t)cout);
        cout = (int)clrt__ceil_div((size_t)cd->O, blocks);
        return plan_rows(
            d, cd,
            (wgrad_plan){1, {px, 1, 1, cout, 1}, cd->O, (size_t)cd->C * cd->K, blocks, 0, 0});
    }
    int vw = vector_width(d, cd->O), kb = row_block(cd->K);
    cl_int lanes = lanes_for(cd->O, vw);
    return plan_rows(d, cd,
                     (wgrad_plan){0,
                                  {vw, 1, kb, 1, 1},
                                  lanes,
                                  (size_t)cd->C * (size_t)(cd->K / kb),
                                  (size_t)(lanes / vw),
                                  0,
                                  0});
}

/* The weight and bias gradients of images [img0, img0 + n): grad_out
 * channel-minor (for conv_vec_wgrad), the images padded when needed, sums
 * per group into partials, the groups added into gw and gb (when given).
 * The caller holds the workspace. */
typedef struct {
    const clrt__conv_dims *cd;
    cl_mem gy, x, gw, gb;
    int accumulate;
    wgrad_plan p;
} weight_args;

/* gt <- images [img0, img0 + n) of gy channel-minor (vec_channels_last);
 * NULL + error. */
static cl_mem channels_last(clrt_device *d, const clrt__conv_dims *cd, vec_opts o, cl_mem gy,
                            const vec_geom *g, int img0, int n)
{
    size_t ohw = (size_t)cd->OH * (size_t)cd->OW;
    cl_mem gt = clrt__workspace(d, CLRT__WS_CHANNELS_LAST,
                                (size_t)n * ohw * (size_t)g->lanes * sizeof(float));
    cl_int gy_img0 = img0;
    clrt__karg args[] = {CLRT__ARG(gy), CLRT__ARG(gt), CLRT__ARG(*g), CLRT__ARG(gy_img0)};
    if (gt && clrt__run_planes(d, vec_kernel(d, cd, o, "vec_channels_last"), clrt__ceil_div(ohw, 4),
                               (size_t)n, 4, args) != CLRT_OK)
        return NULL;
    return gt;
}

/* Groups of images for the weight gradient's partial sums: enough items
 * (groups x per_group) to balance the compute units, few enough images
 * per group that the grad_out slice its items share (slice bytes per
 * image) stays in a core's cache while they run one after another: every
 * input channel's item reads all of it. With the whole batch in one group
 * (ResNet's 64-channel layers at 32x32: 8 MiB a slice) each item streamed
 * it from memory again, and the pass ran at a third of the forward's rate.
 * And no more images per item than the loop budget allows (one when an
 * image's rows are split). Returns images per group. */
static cl_int images_per_group(const clrt_device *d, const clrt__conv_dims *cd, const wgrad_plan *p,
                               size_t slice, int n)
{
    size_t per_group = p->items_per_group * p->channel_blocks;
    size_t want = ITEMS_PER_UNIT * (size_t)(d->info.compute_units ? d->info.compute_units : 1);
    size_t groups = clrt__ceil_div(want, per_group);
    size_t fit = slice ? GROUP_SLICE_BYTES / slice : (size_t)n;
    groups = groups > (size_t)n ? (size_t)n : groups;
    size_t per = clrt__ceil_div((size_t)n, groups), budget = clrt__loop_budget(d);
    if (p->rows < cd->OH)
        return 1;
    if (budget != SIZE_MAX) /* plan_rows left room for the fixed part */
        per = clrt__min_size(per, budget / ((size_t)cd->OH * p->row_cost + 2));
    per = clrt__min_size(per, fit);
    return (cl_int)(per ? per : 1);
}

/* partial <- the planned kernel's partial sums over groups of `per` images
 * of grad_out (gy, or gt channel-minor) and the input xp. */
static clrt_status launch_wgrad(clrt_device *d, const weight_args *a, cl_mem gy, cl_mem xp,
                                cl_mem partial, vec_geom g, cl_int per, cl_int x_img0,
                                cl_int gy_img0)
{
    cl_int rows = a->p.rows;
    clrt__karg px_args[] = {CLRT__ARG(gy),  CLRT__ARG(xp),     CLRT__ARG(partial), CLRT__ARG(g),
                            CLRT__ARG(per), CLRT__ARG(x_img0), CLRT__ARG(gy_img0), CLRT__ARG(rows)};
    clrt__karg vec_args[] = {CLRT__ARG(gy),  CLRT__ARG(xp),     CLRT__ARG(partial), CLRT__ARG(g),
                             CLRT__ARG(per), CLRT__ARG(x_img0), CLRT__ARG(rows)};
    size_t groups =
        clrt__ceil_div((size_t)g.N, (size_t)per) * clrt__ceil_div((size_t)g.OH, (size_t)rows);
    const char *kernel = a->p.by_pixel ? "conv_px_wgrad" : "conv_vec_wgrad";
    /* conv_px_wgrad: a group's items in one work-group, so they run on one
     * core and share the group's grad_out from its cache. */
    return launch_items(d, vec_kernel(d, a->cd, a->p.o, kernel), a->p.by_pixel ? 8 : 7,
                        a->p.by_pixel ? px_args : vec_args, groups * a->p.items_per_group,
                        a->p.channel_blocks, a->p.by_pixel ? a->p.items_per_group : 0);
}

static clrt_status weight_chunk(clrt_device *d, void *ctx, int img0, int n)
{
    const weight_args *a = ctx;
    const clrt__conv_dims *cd = a->cd;
    const wgrad_plan *p = &a->p;
    cl_int accumulate = a->accumulate || img0 > 0, has_bias = a->gb != NULL;
    vec_geom g = {n, cd->C, cd->H, cd->W, cd->O, cd->OH, cd->OW, cd->pad, p->lanes};
    size_t slice = (size_t)cd->OH * (size_t)cd->OW * (size_t)(p->by_pixel ? p->o.cout : p->o.vw) *
                   sizeof(float);
    cl_int per = images_per_group(d, cd, p, slice, n);
    cl_int ngroups = (cl_int)(clrt__ceil_div((size_t)n, (size_t)per) *
                              clrt__ceil_div((size_t)cd->OH, (size_t)p->rows));
    cl_int taps = cd->C * cd->K * cd->K, O = cd->O, x_img0 = img0, gy_img0 = img0;
    cl_mem gy = a->gy, x = a->x;
    if (!p->by_pixel) { /* conv_vec_wgrad reads grad_out channel-minor */
        gy = channels_last(d, cd, p->o, gy, &g, img0, n);
        gy_img0 = 0;
    }
    if (gy && cd->pad > 0) {
        x = padded_copy(d, cd, p->o, x, &g, img0, n, 0);
        x_img0 = 0;
    }
    cl_mem partial =
        gy && x ? clrt__workspace(d, CLRT__WS_MAT,
                                  (size_t)ngroups * (size_t)(taps + 1) * g.lanes * sizeof(float))
                : NULL;
    if (!partial)
        return clrt_last_status();
    clrt_status st = launch_wgrad(d, a, gy, x, partial, g, per, x_img0, gy_img0);
    cl_mem gb = a->gb ? a->gb : a->gw; /* unwritten without a bias */
    clrt__karg sargs[] = {CLRT__ARG(partial),  CLRT__ARG(a->gw),   CLRT__ARG(gb),
                          CLRT__ARG(has_bias), CLRT__ARG(ngroups), CLRT__ARG(O),
                          CLRT__ARG(taps),     CLRT__ARG(g.lanes), CLRT__ARG(accumulate)};
    return st != CLRT_OK ? st
                         : clrt__run_planes(d, vec_kernel(d, cd, p->o, "vec_wgrad_sum"),
                                            (size_t)cd->O, (size_t)taps + 1, 9, sargs);
}

/* Whether a planned weight gradient keeps within d's loop budget: at
 * least one output row per item, vec_wgrad_sum's loop over the partials of
 * every image and row range, the copies into a zero border. */
static int weight_fits(const clrt_device *d, const clrt__conv_dims *cd, const wgrad_plan *p)
{
    size_t budget = clrt__loop_budget(d);
    if (budget == SIZE_MAX)
        return 1;
    vec_geom g = {cd->N, cd->C, cd->H, cd->W, cd->O, cd->OH, cd->OW, cd->pad, p->lanes};
    size_t partials =
        (size_t)cd->N * clrt__ceil_div((size_t)cd->OH, (size_t)(p->rows ? p->rows : 1));
    return p->rows > 0 && partials + 4 <= budget && (size_t)p->lanes + 4 <= budget &&
           (cd->pad <= 0 || pad_cost(&g) <= budget);
}

/* Images per chunk of a planned weight gradient whose scratch copies
 * (padded input, or grad_out channel-minor) fit the scratch cap; 0 when
 * not even one image's do. */
static size_t weight_chunk_images(const clrt_device *d, const clrt__conv_dims *cd,
                                  const wgrad_plan *p)
{
    size_t padded = (size_t)cd->C * (size_t)(cd->H + 2 * cd->pad) * (size_t)(cd->W + 2 * cd->pad);
    size_t gt = !p->by_pixel ? (size_t)cd->OH * (size_t)cd->OW * (size_t)p->lanes : 0;
    size_t image = (cd->pad > 0 && padded > gt ? padded : gt) * sizeof(float);
    size_t cap = clrt__conv_scratch_cap(d);
    return image == 0 ? (size_t)cd->N : clrt__min_size(cap / image, (size_t)cd->N);
}

int clrt__conv_vec_fits(const clrt_device *d, const clrt__conv_dims *cd, clrt__conv_pass pass)
{
    if (pass == CLRT__CONV_BWD_WEIGHT) {
        wgrad_plan p = plan_weight(d, cd);
        return weight_fits(d, cd, &p) && weight_chunk_images(d, cd, &p) >= 1;
    }
    vec_call c = {cd,  NULL, NULL, NULL, NULL, pass == CLRT__CONV_BWD_INPUT, &CLRT__NO_EPILOGUE,
                  NULL};
    fwd_plan p =
        plan_forward(d, cd, &c, pass == CLRT__CONV_FWD ? forward_geom(cd) : input_geom(cd));
    return forward_fits(d, &p) && forward_chunk_images(d, &p) >= 1;
}

clrt_status clrt__conv_vec_weight(clrt_device *d, cl_mem gy, cl_mem x, cl_mem gw, cl_mem gb,
                                  const clrt__conv_dims *cd, int accumulate)
{
    weight_args a = {cd, gy, x, gw, gb, accumulate, plan_weight(d, cd)};
    size_t chunk = weight_chunk_images(d, cd, &a.p);
    if (!weight_fits(d, cd, &a.p) || chunk < 1)
        return clrt__fail(CLRT_ENOTSUP,
                          "conv2d weight gradient: the direct kernels cannot run it on %s (an "
                          "image's scratch copy above the scratch cap, or loops longer than it "
                          "runs)",
                          d->info.name);
    return clrt__conv_over_chunks(d, cd->N, (int)chunk, weight_chunk, &a);
}
