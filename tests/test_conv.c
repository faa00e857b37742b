/* conv2d forward and backward against naive float64 references on fresh
 * random inputs; the references' gradients against central finite
 * differences; argument errors. */
#include "testutil.h"

#include "runtime/device/device_internal.h"
#include "runtime/ops/conv/conv_internal.h"
#include "runtime/ops/epilogue_internal.h"
#include <math.h>
#include <string.h>

typedef struct {
    int N, C, H, W, O, K, s, p;
} conv_case;

/* Odd image sizes, kernels 1/3/5, strides 1/2, padding 0/1/2/3, one and
 * several channels, batches 1 and 3, LeNet's two layers, the seed CNN's
 * four, more output channels than one vector holds, padding beyond K-1
 * (the input gradient crops), one large case (11: CLRT_TEST_SIZE=small
 * keeps its image but cuts it to one image and 4 outputs), Winograd's
 * shapes, and case 11's shape small enough to keep 16 outputs at that size
 * (22). At that size the two with the most multiply-adds (14, 19) run one
 * image. */
static const conv_case cases[] = {
    {1, 1, 7, 9, 1, 1, 1, 0},
    {3, 2, 7, 9, 4, 3, 1, 1},
    {3, 3, 13, 13, 5, 3, 2, 1},
    {1, 1, 28, 28, 6, 5, 1, 2},
    {3, 6, 14, 14, 16, 5, 1, 0},
    {3, 2, 7, 9, 3, 5, 2, 2},
    {3, 4, 13, 13, 2, 1, 2, 0},
    {1, 3, 28, 28, 7, 3, 2, 0},
    {3, 5, 11, 8, 6, 5, 2, 1},
    {1, 2, 13, 13, 3, 3, 1, 2},
    {3, 1, 7, 9, 2, 5, 1, 0},
    {8, 3, 61, 67, 16, 3, 1, 1},
    {2, 3, 32, 32, 6, 5, 1, 0},
    {2, 6, 14, 14, 16, 5, 1, 3},
    {2, 16, 16, 16, 16, 5, 1, 0},
    {3, 16, 6, 6, 16, 3, 1, 0},
    {2, 5, 9, 11, 20, 3, 1, 3},
    /* 3x3 stride-1 layers with 8 or more channels (Winograd's): odd sizes
     * (partial tiles), padding 0-2, a 1x1 image, ResNet-18's widths. */
    {2, 8, 9, 7, 12, 3, 1, 1},
    {3, 17, 5, 8, 9, 3, 1, 2},
    {4, 64, 8, 8, 64, 3, 1, 1},
    {1, 8, 1, 1, 8, 3, 1, 1},
    {8, 32, 32, 32, 32, 3, 1, 1},
    /* case 11's shape, small enough to keep 16 outputs at CLRT_TEST_SIZE=small */
    {2, 3, 11, 13, 16, 3, 1, 1},
};
#define N_CASES ((int)(sizeof cases / sizeof cases[0]))

/* Relative error bounds: max |err| over max |ref| for the input gradient,
 * over the largest sum of |terms| for the rest (forward_magnitude,
 * param_grad_scales). GEMM sums C*K*K terms per output and N*OH*OW terms
 * per weight gradient in float32; the largest seen on PoCL and rusticl,
 * 4 seeds: 9.1e-7 forward, 1.0e-6 input, 3.2e-7 weight, 8.4e-8 bias. */
#define FWD_TOL 2e-6
#define DX_TOL 2e-6
#define DW_TOL 2e-6
#define DB_TOL 2e-6
/* Analytic reference gradients vs central differences in float64. */
#define FD_TOL 1e-6

typedef struct {
    conv_case c;
    int OH, OW;
    size_t nx, nw, no;
    float *x, *w, *b, *g; /* g: a random grad_out */
    double *xd, *wd, *bd, *gd;
} conv_data;

static double *to_double(const float *f, size_t n)
{
    double *d = malloc((n ? n : 1) * sizeof *d);
    ck_assert_ptr_nonnull(d);
    for (size_t i = 0; i < n; i++)
        d[i] = f[i];
    return d;
}

static void data_make(conv_data *t, conv_case c, uint64_t *rng)
{
    if (tu_small() && (size_t)c.N * c.O * c.H * c.W > 20000) { /* large: same image size */
        c.N = 1;
        c.O = c.O < 4 ? c.O : 4;
    }
    /* Many multiply-adds (cases 14 and 19, ResNet's 64 channels): one image
     * keeps the channel loops and Oclgrind's pass short. */
    if (tu_small() && (double)c.N * c.O * c.H * c.W * c.C * c.K * c.K > 2e6)
        c.N = 1;
    t->c = c;
    t->OH = (c.H + 2 * c.p - c.K) / c.s + 1;
    t->OW = (c.W + 2 * c.p - c.K) / c.s + 1;
    t->nx = (size_t)c.N * c.C * c.H * c.W;
    t->nw = (size_t)c.O * c.C * c.K * c.K;
    t->no = (size_t)c.N * c.O * t->OH * t->OW;
    t->x = tu_random_floats(rng, t->nx, -1, 1);
    t->w = tu_random_floats(rng, t->nw, -1, 1);
    t->b = tu_random_floats(rng, (size_t)c.O, -1, 1);
    t->g = tu_random_floats(rng, t->no, -1, 1);
    t->xd = to_double(t->x, t->nx);
    t->wd = to_double(t->w, t->nw);
    t->bd = to_double(t->b, (size_t)c.O);
    t->gd = to_double(t->g, t->no);
}

static void data_free(conv_data *t)
{
    free(t->x), free(t->w), free(t->b), free(t->g);
    free(t->xd), free(t->wd), free(t->bd), free(t->gd);
}

/* Visits every (output, input, weight) index triple of the convolution
 * whose input tap lies inside the image: the one loop nest all the
 * references share. */
#define FOR_EACH_TAP(t, OI, XI, WI, BODY)                                                          \
    do {                                                                                           \
        const conv_case c_ = (t)->c;                                                               \
        for (int n = 0; n < c_.N; n++)                                                             \
            for (int o = 0; o < c_.O; o++)                                                         \
                for (int oh = 0; oh < (t)->OH; oh++)                                               \
                    for (int ow = 0; ow < (t)->OW; ow++) {                                         \
                        size_t OI = (((size_t)n * c_.O + o) * (t)->OH + oh) * (t)->OW + ow;        \
                        for (int ch = 0; ch < c_.C; ch++)                                          \
                            for (int kh = 0; kh < c_.K; kh++)                                      \
                                for (int kw = 0; kw < c_.K; kw++) {                                \
                                    int ih = oh * c_.s - c_.p + kh, iw = ow * c_.s - c_.p + kw;    \
                                    if (ih < 0 || ih >= c_.H || iw < 0 || iw >= c_.W)              \
                                        continue;                                                  \
                                    size_t XI = (((size_t)n * c_.C + ch) * c_.H + ih) * c_.W + iw; \
                                    size_t WI = (((size_t)o * c_.C + ch) * c_.K + kh) * c_.K + kw; \
                                    BODY;                                                          \
                                }                                                                  \
                    }                                                                              \
    } while (0)

/* out = conv(x, w) + b (b may be NULL), all float64. */
static void ref_forward(const conv_data *t, const double *x, const double *w, const double *b,
                        double *out)
{
    for (size_t i = 0; i < t->no; i++)
        out[i] = b ? b[(i / ((size_t)t->OH * t->OW)) % (size_t)t->c.O] : 0.0;
    FOR_EACH_TAP(t, oi, xi, wi, out[oi] += x[xi] * w[wi]);
}

static void ref_backward(const conv_data *t, const double *g, double *dx, double *dw, double *db)
{
    memset(dx, 0, t->nx * sizeof *dx);
    memset(dw, 0, t->nw * sizeof *dw);
    memset(db, 0, (size_t)t->c.O * sizeof *db);
    FOR_EACH_TAP(t, oi, xi, wi, {
        dx[xi] += g[oi] * t->wd[wi];
        dw[wi] += g[oi] * t->xd[xi];
    });
    for (size_t i = 0; i < t->no; i++)
        db[(i / ((size_t)t->OH * t->OW)) % (size_t)t->c.O] += g[i];
}

static clrt_tensor *upload(const float *data, int n0, int n1, int n2, int n3, int ndim)
{
    int64_t shape[4] = {n0, n1, n2, n3};
    return TU_NONNULL(clrt_from_host(tu_device(), CLRT_F32, ndim, shape, data));
}

static clrt_tensor *upload_x(const conv_data *t)
{
    return upload(t->x, t->c.N, t->c.C, t->c.H, t->c.W, 4);
}
static clrt_tensor *upload_w(const conv_data *t)
{
    return upload(t->w, t->c.O, t->c.C, t->c.K, t->c.K, 4);
}
static clrt_tensor *upload_g(const conv_data *t)
{
    return upload(t->g, t->c.N, t->c.O, t->OH, t->OW, 4);
}

/* Max |err| over `scale`, which is at least max |ref|: a sum's rounding
 * error grows with the size of its terms, not of its result. */
static void check_close_scaled(const char *what, const clrt_tensor *got, const double *ref,
                               size_t n, double scale, double tol, int case_i)
{
    float *h = tu_read(got);
    double err = tu_rel_err(h, ref, n, scale);
    ck_assert_msg(err <= tol, "%s case %d: rel err %.3g > %.3g", what, case_i, err, tol);
    free(h);
}

static void check_close(const char *what, const clrt_tensor *got, const double *ref, size_t n,
                        double tol, int case_i)
{
    check_close_scaled(what, got, ref, n, 1e-3, tol, case_i);
}

static double *abs_copy(const double *v, size_t n)
{
    double *a = malloc((n ? n : 1) * sizeof *a);
    ck_assert_ptr_nonnull(a);
    for (size_t i = 0; i < n; i++)
        a[i] = fabs(v[i]);
    return a;
}

/* The largest sum of |terms| of any weight gradient (|grad_out| |x| over
 * images and outputs) or bias gradient (|grad_out|): the scale of their
 * float32 rounding errors. Both sum N*OH*OW terms that may nearly cancel,
 * leaving the rounding of terms near 1 large beside a small result
 * (CLRT_TEST_SEED=1882695574510219, case 6's bias: 1.4e-4 of max |ref|;
 * CLRT_TEST_SEED=1882801541513131 on rusticl, case 0's single weight
 * gradient, 63 terms: 2.9e-5 of |ref|). */
typedef struct {
    double dw, db;
} grad_scales;

/* The largest of v and 1e-3 (where every sum is tiny). */
static double largest(const double *v, size_t n)
{
    double m = 1e-3;
    for (size_t i = 0; i < n; i++)
        m = v[i] > m ? v[i] : m;
    return m;
}

static grad_scales param_grad_scales(const conv_data *t)
{
    conv_data a = *t;
    a.xd = abs_copy(t->xd, t->nx);
    a.wd = abs_copy(t->wd, t->nw);
    double *ag = abs_copy(t->gd, t->no), *dx = malloc(t->nx * sizeof *dx);
    double *dw = malloc(t->nw * sizeof *dw), *db = malloc((size_t)t->c.O * sizeof *db);
    ck_assert(dx && dw && db);
    ref_backward(&a, ag, dx, dw, db);
    grad_scales s = {largest(dw, t->nw), largest(db, (size_t)t->c.O)};
    free(a.xd), free(a.wd), free(ag), free(dx), free(dw), free(db);
    return s;
}

static void check_weight(const char *what, const clrt_tensor *got, const double *ref,
                         const conv_data *t, int case_i)
{
    check_close_scaled(what, got, ref, t->nw, param_grad_scales(t).dw, DW_TOL, case_i);
}

static void check_bias(const char *what, const clrt_tensor *got, const double *ref,
                       const conv_data *t, int case_i)
{
    check_close_scaled(what, got, ref, (size_t)t->c.O, param_grad_scales(t).db, DB_TOL, case_i);
}

/* The largest sum of |terms| of any output, sum |x| |w| + |b|: the scale
 * of the forward's rounding error. A ReLU can zero every large output and
 * leave ones that are small only by cancellation (x w + b with both terms
 * near 1), which a bound relative to the largest kept output would fail. */
static double forward_magnitude(const conv_data *t)
{
    double *ax = abs_copy(t->xd, t->nx), *aw = abs_copy(t->wd, t->nw);
    double *ab = abs_copy(t->bd, (size_t)t->c.O), *out = malloc(t->no * sizeof *out);
    ref_forward(t, ax, aw, ab, out);
    double m = largest(out, t->no);
    free(ax), free(aw), free(ab), free(out);
    return m;
}

/* --- forward --- */

static void run_forward_case(int i, int with_bias, int use_out)
{
    uint64_t rng = tu_seed() + (uint64_t)i * 7919;
    conv_data t;
    data_make(&t, cases[i], &rng);
    clrt_tensor *x = upload_x(&t), *w = upload_w(&t);
    clrt_tensor *b = with_bias ? upload(t.b, t.c.O, 0, 0, 0, 1) : NULL;
    clrt_tensor *y;
    if (use_out) {
        int64_t shape[4] = {t.c.N, t.c.O, t.OH, t.OW};
        y = TU_NONNULL(clrt_empty(tu_device(), CLRT_F32, 4, shape)); /* poisoned: NaN */
        TU_OK(clrt_f_conv2d_out(y, x, w, b, t.c.s, t.c.p));
    } else {
        y = TU_NONNULL(clrt_f_conv2d(x, w, b, t.c.s, t.c.p));
    }
    const int64_t *ys = clrt_tensor_shape(y);
    ck_assert(clrt_tensor_ndim(y) == 4 && ys[0] == t.c.N && ys[1] == t.c.O && ys[2] == t.OH &&
              ys[3] == t.OW);
    double *ref = malloc(t.no * sizeof *ref);
    ref_forward(&t, t.xd, t.wd, with_bias ? t.bd : NULL, ref);
    check_close("forward", y, ref, t.no, FWD_TOL, i);
    free(ref);
    clrt_tensor_release(x), clrt_tensor_release(w), clrt_tensor_release(b);
    clrt_tensor_release(y);
    data_free(&t);
}

/* Inference keeps the direct kernels' re-laid weights with the weight
 * tensor (clrt__conv_keep): a forward after the weight or the bias was
 * written, or with a new weight tensor in a reused buffer, must see the
 * new values. Each forward is checked against float64 with the values it
 * should have used. */
static void check_forward_now(const conv_data *t, clrt_tensor *x, clrt_tensor *w, clrt_tensor *b,
                              const char *what, int i)
{
    clrt_tensor *y = TU_NONNULL(clrt_f_conv2d(x, w, b, t->c.s, t->c.p));
    double *ref = malloc(t->no * sizeof *ref);
    ref_forward(t, t->xd, t->wd, t->bd, ref);
    check_close(what, y, ref, t->no, FWD_TOL, i);
    free(ref);
    clrt_tensor_release(y);
}

static void renew(float *f, double *d, size_t n, uint64_t *rng)
{
    float *fresh = tu_random_floats(rng, n, -1, 1);
    for (size_t k = 0; k < n; k++)
        f[k] = fresh[k], d[k] = fresh[k];
    free(fresh);
}

START_TEST(kept_weights_follow_writes)
{
    static const int which[] = {1, 15, 19, 22};
    int i = which[_i];
    uint64_t rng = tu_seed() + (uint64_t)i * 131;
    conv_data t;
    data_make(&t, cases[i], &rng);
    clrt_tensor *x = upload_x(&t), *w = upload_w(&t), *b = upload(t.b, t.c.O, 0, 0, 0, 1);
    check_forward_now(&t, x, w, b, "first forward", i);
    check_forward_now(&t, x, w, b, "same weights again", i);
    renew(t.w, t.wd, t.nw, &rng);
    TU_OK(clrt_copy_from_host(w, t.w, t.nw * sizeof(float)));
    check_forward_now(&t, x, w, b, "weights written", i);
    renew(t.b, t.bd, (size_t)t.c.O, &rng);
    TU_OK(clrt_copy_from_host(b, t.b, (size_t)t.c.O * sizeof(float)));
    check_forward_now(&t, x, w, b, "bias written", i);
    clrt_tensor_release(w); /* its buffer goes back to the cache: the next may reuse it */
    renew(t.w, t.wd, t.nw, &rng);
    w = upload_w(&t);
    check_forward_now(&t, x, w, b, "a new weight tensor", i);
    clrt_tensor_release(x), clrt_tensor_release(w), clrt_tensor_release(b);
    data_free(&t);
}
END_TEST

START_TEST(forward_bias) { run_forward_case(_i, 1, 0); }
END_TEST

START_TEST(forward_no_bias_out) { run_forward_case(_i, 0, 1); }
END_TEST

/* The forward with a ReLU epilogue (Sequential's fused Conv2d + ReLU)
 * against relu of the float64 reference. */
static void run_forward_relu_case(int i)
{
    uint64_t rng = tu_seed() + (uint64_t)i * 6271;
    conv_data t;
    data_make(&t, cases[i], &rng);
    clrt_tensor *x = upload_x(&t), *w = upload_w(&t), *b = upload(t.b, t.c.O, 0, 0, 0, 1);
    int64_t shape[4] = {t.c.N, t.c.O, t.OH, t.OW};
    clrt_tensor *y = TU_NONNULL(clrt_empty(tu_device(), CLRT_F32, 4, shape));
    const clrt__epilogue relu = {CLRT__EPI_RELU, NULL};
    TU_OK(clrt__conv2d_fused_out(y, x, w, b, t.c.s, t.c.p, &relu));
    double *ref = malloc(t.no * sizeof *ref);
    ref_forward(&t, t.xd, t.wd, t.bd, ref);
    for (size_t k = 0; k < t.no; k++)
        ref[k] = ref[k] < 0 ? 0 : ref[k];
    check_close_scaled("forward + relu", y, ref, t.no, forward_magnitude(&t), FWD_TOL, i);
    free(ref);
    clrt_tensor_release(x), clrt_tensor_release(w), clrt_tensor_release(b);
    clrt_tensor_release(y);
    data_free(&t);
}

START_TEST(forward_relu_epilogue) { run_forward_relu_case(_i); }
END_TEST

/* --- backward --- */

typedef struct {
    double *dx, *dw, *db;
} grads;

static grads ref_grads(const conv_data *t)
{
    grads r = {malloc(t->nx * sizeof(double)), malloc(t->nw * sizeof(double)),
               malloc((size_t)t->c.O * sizeof(double))};
    ref_backward(t, t->gd, r.dx, r.dw, r.db);
    return r;
}

static void grads_free(grads *r) { free(r->dx), free(r->dw), free(r->db); }

/* The input gradient (when do_input), the weight and bias gradients (when
 * do_weight), against the references. */
static void run_backward_passes(int _i, int do_input, int do_weight)
{
    uint64_t rng = tu_seed() + (uint64_t)_i * 104729;
    conv_data t;
    data_make(&t, cases[_i], &rng);
    clrt_tensor *x = upload_x(&t), *w = upload_w(&t), *g = upload_g(&t);
    clrt_tensor *dx = TU_NONNULL(clrt_empty(tu_device(), CLRT_F32, 4, clrt_tensor_shape(x)));
    clrt_tensor *dw = TU_NONNULL(clrt_empty(tu_device(), CLRT_F32, 4, clrt_tensor_shape(w)));
    int64_t o = t.c.O;
    clrt_tensor *db = TU_NONNULL(clrt_empty(tu_device(), CLRT_F32, 1, &o));
    grads r = ref_grads(&t);
    if (do_input) {
        TU_OK(clrt_f_conv2d_backward_input_out(dx, g, w, t.c.s, t.c.p));
        check_close("grad input", dx, r.dx, t.nx, DX_TOL, _i);
    }
    clrt_tensor *dw2 = TU_NONNULL(clrt_empty(tu_device(), CLRT_F32, 4, clrt_tensor_shape(w)));
    clrt_tensor *db2 = TU_NONNULL(clrt_empty(tu_device(), CLRT_F32, 1, &o));
    if (do_weight) {
        TU_OK(clrt_f_conv2d_backward_weight_out(dw, g, x, t.c.s, t.c.p, 0));
        TU_OK(clrt_f_conv2d_backward_bias_out(db, g, 0));
        check_weight("grad weight", dw, r.dw, &t, _i);
        check_bias("grad bias", db, r.db, &t, _i);
        /* Both parameter gradients in one call (the layer's), into
         * poisoned buffers. */
        TU_OK(clrt__conv2d_backward_params_out(dw2, db2, g, x, t.c.s, t.c.p, 0));
        check_weight("grad weight (with bias)", dw2, r.dw, &t, _i);
        check_bias("grad bias (with weight)", db2, r.db, &t, _i);
    }
    grads_free(&r);
    clrt_tensor *all[] = {x, w, g, dx, dw, db, dw2, db2};
    for (int k = 0; k < 8; k++)
        clrt_tensor_release(all[k]);
    data_free(&t);
}

static void run_backward_case(int i) { run_backward_passes(i, 1, 1); }

START_TEST(backward_all) { run_backward_case(_i); }
END_TEST

/* The input gradient with a ReLU-backward epilogue (Sequential's fused
 * ReLU + Conv2d): the float64 reference times (mask > 0), mask a random
 * tensor of x's shape with about half its entries positive. A mask that
 * aliases grad_x is refused. */
static void run_backward_masked_case(int i)
{
    uint64_t rng = tu_seed() + (uint64_t)i * 3967;
    conv_data t;
    data_make(&t, cases[i], &rng);
    float *hm = tu_random_floats(&rng, t.nx, -1, 1);
    clrt_tensor *w = upload_w(&t), *g = upload_g(&t);
    clrt_tensor *mask = upload(hm, t.c.N, t.c.C, t.c.H, t.c.W, 4);
    clrt_tensor *dx = TU_NONNULL(clrt_empty(tu_device(), CLRT_F32, 4, clrt_tensor_shape(mask)));
    const clrt__epilogue epi = {CLRT__EPI_MASK, mask};
    TU_OK(clrt__conv2d_backward_input_fused_out(dx, g, w, t.c.s, t.c.p, &epi));
    grads r = ref_grads(&t);
    double unmasked_max = 1e-3; /* the mask, like a ReLU, may keep only small entries */
    for (size_t k = 0; k < t.nx; k++) {
        unmasked_max = fmax(unmasked_max, fabs(r.dx[k]));
        r.dx[k] = hm[k] > 0 ? r.dx[k] : 0.0;
    }
    check_close_scaled("grad input masked", dx, r.dx, t.nx, unmasked_max, DX_TOL, i);
    const clrt__epilogue self = {CLRT__EPI_MASK, dx};
    ck_assert_int_eq(clrt__conv2d_backward_input_fused_out(dx, g, w, t.c.s, t.c.p, &self),
                     CLRT_EINVAL);
    tu_assert_error(CLRT_EINVAL, "clrt_f_conv2d_backward_input_out", "mask", NULL);
    grads_free(&r);
    free(hm);
    clrt_tensor_release(w), clrt_tensor_release(g), clrt_tensor_release(mask);
    clrt_tensor_release(dx);
    data_free(&t);
}

START_TEST(backward_input_mask_epilogue) { run_backward_masked_case(_i); }
END_TEST

/* Case i's dimensions as the tests run them (data_make's sizes). */
static clrt__conv_dims dims_of(int i)
{
    uint64_t rng = 1;
    conv_data t;
    data_make(&t, cases[i], &rng);
    clrt__conv_dims cd = {t.c.N, t.c.C, t.c.H, t.c.W, t.c.O, t.c.K, t.OH, t.OW, t.c.s, t.c.p};
    data_free(&t);
    return cd;
}

/* Runs pass `pass` of case i once into fresh outputs; its status. */
static clrt_status run_pass(int i, clrt__conv_pass pass)
{
    uint64_t rng = tu_seed() + (uint64_t)i;
    conv_data t;
    data_make(&t, cases[i], &rng);
    clrt_tensor *x = upload_x(&t), *w = upload_w(&t), *g = upload_g(&t);
    clrt_tensor *out =
        TU_NONNULL(clrt_empty(tu_device(), CLRT_F32, 4,
                              clrt_tensor_shape(pass == CLRT__CONV_FWD         ? g
                                                : pass == CLRT__CONV_BWD_INPUT ? x
                                                                               : w)));
    clrt_status st = pass == CLRT__CONV_FWD ? clrt_f_conv2d_out(out, x, w, NULL, t.c.s, t.c.p)
                     : pass == CLRT__CONV_BWD_INPUT
                         ? clrt_f_conv2d_backward_input_out(out, g, w, t.c.s, t.c.p)
                         : clrt_f_conv2d_backward_weight_out(out, g, x, t.c.s, t.c.p, 0);
    clrt_tensor_release(x), clrt_tensor_release(w), clrt_tensor_release(g);
    clrt_tensor_release(out);
    data_free(&t);
    return st;
}

/* Each algorithm forced on each case (CLRT_CONV_ALGO, in this forked test
 * only): im2col + GEMM, the direct kernels vectorised for CPUs
 * (conv_vec.c) and Winograd F(2x2, 3x3) (winograd.c). The library reads
 * CLRT_* once, at its first use, and finding the device's kind is a use:
 * so the algorithm is set first (loop index / N_CASES). Where the forced
 * algorithm applies to a pass (clrt__conv_candidates), the pass runs it
 * and no other (the device's counters) and matches the reference; where
 * it does not (Winograd: 3x3 stride-1 layers with 8 or more channels each
 * way; the direct kernels' input gradient: stride 1), the pass fails with
 * CLRT_ENOTSUP naming the algorithm and the pass, where it once ran
 * another algorithm without a word. */
START_TEST(other_algorithm)
{
    static const char *const algos[] = {"im2col", "vec", "winograd"};
    static const char *const passes[] = {"forward", "input", "weight"};
    static const int bits[] = {CLRT__ALGO_IM2COL, CLRT__ALGO_VEC, CLRT__ALGO_WINO};
    int a = _i / N_CASES, i = _i % N_CASES;
    setenv("CLRT_CONV_ALGO", algos[a], 1);
    clrt__conv_dims cd = dims_of(i);
    clrt__op_counters *n = &tu_device()->counters;
    unsigned before[3][3];
    int ok[3];
    for (int p = 0; p < 3; p++) {
        ok[p] = (clrt__conv_candidates(tu_device(), &cd, (clrt__conv_pass)p) & bits[a]) != 0;
        for (int k = 0; k < 3; k++)
            before[p][k] = atomic_load(&n->conv_runs[p][k]);
    }
    ck_assert_msg(a != 0 || (ok[0] && ok[1] && ok[2]), "im2col must apply to every pass");
    if (ok[CLRT__CONV_FWD]) {
        run_forward_case(i, 1, 0);
        run_forward_relu_case(i);
    }
    run_backward_passes(i, ok[CLRT__CONV_BWD_INPUT], ok[CLRT__CONV_BWD_WEIGHT]);
    if (ok[CLRT__CONV_BWD_INPUT])
        run_backward_masked_case(i);
    for (int p = 0; p < 3; p++) {
        char want[64];
        snprintf(want, sizeof want, "the %s pass", passes[p]);
        if (!ok[p]) {
            ck_assert_int_eq(run_pass(i, (clrt__conv_pass)p), CLRT_ENOTSUP);
            tu_assert_error(CLRT_ENOTSUP, "CLRT_CONV_ALGO=", algos[a], "does not apply", want,
                            NULL);
        }
        for (int k = 0; k < 3; k++) {
            unsigned ran = atomic_load(&n->conv_runs[p][k]) - before[p][k];
            ck_assert_msg(k == a ? (ran > 0) == ok[p] : ran == 0,
                          "case %d, CLRT_CONV_ALGO=%s: the %s pass ran %s %u times", i, algos[a],
                          passes[p], algos[k], ran);
        }
    }
}
END_TEST

/* accumulate adds to what the destination held. */
START_TEST(backward_accumulate)
{
    uint64_t rng = tu_seed() + 31 + (uint64_t)_i;
    conv_data t;
    data_make(&t, cases[_i], &rng);
    float *w0 = tu_random_floats(&rng, t.nw, -1, 1), *b0 = tu_random_floats(&rng, t.c.O, -1, 1);
    clrt_tensor *x = upload_x(&t), *g = upload_g(&t);
    clrt_tensor *dw = upload(w0, t.c.O, t.c.C, t.c.K, t.c.K, 4);
    clrt_tensor *db = upload(b0, t.c.O, 0, 0, 0, 1);
    TU_OK(clrt_f_conv2d_backward_weight_out(dw, g, x, t.c.s, t.c.p, 1));
    TU_OK(clrt_f_conv2d_backward_bias_out(db, g, 1));
    grads r = ref_grads(&t);
    for (size_t k = 0; k < t.nw; k++)
        r.dw[k] += w0[k];
    for (int k = 0; k < t.c.O; k++)
        r.db[k] += b0[k];
    check_weight("accumulated grad weight", dw, r.dw, &t, _i);
    check_bias("accumulated grad bias", db, r.db, &t, _i);
    /* and both at once, adding to the first sums */
    TU_OK(clrt__conv2d_backward_params_out(dw, db, g, x, t.c.s, t.c.p, 1));
    grads r2 = ref_grads(&t);
    for (size_t k = 0; k < t.nw; k++)
        r.dw[k] += r2.dw[k];
    for (int k = 0; k < t.c.O; k++)
        r.db[k] += r2.db[k];
    check_weight("twice accumulated grad weight", dw, r.dw, &t, _i);
    check_bias("twice accumulated grad bias", db, r.db, &t, _i);
    grads_free(&r2);
    grads_free(&r);
    free(w0), free(b0);
    clrt_tensor_release(x), clrt_tensor_release(g), clrt_tensor_release(dw),
        clrt_tensor_release(db);
    data_free(&t);
}
END_TEST

/* Forward with bias, input gradient, and weight and bias gradients in one
 * call (the layer's), each into a poisoned buffer, against the float64
 * references; `what` names the test in messages. The forward's bound is
 * scaled by its largest sum of |terms| (forward_magnitude): with thousands
 * of channels the float32 rounding of a sum grows with its length. */
static void run_all_paths(conv_case c, const char *what, int i)
{
    uint64_t rng = tu_seed() + 77 + (uint64_t)c.H;
    conv_data t;
    char label[96];
    data_make(&t, c, &rng);
    clrt_tensor *x = upload_x(&t), *w = upload_w(&t), *g = upload_g(&t);
    clrt_tensor *b = upload(t.b, t.c.O, 0, 0, 0, 1);
    clrt_tensor *y = TU_NONNULL(clrt_f_conv2d(x, w, b, t.c.s, t.c.p));
    clrt_tensor *dx = TU_NONNULL(clrt_empty(tu_device(), CLRT_F32, 4, clrt_tensor_shape(x)));
    clrt_tensor *dw = TU_NONNULL(clrt_empty(tu_device(), CLRT_F32, 4, clrt_tensor_shape(w)));
    int64_t o = t.c.O;
    clrt_tensor *db = TU_NONNULL(clrt_empty(tu_device(), CLRT_F32, 1, &o));
    TU_OK(clrt_f_conv2d_backward_input_out(dx, g, w, t.c.s, t.c.p));
    TU_OK(clrt__conv2d_backward_params_out(dw, db, g, x, t.c.s, t.c.p, 0));
    double *ref = malloc(t.no * sizeof *ref);
    ref_forward(&t, t.xd, t.wd, t.bd, ref);
    snprintf(label, sizeof label, "%s forward", what);
    check_close_scaled(label, y, ref, t.no, forward_magnitude(&t), FWD_TOL, i);
    grads r = ref_grads(&t);
    snprintf(label, sizeof label, "%s grad input", what);
    check_close(label, dx, r.dx, t.nx, DX_TOL, i);
    snprintf(label, sizeof label, "%s grad weight", what);
    check_weight(label, dw, r.dw, &t, i);
    snprintf(label, sizeof label, "%s grad bias", what);
    check_bias(label, db, r.db, &t, i);
    grads_free(&r);
    free(ref);
    clrt_tensor *all[] = {x, w, g, b, y, dx, dw, db};
    for (int k = 0; k < 8; k++)
        clrt_tensor_release(all[k]);
    data_free(&t);
}

/* The batch in chunks of one or two images (a small scratch cap) gives the
 * same results, including the weight gradient summed across chunks: once
 * with small images (the weight gradient as one GEMM per chunk on the host
 * BLAS) and once with OH*OW >= 256 (one GEMM per image, then a sum). Caps:
 * 40000 and 1 bytes chunk im2col (the direct kernels' padded copies fit
 * whole, or not even one image's does); 6000 bytes chunk the direct kernels
 * themselves (two padded images per chunk). */
START_TEST(chunked_batch)
{
    static const char *caps[] = {"40000", "1", "6000"};
    setenv("CLRT_CONV_SCRATCH_BYTES", caps[_i], 1);
    run_all_paths((conv_case){5, 3, 13, 11, 4, 3, 2, 1}, "chunked", _i);
    run_all_paths((conv_case){3, 2, 17, 16, 3, 3, 1, 1}, "chunked", _i);
    run_all_paths((conv_case){5, 8, 9, 7, 10, 3, 1, 1}, "chunked", _i);
}
END_TEST

/* Mesa's llvmpipe (rusticl's CPU device) ends a work item's loops once
 * they have run 65535 iterations in all (runtime/device/device.c), which
 * cut the weight gradient of case 11 short (30% off). The kernels
 * vectorised for CPUs keep each item within the device's loop budget; here
 * on every device (CLRT_KERNEL_STYLE=cpu) with llvmpipe's cap lowered to what
 * these small layers would meet: 1600 (a budget of 800) splits the weight
 * gradients' images into ranges of rows, conv_vec_wgrad's (16 outputs) and
 * conv_px_wgrad's (3 outputs on rows of 15); 400 leaves the first case's
 * forward, input and weight gradients to im2col and splits the second's
 * rows further. The third (stride 2: its input gradient is im2col's) has
 * rows of 40 that col2im_rows sums within 1600 but not 400, where the
 * per-pixel col2im takes them. */
START_TEST(loop_budget)
{
    static const unsigned caps[] = {1600, 400};
    setenv("CLRT_KERNEL_STYLE", "cpu", 1);
    tu_device()->loop_cap = caps[_i];
    run_all_paths((conv_case){2, 3, 13, 11, 16, 3, 1, 1}, "loop budget", _i);
    run_all_paths((conv_case){2, 2, 15, 17, 3, 3, 1, 0}, "loop budget", _i);
    run_all_paths((conv_case){1, 2, 5, 40, 4, 3, 2, 1}, "loop budget", _i);
}
END_TEST

/* The bias gradient alone (row sums over each plane, then a sum over
 * images): with llvmpipe's loop cap lowered to 40 (a budget of 20) the
 * 11x13 planes are summed in three segments each; at 20 even the segments
 * would make the sum over images too long, and it is refused, not summed
 * in part. */
START_TEST(bias_loop_budget)
{
    uint64_t rng = tu_seed() + 41;
    conv_data t;
    data_make(&t, (conv_case){2, 3, 11, 13, 16, 3, 1, 1}, &rng);
    clrt_tensor *g = upload_g(&t);
    int64_t o = t.c.O;
    clrt_tensor *db = TU_NONNULL(clrt_empty(tu_device(), CLRT_F32, 1, &o));
    grads r = ref_grads(&t);
    tu_device()->loop_cap = 40;
    TU_OK(clrt_f_conv2d_backward_bias_out(db, g, 0));
    check_bias("bias grad in segments", db, r.db, &t, 0);
    tu_device()->loop_cap = 20;
    ck_assert_int_eq(clrt_f_conv2d_backward_bias_out(db, g, 0), CLRT_ENOTSUP);
    tu_assert_error(CLRT_ENOTSUP, "bias gradient", "longer loops", NULL);
    grads_free(&r);
    clrt_tensor_release(g), clrt_tensor_release(db);
    data_free(&t);
}
END_TEST

/* Channel loops longer than llvmpipe runs: 7001 channels through
 * conv_vec_fwd's (9 outputs, 3x3 on one pixel) and 20011 through
 * conv_px_fwd's (3 outputs, 1x1). On rusticl they are no candidate there (im2col runs); before
 * that its forward came out 30-70% off. */
START_TEST(long_channel_loops)
{
    run_all_paths((conv_case){1, 7001, 1, 1, 9, 3, 1, 1}, "long channel loop", 0);
    run_all_paths((conv_case){1, 20011, 1, 1, 3, 1, 1, 0}, "long channel loop", 1);
}
END_TEST

/* Calls that grow the workspace while earlier commands using the old buffer
 * are still queued: the old buffer must live until they finish. No
 * synchronisation between the calls. */
START_TEST(workspace_grows_while_queued)
{
    uint64_t rng = tu_seed() + 5;
    conv_case cs[3] = {
        {2, 2, 9, 9, 3, 3, 1, 1}, {6, 4, 31, 29, 8, 5, 1, 2}, {1, 1, 7, 9, 2, 3, 2, 0}};
    conv_data t[3];
    clrt_tensor *x[3], *w[3], *y[3];
    for (int k = 0; k < 3; k++) {
        data_make(&t[k], cs[k], &rng);
        x[k] = upload_x(&t[k]);
        w[k] = upload_w(&t[k]);
    }
    for (int k = 0; k < 3; k++)
        y[k] = TU_NONNULL(clrt_f_conv2d(x[k], w[k], NULL, cs[k].s, cs[k].p));
    for (int k = 0; k < 3; k++) {
        double *ref = malloc(t[k].no * sizeof *ref);
        ref_forward(&t[k], t[k].xd, t[k].wd, NULL, ref);
        check_close("forward after growth", y[k], ref, t[k].no, FWD_TOL, k);
        free(ref);
        clrt_tensor_release(x[k]), clrt_tensor_release(w[k]), clrt_tensor_release(y[k]);
        data_free(&t[k]);
    }
}
END_TEST

/* --- the references against finite differences --- */

/* L(x, w, b) = sum(g * conv(x, w) + b), float64. */
static double ref_loss(const conv_data *t, const double *x, const double *w, const double *b)
{
    double *out = malloc(t->no * sizeof *out), l = 0;
    ref_forward(t, x, w, b, out);
    for (size_t i = 0; i < t->no; i++)
        l += t->gd[i] * out[i];
    free(out);
    return l;
}

/* Max relative difference between `grad` and dL/dv by central differences,
 * v one of t's xd, wd, bd (perturbed in place and restored). */
static double fd_err(const conv_data *t, double *v, size_t n, const double *grad)
{
    const double h = 1e-4;
    double max_diff = 0, max_ref = 1e-3;
    for (size_t i = 0; i < n; i++) {
        double keep = v[i];
        v[i] = keep + h;
        double lp = ref_loss(t, t->xd, t->wd, t->bd);
        v[i] = keep - h;
        double lm = ref_loss(t, t->xd, t->wd, t->bd);
        v[i] = keep;
        double fd = (lp - lm) / (2 * h);
        max_diff = fmax(max_diff, fabs(fd - grad[i]));
        max_ref = fmax(max_ref, fabs(fd));
    }
    return max_diff / max_ref;
}

START_TEST(reference_vs_finite_differences)
{
    static const conv_case small[] = {
        {2, 2, 5, 6, 3, 3, 1, 1}, {1, 3, 7, 5, 2, 3, 2, 2}, {2, 1, 6, 7, 2, 5, 2, 1}};
    uint64_t rng = tu_seed() + 991 + (uint64_t)_i;
    conv_data t;
    data_make(&t, small[_i], &rng);
    grads r = ref_grads(&t);
    double ex = fd_err(&t, t.xd, t.nx, r.dx), ew = fd_err(&t, t.wd, t.nw, r.dw);
    double eb = fd_err(&t, t.bd, (size_t)t.c.O, r.db);
    ck_assert_msg(ex < FD_TOL && ew < FD_TOL && eb < FD_TOL, "fd errors %g %g %g", ex, ew, eb);
    /* and the device's gradients against the same differences */
    clrt_tensor *x = upload_x(&t), *w = upload_w(&t), *g = upload_g(&t);
    clrt_tensor *dx = TU_NONNULL(clrt_empty(tu_device(), CLRT_F32, 4, clrt_tensor_shape(x)));
    clrt_tensor *dw = TU_NONNULL(clrt_empty(tu_device(), CLRT_F32, 4, clrt_tensor_shape(w)));
    TU_OK(clrt_f_conv2d_backward_input_out(dx, g, w, t.c.s, t.c.p));
    TU_OK(clrt_f_conv2d_backward_weight_out(dw, g, x, t.c.s, t.c.p, 0));
    float *hx = tu_read(dx), *hw = tu_read(dw);
    double *gx = to_double(hx, t.nx), *gw = to_double(hw, t.nw);
    ck_assert_msg(fd_err(&t, t.xd, t.nx, gx) < 1e-5, "device grad input vs fd");
    ck_assert_msg(fd_err(&t, t.wd, t.nw, gw) < 1e-5, "device grad weight vs fd");
    free(hx), free(hw), free(gx), free(gw);
    clrt_tensor *all[] = {x, w, g, dx, dw};
    for (int k = 0; k < 5; k++)
        clrt_tensor_release(all[k]);
    grads_free(&r);
    data_free(&t);
}
END_TEST

/* The kernels divide by image widths with fast_div (clkernels/common.cl):
 * its host-computed constants must give exact quotients for every divisor
 * and every 31-bit dividend. Emulated here bit for bit. */
START_TEST(fast_division_constants)
{
    uint64_t rng = tu_seed();
    for (uint32_t d = 1; d < 70000; d += d < 5000 ? 1 : 97) {
        clrt__divisor dv = clrt__divisor_of(d);
        for (int k = 0; k < 64; k++) {
            uint32_t q = k < 8    ? (uint32_t)INT32_MAX - (uint32_t)k
                         : k < 24 ? (uint32_t)((tu_next(&rng) % 4096) * d + (uint32_t)(k % 3)) - 1u
                                  : (uint32_t)(tu_next(&rng) >> 33);
            if (q > (uint32_t)INT32_MAX)
                q = 0;
            uint32_t hi = (uint32_t)(((uint64_t)q * dv.mul) >> 32);
            uint32_t got = (hi + q) >> dv.shift;
            ck_assert_msg(got == q / d, "%u / %u: got %u", q, d, got);
        }
    }
}
END_TEST

/* --- errors --- */

static clrt_tensor *zeros4(clrt_dtype dt, int a, int b, int c, int d)
{
    int64_t s[4] = {a, b, c, d};
    return TU_NONNULL(clrt_zeros(tu_device(), dt, 4, s));
}

START_TEST(bad_arguments)
{
    clrt_tensor *x = zeros4(CLRT_F32, 2, 3, 7, 7), *w = zeros4(CLRT_F32, 4, 2, 3, 3);
    clrt_tensor *w_ok = zeros4(CLRT_F32, 4, 3, 3, 3), *w5 = zeros4(CLRT_F32, 1, 3, 9, 9);
    clrt_tensor *w_rect = zeros4(CLRT_F32, 4, 3, 3, 2), *xi = zeros4(CLRT_I32, 2, 3, 7, 7);
    int64_t five = 5;
    clrt_tensor *b5 = TU_NONNULL(clrt_zeros(tu_device(), CLRT_F32, 1, &five));

    ck_assert_ptr_null(clrt_f_conv2d(x, w, NULL, 1, 0));
    tu_assert_error(CLRT_ESHAPE, "clrt_f_conv2d", "[2, 3, 7, 7]", "[4, 2, 3, 3]", "channels", NULL);
    ck_assert_ptr_null(clrt_f_conv2d(x, w5, NULL, 1, 0));
    tu_assert_error(CLRT_ESHAPE, "larger than the padded input", "[1, 3, 9, 9]", "[2, 3, 7, 7]",
                    NULL);
    clrt_tensor_release(TU_NONNULL(clrt_f_conv2d(x, w5, NULL, 1, 1))); /* 9 <= 7 + 2 */
    ck_assert_ptr_null(clrt_f_conv2d(x, w_ok, b5, 1, 0));
    tu_assert_error(CLRT_ESHAPE, "bias [5]", "[4]", "[4, 3, 3, 3]", NULL);
    ck_assert_ptr_null(clrt_f_conv2d(x, w_rect, NULL, 1, 0));
    tu_assert_error(CLRT_ESHAPE, "square", "[4, 3, 3, 2]", NULL);
    ck_assert_ptr_null(clrt_f_conv2d(xi, w_ok, NULL, 1, 0));
    tu_assert_error(CLRT_EDTYPE, "x must be float32", "int32", NULL);
    ck_assert_ptr_null(clrt_f_conv2d(NULL, w_ok, NULL, 1, 0));
    tu_assert_error(CLRT_EINVAL, "x is NULL", NULL);
    ck_assert_ptr_null(clrt_f_conv2d(x, NULL, NULL, 1, 0));
    tu_assert_error(CLRT_EINVAL, "weight is NULL", NULL);
    ck_assert_ptr_null(clrt_f_conv2d(x, w_ok, NULL, 0, 0));
    tu_assert_error(CLRT_EINVAL, "stride", NULL);
    ck_assert_ptr_null(clrt_f_conv2d(x, w_ok, NULL, 1, -1));
    tu_assert_error(CLRT_EINVAL, "padding", NULL);

    /* backward: grad_out of the wrong shape, wrong destination shapes */
    clrt_tensor *g = zeros4(CLRT_F32, 2, 4, 5, 5), *g_bad = zeros4(CLRT_F32, 2, 4, 6, 5);
    ck_assert_int_eq(clrt_f_conv2d_backward_input_out(x, g_bad, w_ok, 1, 0), CLRT_ESHAPE);
    tu_assert_error(CLRT_ESHAPE, "grad_out is [2, 4, 6, 5]", "[2, 4, 5, 5]", NULL);
    ck_assert_int_eq(clrt_f_conv2d_backward_weight_out(w, g, x, 1, 0, 0), CLRT_ESHAPE);
    tu_assert_error(CLRT_ESHAPE, "channels", NULL);
    ck_assert_int_eq(clrt_f_conv2d_backward_bias_out(b5, g, 0), CLRT_ESHAPE);
    tu_assert_error(CLRT_ESHAPE, "grad_b [5]", "[2, 4, 5, 5]", NULL);
    ck_assert_int_eq(clrt_f_conv2d_backward_bias_out(NULL, g, 0), CLRT_EINVAL);
    ck_assert_int_eq(clrt_f_conv2d_backward_input_out(x, g, NULL, 1, 0), CLRT_EINVAL);
    tu_assert_error(CLRT_EINVAL, "weight is NULL", NULL);
    clrt_tensor *g1 = zeros4(CLRT_F32, 4, 4, 1, 1); /* w_ok as an input [4, 3, 3, 3] */
    ck_assert_int_eq(clrt_f_conv2d_backward_weight_out(w_ok, g1, w_ok, 1, 0, 0), CLRT_EINVAL);
    tu_assert_error(CLRT_EINVAL, "share storage", NULL);
    clrt_tensor *all[] = {x, w, w_ok, w5, w_rect, xi, b5, g, g_bad, g1};
    for (int k = 0; k < 10; k++)
        clrt_tensor_release(all[k]);
    /* PoCL aborts if the process exits while it still compiles a queued
     * kernel (LLVM is torn down under it): finish before leaving. */
    TU_OK(clrt_device_synchronize(tu_device()));
}
END_TEST

/* A rejected call leaves its destination as it was. */
START_TEST(errors_lose_nothing)
{
    clrt_tensor *x = zeros4(CLRT_F32, 1, 2, 5, 5), *w = zeros4(CLRT_F32, 3, 2, 3, 3);
    int64_t os[4] = {1, 3, 3, 3}, four = 4;
    clrt_tensor *out = TU_NONNULL(clrt_full(tu_device(), CLRT_F32, 4, os, 7.0));
    clrt_tensor *b4 = TU_NONNULL(clrt_zeros(tu_device(), CLRT_F32, 1, &four));
    clrt_tensor *dw = TU_NONNULL(clrt_full(tu_device(), CLRT_F32, 4, clrt_tensor_shape(w), 7.0));
    ck_assert_int_eq(clrt_f_conv2d_out(out, x, w, b4, 1, 0), CLRT_ESHAPE);
    ck_assert_int_eq(clrt_f_conv2d_backward_weight_out(dw, out, x, 2, 0, 1), CLRT_ESHAPE);
    float *h = tu_read(out), *hw = tu_read(dw);
    for (int i = 0; i < 27; i++)
        ck_assert(h[i] == 7.0f);
    for (int i = 0; i < 54; i++)
        ck_assert(hw[i] == 7.0f);
    ck_assert_int_eq(clrt_f_conv2d_out(x, x, w, NULL, 1, 0), CLRT_ESHAPE);
    free(h), free(hw);
    clrt_tensor_release(x), clrt_tensor_release(w), clrt_tensor_release(out);
    clrt_tensor_release(b4), clrt_tensor_release(dw);
}
END_TEST

/* An empty batch: an empty output, zero weight and bias gradients. */
START_TEST(empty_batch)
{
    clrt_tensor *x = zeros4(CLRT_F32, 0, 2, 5, 5), *w = zeros4(CLRT_F32, 3, 2, 3, 3);
    clrt_tensor *y = TU_NONNULL(clrt_f_conv2d(x, w, NULL, 1, 0));
    ck_assert_int_eq(clrt_tensor_numel(y), 0);
    clrt_tensor *dw = TU_NONNULL(clrt_empty(tu_device(), CLRT_F32, 4, clrt_tensor_shape(w)));
    int64_t three = 3;
    clrt_tensor *db = TU_NONNULL(clrt_empty(tu_device(), CLRT_F32, 1, &three));
    TU_OK(clrt_f_conv2d_backward_weight_out(dw, y, x, 1, 0, 0));
    TU_OK(clrt_f_conv2d_backward_bias_out(db, y, 0));
    float *hw = tu_read(dw), *hb = tu_read(db);
    for (int i = 0; i < 54; i++)
        ck_assert(hw[i] == 0.0f);
    for (int i = 0; i < 3; i++)
        ck_assert(hb[i] == 0.0f);
    free(hw), free(hb);
    clrt_tensor_release(x), clrt_tensor_release(w), clrt_tensor_release(y);
    clrt_tensor_release(dw), clrt_tensor_release(db);
}
END_TEST

/* The direct forward kernel computes right at every item block a tuner
 * may store (runtime/tune: rows rb by pixels pw within their ranges and
 * within the 14 accumulators the smallest register file holds, blocks
 * past the output's rows or columns, pw not dividing the row): the
 * forward and the input gradient (which runs the same kernel) of cases
 * where conv_vec_fwd runs, with the block forced as the tuner's trials
 * are (clrt__kparams_try) and the direct kernels forced where they apply,
 * against float64. On a device of the CPU style they must have run. */
static const int item_blocks[][2] = {{1, 1}, {2, 3}, {1, 14}, {14, 1}, {2, 7}};

START_TEST(item_blocks_compute_right)
{
    static const int which[] = {4, 16, 19};
    clrt__conv_tuner vec = {.force = CLRT__ALGO_VEC};
    clrt__op_counters *n = &tu_device()->counters;
    for (int k = 0; k < 3; k++) {
        int i = which[k];
        uint64_t rng = tu_seed() + (uint64_t)i * 31;
        conv_data t;
        data_make(&t, cases[i], &rng);
        clrt_tensor *x = upload_x(&t), *w = upload_w(&t), *g = upload_g(&t);
        int64_t ys[4] = {t.c.N, t.c.O, t.OH, t.OW};
        clrt_tensor *y = TU_NONNULL(clrt_empty(tu_device(), CLRT_F32, 4, ys));
        clrt_tensor *dx = TU_NONNULL(clrt_empty(tu_device(), CLRT_F32, 4, clrt_tensor_shape(x)));
        unsigned vec_before = atomic_load(&n->conv_runs[CLRT__CONV_FWD][1]) +
                              atomic_load(&n->conv_runs[CLRT__CONV_BWD_INPUT][1]);
        clrt__conv_tuner_set(&vec);
        clrt__kparams_try(&clrt__conv_vec_fwd_family, item_blocks[_i]);
        clrt_status fwd = clrt_f_conv2d_out(y, x, w, NULL, t.c.s, t.c.p);
        clrt_status in = clrt_f_conv2d_backward_input_out(dx, g, w, t.c.s, t.c.p);
        clrt__kparams_try(NULL, NULL);
        clrt__conv_tuner_set(NULL);
        TU_OK(fwd);
        TU_OK(in);
        double *ref = malloc(t.no * sizeof *ref);
        ref_forward(&t, t.xd, t.wd, NULL, ref);
        check_close("forward at a forced item block", y, ref, t.no, FWD_TOL, i);
        free(ref);
        grads r = ref_grads(&t);
        check_close("grad input at a forced item block", dx, r.dx, t.nx, DX_TOL, i);
        grads_free(&r);
        unsigned vec_ran = atomic_load(&n->conv_runs[CLRT__CONV_FWD][1]) +
                           atomic_load(&n->conv_runs[CLRT__CONV_BWD_INPUT][1]) - vec_before;
        if (clrt__cpu_style(tu_device()))
            ck_assert_msg(vec_ran == 2, "case %d: the direct kernels ran %u of 2 passes", i,
                          vec_ran);
        clrt_tensor *all[] = {x, w, g, y, dx};
        for (int a = 0; a < 5; a++)
            clrt_tensor_release(all[a]);
        data_free(&t);
    }
}
END_TEST

/* A block with more accumulators than the registers hold is refused,
 * trial or record, naming the limit; the defaults run then. */
START_TEST(item_block_beyond_registers_is_refused)
{
    int big[2] = {16, 32}, got[2] = {0, 0};
    clrt__kparams_try(&clrt__conv_vec_fwd_family, big);
    int r = clrt__kparams_get(tu_device(), &clrt__conv_vec_fwd_family, "k3,s1,32x32", got);
    clrt__kparams_try(NULL, NULL);
    ck_assert_int_eq(r, CLRT_EFORMAT);
    tu_assert_error(CLRT_EFORMAT, "rb=16 x pw=32 accumulators exceed", NULL);
    ck_assert_int_eq(clrt__kparams_put(tu_device(), &clrt__conv_vec_fwd_family, "k3,s1,32x32", big),
                     CLRT_EINVAL);
    tu_assert_error(CLRT_EINVAL, "accumulators exceed", NULL);
}
END_TEST

static Suite *conv_suite(void)
{
    Suite *s = suite_create("conv");
    TCase *tc = tu_tcase("conv");
    tcase_set_timeout(tc, 300);
    tcase_add_loop_test(tc, forward_bias, 0, N_CASES);
    tcase_add_loop_test(tc, forward_no_bias_out, 0, N_CASES);
    tcase_add_loop_test(tc, forward_relu_epilogue, 0, N_CASES);
    tcase_add_loop_test(tc, kept_weights_follow_writes, 0, 4);
    tcase_add_loop_test(tc, backward_all, 0, N_CASES);
    tcase_add_loop_test(tc, backward_input_mask_epilogue, 0, N_CASES);
    tcase_add_loop_test(tc, backward_accumulate, 0, N_CASES);
    tcase_add_loop_test(tc, chunked_batch, 0, 3);
    tcase_add_loop_test(tc, loop_budget, 0, 2);
    tcase_add_test(tc, bias_loop_budget);
    tcase_add_test(tc, workspace_grows_while_queued);
    tcase_add_loop_test(tc, reference_vs_finite_differences, 0, 3);
    tcase_add_test(tc, fast_division_constants);
    tcase_add_test(tc, bad_arguments);
    tcase_add_test(tc, errors_lose_nothing);
    tcase_add_test(tc, empty_batch);
    tcase_add_loop_test(tc, item_blocks_compute_right, 0,
                        (int)(sizeof item_blocks / sizeof item_blocks[0]));
    tcase_add_test(tc, item_block_beyond_registers_is_refused);
    suite_add_tcase(s, tc);
    /* Every algorithm forced on every case, and the channel loops longer
     * than llvmpipe runs (for rusticl; 137 s of simulated GEMMs on
     * Oclgrind): the longest parts under Oclgrind, whose CI pass leaves
     * them to scripts/oclgrind.sh. */
    TCase *algos = tu_tcase("algorithms");
    tcase_set_tags(algos, "oclgrind_long");
    tcase_set_timeout(algos, 300);
    tcase_add_loop_test(algos, other_algorithm, 0, 3 * N_CASES);
    tcase_add_test(algos, long_channel_loops);
    suite_add_tcase(s, algos);
    return s;
}

int main(void) { return tu_run(conv_suite()); }
