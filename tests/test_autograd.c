/* Autograd (clrt/autograd.h) end to end: graphs of ops and module calls
 * against float64 references; a layer called twice in one step gets the
 * sum of both calls' gradients; gradients accumulate over backward calls;
 * the errors (a second backward through a freed graph, a saved tensor
 * written in place, in-place ops on tensors that require grad, a loss
 * with more than one element); ResNet-18 through clrt_backward gives the
 * explicit path's gradients. The gradient of each op alone:
 * test_gradcheck.c. */
#include "testutil.h"

#include <math.h>
#include <string.h>

#define TOL 2e-5

static clrt_tensor *upload(const float *v, int ndim, const int64_t *shape)
{
    return TU_NONNULL(clrt_from_host(tu_device(), CLRT_F32, ndim, shape, v));
}

static clrt_tensor *leaf(const float *v, int ndim, const int64_t *shape)
{
    clrt_tensor *t = upload(v, ndim, shape);
    TU_OK(clrt_requires_grad_(t, 1));
    return t;
}

/* max |got - want| / max |want| on n values. */
static double rel_err(const clrt_tensor *got, const double *want, size_t n)
{
    float *g = tu_read(got);
    double e = tu_rel_err(g, want, n, 1e-6);
    free(g);
    return e;
}

/* y = W2 relu(W1 x + b1) for x [n, d], W1 [h, d], b1 [h], W2 [o, h]: in
 * float64, with the gradients of sum(y * r). */
typedef struct {
    int n, d, h, o;
    double *x, *w1, *b1, *w2, *r;
    double *y, *gx, *gw1, *gb1, *gw2;
} mlp;

static void mlp_ref(mlp *m)
{
    double *z = calloc((size_t)(m->n * m->h), sizeof *z);
    m->y = calloc((size_t)(m->n * m->o), sizeof *m->y);
    m->gx = calloc((size_t)(m->n * m->d), sizeof *m->gx);
    m->gw1 = calloc((size_t)(m->h * m->d), sizeof *m->gw1);
    m->gb1 = calloc((size_t)m->h, sizeof *m->gb1);
    m->gw2 = calloc((size_t)(m->o * m->h), sizeof *m->gw2);
    for (int i = 0; i < m->n; i++)
        for (int j = 0; j < m->h; j++) {
            double s = m->b1[j];
            for (int k = 0; k < m->d; k++)
                s += m->w1[j * m->d + k] * m->x[i * m->d + k];
            z[i * m->h + j] = s;
        }
    for (int i = 0; i < m->n; i++)
        for (int p = 0; p < m->o; p++) {
            double s = 0;
            for (int j = 0; j < m->h; j++)
                s += m->w2[p * m->h + j] * (z[i * m->h + j] > 0 ? z[i * m->h + j] : 0);
            m->y[i * m->o + p] = s;
        }
    for (int i = 0; i < m->n; i++)
        for (int j = 0; j < m->h; j++) {
            double zj = z[i * m->h + j], gz = 0;
            for (int p = 0; p < m->o; p++) {
                double gy = m->r[i * m->o + p];
                m->gw2[p * m->h + j] += gy * (zj > 0 ? zj : 0);
                gz += gy * m->w2[p * m->h + j];
            }
            gz = zj > 0 ? gz : 0;
            m->gb1[j] += gz;
            for (int k = 0; k < m->d; k++) {
                m->gw1[j * m->d + k] += gz * m->x[i * m->d + k];
                m->gx[i * m->d + k] += gz * m->w1[j * m->d + k];
            }
        }
    free(z);
}

static double *draw(uint64_t *rng, size_t n, float **f)
{
    *f = tu_random_floats(rng, n, -1, 1);
    double *d = malloc(n * sizeof *d);
    for (size_t i = 0; i < n; i++)
        d[i] = (*f)[i];
    return d;
}

static void mlp_free(mlp *m)
{
    double *all[] = {m->x, m->w1, m->b1, m->w2, m->r, m->y, m->gx, m->gw1, m->gb1, m->gw2};
    for (int i = 0; i < 10; i++)
        free(all[i]);
}

/* Checks t's gradient against want (n values). */
static void check_grad(const char *what, clrt_tensor *t, const double *want, size_t n)
{
    clrt_tensor *g = clrt_tensor_grad(t);
    ck_assert_msg(g != NULL, "%s has no gradient", what);
    double e = rel_err(g, want, n);
    ck_assert_msg(e <= TOL, "%s: gradient error %.3g", what, e);
    clrt_tensor_release(g);
}

/* Releases the n tensors. */
static void release_all(int n, clrt_tensor **ts)
{
    for (int i = 0; i < n; i++)
        clrt_tensor_release(ts[i]);
}

/* The MLP as ops on leaves: matmul, transpose, add (a broadcast bias),
 * relu, mul, sum; every leaf's gradient against the reference. */
START_TEST(ops_graph_matches_reference)
{
    uint64_t rng = tu_seed();
    mlp m = {.n = 5, .d = 7, .h = 6, .o = 3};
    float *fx, *fw1, *fb1, *fw2, *fr;
    m.x = draw(&rng, 35, &fx), m.w1 = draw(&rng, 42, &fw1), m.b1 = draw(&rng, 6, &fb1);
    m.w2 = draw(&rng, 18, &fw2), m.r = draw(&rng, 15, &fr);
    mlp_ref(&m);
    int64_t sx[2] = {5, 7}, sw1[2] = {6, 7}, sb1[1] = {6}, sw2[2] = {3, 6}, sy[2] = {5, 3};
    clrt_tensor *t[12];
    clrt_tensor *x = t[0] = leaf(fx, 2, sx), *w1 = t[1] = leaf(fw1, 2, sw1);
    clrt_tensor *b1 = t[2] = leaf(fb1, 1, sb1), *w2 = t[3] = leaf(fw2, 2, sw2);
    clrt_tensor *r = t[4] = upload(fr, 2, sy);
    clrt_tensor *w1t = t[5] = TU_NONNULL(clrt_transpose(w1, 0, 1));
    clrt_tensor *xw = t[6] = TU_NONNULL(clrt_matmul(x, w1t));
    clrt_tensor *h = t[7] = TU_NONNULL(clrt_f_relu(TU_NONNULL(t[8] = clrt_add(xw, b1))));
    clrt_tensor *y = t[9] =
        TU_NONNULL(clrt_matmul(h, TU_NONNULL(t[10] = clrt_transpose(w2, 0, 1))));
    ck_assert(clrt_tensor_requires_grad(y) && !clrt_tensor_is_leaf(y) && clrt_tensor_is_leaf(x));
    ck_assert_double_le(rel_err(y, m.y, 15), TOL);
    clrt_tensor *yr = TU_NONNULL(clrt_mul(y, r)), *loss = t[11] = TU_NONNULL(clrt_sum(yr));
    clrt_tensor_release(yr); /* the graph keeps what it needs */
    TU_OK(clrt_backward(loss));
    check_grad("x", x, m.gx, 35);
    check_grad("w1", w1, m.gw1, 42);
    check_grad("b1", b1, m.gb1, 6);
    check_grad("w2", w2, m.gw2, 18);
    ck_assert_ptr_null(clrt_tensor_grad(r)); /* it does not require grad */
    /* the graph is freed: a second backward through it fails */
    ck_assert_int_eq(clrt_backward(loss), CLRT_EINVAL);
    tu_assert_error(CLRT_EINVAL, "already run backward", NULL);
    release_all(12, t);
    mlp_free(&m);
    free(fx), free(fw1), free(fb1), free(fw2), free(fr);
}
END_TEST

/* The same MLP as modules: Linear(d, h), ReLU, Linear(h, o, no bias
 * through a second Linear's weight), its parameters' gradients in the
 * tensors clrt_module_parameters lists, through clrt_backward. */
START_TEST(module_graph_matches_reference)
{
    uint64_t rng = tu_seed() + 1;
    mlp m = {.n = 4, .d = 5, .h = 6, .o = 3};
    clrt_module *mods[3] = {clrt_linear(5, 6), clrt_relu(), clrt_linear(6, 3)};
    clrt_module *net = TU_NONNULL(clrt_sequential(3, mods));
    clrt_tensor *p[4], *g[4];
    ck_assert_int_eq(clrt_module_parameters(net, NULL, p, g, 4), 4);
    float *fw = tu_read(p[0]), *fb = tu_read(p[1]), *fw2 = tu_read(p[2]), *fb2 = tu_read(p[3]);
    float *fx, *fr;
    m.x = draw(&rng, 20, &fx), m.r = draw(&rng, 12, &fr);
    m.w1 = malloc(30 * sizeof(double)), m.b1 = malloc(6 * sizeof(double));
    m.w2 = malloc(18 * sizeof(double));
    for (int i = 0; i < 30; i++)
        m.w1[i] = fw[i];
    for (int i = 0; i < 6; i++)
        m.b1[i] = fb[i];
    for (int i = 0; i < 18; i++)
        m.w2[i] = fw2[i];
    mlp_ref(&m);
    for (int i = 0; i < 12; i++) /* the second layer's bias */
        m.y[i] += fb2[i % 3];
    int64_t sx[2] = {4, 5}, sy[2] = {4, 3};
    clrt_tensor *x = upload(fx, 2, sx), *r = upload(fr, 2, sy);
    clrt_tensor *y = TU_NONNULL(clrt_module_forward(net, x));
    ck_assert(clrt_tensor_requires_grad(y));
    ck_assert_double_le(rel_err(y, m.y, 12), TOL);
    TU_OK(clrt_backward_with(y, r));
    check_grad("0.weight", p[0], m.gw1, 30);
    check_grad("0.bias", p[1], m.gb1, 6);
    check_grad("2.weight", p[2], m.gw2, 18);
    float *got = tu_read(g[0]);
    ck_assert_double_le(tu_rel_err(got, m.gw1, 30, 1e-6), TOL); /* the module's own tensor */
    free(got);
    ck_assert_ptr_null(clrt_tensor_grad(x)); /* x does not require grad */
    clrt_tensor *all[] = {x, r, y};
    release_all(3, all);
    clrt_module_free(net);
    mlp_free(&m);
    free(fx), free(fr), free(fw), free(fb), free(fw2), free(fb2);
}
END_TEST

/* A Linear called twice in one step, y = f(f(x)) and also f on a second
 * input: each call keeps its own output and saved input, and the weight
 * and bias get the sum of the three calls' gradients. */
START_TEST(layer_called_twice_sums_gradients)
{
    enum { N = 3, D = 4 };
    uint64_t rng = tu_seed() + 2;
    clrt_module *f = TU_NONNULL(clrt_linear(D, D));
    clrt_tensor *w = clrt_module_param(f, "weight"), *b = clrt_module_param(f, "bias");
    float *fw = tu_read(w), *fb = tu_read(b), *fx, *fx2, *fr, *fr2;
    double *x = draw(&rng, N * D, &fx), *x2 = draw(&rng, N * D, &fx2);
    double *r = draw(&rng, N * D, &fr), *r2 = draw(&rng, N * D, &fr2);
    /* reference: y1 = W x + b, y2 = W y1 + b, y3 = W x2 + b; loss =
     * sum(y2 r) + sum(y3 r2) */
    double y1[N * D], gy1[N * D] = {0}, gw[D * D] = {0}, gb[D] = {0};
    for (int i = 0; i < N; i++)
        for (int j = 0; j < D; j++) {
            double s = fb[j];
            for (int k = 0; k < D; k++)
                s += fw[j * D + k] * x[i * D + k];
            y1[i * D + j] = s;
        }
    for (int i = 0; i < N; i++)
        for (int j = 0; j < D; j++) {
            gb[j] += r[i * D + j] + r2[i * D + j];
            for (int k = 0; k < D; k++) {
                gw[j * D + k] += r[i * D + j] * y1[i * D + k] + r2[i * D + j] * x2[i * D + k];
                gy1[i * D + k] += r[i * D + j] * fw[j * D + k];
            }
        }
    for (int i = 0; i < N; i++)
        for (int j = 0; j < D; j++) {
            gb[j] += gy1[i * D + j];
            for (int k = 0; k < D; k++)
                gw[j * D + k] += gy1[i * D + j] * x[i * D + k];
        }
    int64_t s[2] = {N, D};
    clrt_tensor *xt = upload(fx, 2, s), *x2t = upload(fx2, 2, s), *rt = upload(fr, 2, s);
    clrt_tensor *r2t = upload(fr2, 2, s);
    clrt_tensor *a = TU_NONNULL(clrt_module_forward(f, xt));
    clrt_tensor *c = TU_NONNULL(clrt_module_forward(f, a));
    clrt_tensor *e = TU_NONNULL(clrt_module_forward(f, x2t));
    ck_assert_double_le(rel_err(a, y1, N * D), TOL); /* not overwritten by the later calls */
    clrt_tensor *t1 = TU_NONNULL(clrt_mul(c, rt)), *t2 = TU_NONNULL(clrt_mul(e, r2t));
    clrt_tensor *t3 = TU_NONNULL(clrt_add(t1, t2)), *loss = TU_NONNULL(clrt_sum(t3));
    TU_OK(clrt_module_zero_grad(f));
    TU_OK(clrt_backward(loss));
    check_grad("weight", w, gw, D * D);
    check_grad("bias", b, gb, D);
    clrt_tensor *all[] = {xt, x2t, rt, r2t, a, c, e, t1, t2, t3, loss};
    release_all(11, all);
    clrt_module_free(f);
    free(fw), free(fb), free(fx), free(fx2), free(fr), free(fr2);
    free(x), free(x2), free(r), free(r2);
}
END_TEST

/* Gradients accumulate over backward calls, as PyTorch's .grad. */
START_TEST(backward_accumulates)
{
    float v[3] = {1, -2, 3};
    int64_t s[1] = {3};
    clrt_tensor *x = leaf(v, 1, s);
    for (int round = 0; round < 2; round++) {
        clrt_tensor *sq = TU_NONNULL(clrt_mul(x, x)), *l = TU_NONNULL(clrt_sum(sq));
        TU_OK(clrt_backward(l));
        clrt_tensor_release(sq);
        clrt_tensor_release(l);
    }
    double want[3] = {4, -8, 12}; /* 2 x, twice */
    check_grad("x", x, want, 3);
    TU_OK(clrt_tensor_zero_grad(x));
    double zero[3] = {0, 0, 0};
    clrt_tensor *g = TU_NONNULL(clrt_tensor_grad(x));
    float *h = tu_read(g);
    ck_assert_double_le(tu_rel_err(h, zero, 3, 1), 0);
    free(h);
    clrt_tensor_release(g);
    clrt_tensor_release(x);
}
END_TEST

/* What autograd refuses, and says so. */
START_TEST(errors_are_clear)
{
    float v[6] = {1, 2, 3, 4, 5, 6};
    int64_t s[2] = {2, 3};
    clrt_tensor *x = leaf(v, 2, s), *c = upload(v, 2, s);
    /* in-place and out= forms on a tensor that requires grad */
    ck_assert_int_eq(clrt_add_(x, c), CLRT_EINVAL);
    tu_assert_error(CLRT_EINVAL, "clrt_add_", "requires grad", "clrt_set_grad_enabled", NULL);
    clrt_tensor *out = TU_NONNULL(clrt_empty(tu_device(), CLRT_F32, 2, s));
    ck_assert_int_eq(clrt_mul_out(out, x, c), CLRT_EINVAL);
    ck_assert_int_eq(clrt_set_grad_enabled(0), 1); /* allowed with grad mode off */
    TU_OK(clrt_mul_out(out, x, c));
    clrt_tensor *unrecorded = TU_NONNULL(clrt_mul(x, c));
    ck_assert(!clrt_tensor_requires_grad(unrecorded));
    ck_assert_int_eq(clrt_set_grad_enabled(1), 0);
    /* a saved tensor written in place before the backward */
    clrt_tensor *y = TU_NONNULL(clrt_mul(x, c)), *l = TU_NONNULL(clrt_sum(y));
    TU_OK(clrt_mul_scalar_(c, 2.0));
    ck_assert_int_eq(clrt_backward(l), CLRT_EINVAL);
    tu_assert_error(CLRT_EINVAL, "clrt_mul", "written in place", NULL);
    /* a loss of several elements; a tensor that requires no grad */
    ck_assert_int_eq(clrt_backward(y), CLRT_ESHAPE);
    tu_assert_error(CLRT_ESHAPE, "one element", "[2, 3]", "clrt_backward_with", NULL);
    clrt_tensor *cs = TU_NONNULL(clrt_sum(c));
    ck_assert_int_eq(clrt_backward(cs), CLRT_EINVAL);
    tu_assert_error(CLRT_EINVAL, "does not require grad", NULL);
    /* only leaves are set; only float32 requires grad */
    ck_assert_int_eq(clrt_requires_grad_(y, 0), CLRT_EINVAL);
    clrt_tensor *ints = TU_NONNULL(clrt_zeros(tu_device(), CLRT_I32, 2, s));
    ck_assert_int_eq(clrt_requires_grad_(ints, 1), CLRT_EDTYPE);
    /* detach: a leaf over the same storage, without history */
    clrt_tensor *d = TU_NONNULL(clrt_detach(y));
    ck_assert(clrt_tensor_is_leaf(d) && !clrt_tensor_requires_grad(d));
    clrt_tensor *all[] = {x, c, out, unrecorded, y, l, cs, ints, d};
    release_all(9, all);
}
END_TEST

/* ResNet-18 through clrt_backward gives the explicit path's gradients
 * (the module's node runs the same fused backward). At CLRT_TEST_SIZE=small
 * (simulators, where ResNet-18 takes hours) LeNet. */
START_TEST(resnet18_autograd_equals_explicit)
{
    int64_t chw[3] = {1, 28, 28};
    clrt_module *net =
        TU_NONNULL(tu_small() ? clrt_lenet(chw, 10) : clrt_resnet18(3, 10, CLRT_RESNET_SMALL));
    int64_t xs[4] = {2, tu_small() ? 1 : 3, tu_small() ? 28 : 8, tu_small() ? 28 : 8};
    int64_t gs[2] = {2, 10};
    clrt_tensor *x = TU_NONNULL(clrt_randn(tu_device(), 4, xs, tu_seed()));
    clrt_tensor *g = TU_NONNULL(clrt_randn(tu_device(), 2, gs, tu_seed() + 1));
    int n = clrt_module_parameters(net, NULL, NULL, NULL, 0);
    clrt_tensor **grads = calloc((size_t)n, sizeof *grads);
    ck_assert_int_eq(clrt_module_parameters(net, NULL, NULL, grads, n), n);
    float **explicit_g = calloc((size_t)n, sizeof *explicit_g);
    clrt_set_grad_enabled(0);
    clrt_tensor *y = TU_NONNULL(clrt_module_forward(net, x));
    clrt_set_grad_enabled(1);
    TU_OK(clrt_module_zero_grad(net));
    TU_OK(clrt_module_backward_params(net, g));
    for (int i = 0; i < n; i++)
        explicit_g[i] = tu_read(grads[i]);
    clrt_tensor_release(y);
    /* BatchNorm's running statistics moved once more in the explicit run;
     * training-mode gradients do not read them */
    y = TU_NONNULL(clrt_module_forward(net, x));
    TU_OK(clrt_module_zero_grad(net));
    TU_OK(clrt_backward_with(y, g));
    for (int i = 0; i < n; i++) {
        float *a = tu_read(grads[i]);
        size_t k = (size_t)clrt_tensor_numel(grads[i]);
        ck_assert_msg(memcmp(a, explicit_g[i], k * sizeof *a) == 0, "parameter %d differs", i);
        free(a);
        free(explicit_g[i]);
    }
    free(explicit_g);
    free(grads);
    clrt_tensor_release(y);
    clrt_tensor_release(x);
    clrt_tensor_release(g);
    clrt_module_free(net);
}
END_TEST

/* Once warm, a training step through clrt_backward (ops and a module,
 * SGD) makes no device buffer: its tensors reuse the cached ones. */
START_TEST(warm_step_allocates_nothing)
{
    clrt_module *lin = TU_NONNULL(clrt_linear(6, 4));
    clrt_tensor *p[2], *g[2];
    ck_assert_int_eq(clrt_module_parameters(lin, NULL, p, g, 2), 2);
    clrt_optimizer *opt = TU_NONNULL(clrt_sgd(2, p, g, 0.01, 0.9, 0));
    int64_t xs[2] = {5, 6};
    clrt_tensor *x = TU_NONNULL(clrt_randn(tu_device(), 2, xs, tu_seed()));
    uint64_t made = 0;
    for (int step = 0; step < 6; step++) {
        if (step == 3)
            made = clrt_device_buffers_made(tu_device());
        clrt_tensor *y = TU_NONNULL(clrt_module_forward(lin, x));
        clrt_tensor *t = TU_NONNULL(clrt_f_tanh(y)), *sq = TU_NONNULL(clrt_mul(t, t));
        clrt_tensor *l = TU_NONNULL(clrt_mean(sq));
        TU_OK(clrt_module_zero_grad(lin));
        TU_OK(clrt_backward(l));
        TU_OK(clrt_optimizer_step(opt));
        clrt_tensor *all[] = {y, t, sq, l};
        release_all(4, all);
    }
    TU_OK(clrt_device_synchronize(tu_device()));
    ck_assert_msg(clrt_device_buffers_made(tu_device()) == made,
                  "three warm steps made %llu device buffers",
                  (unsigned long long)(clrt_device_buffers_made(tu_device()) - made));
    ck_assert_uint_gt(clrt_device_cached_bytes(tu_device()), 0);
    TU_OK(clrt_device_empty_cache(tu_device()));
    ck_assert_uint_eq(clrt_device_cached_bytes(tu_device()), 0);
    clrt_tensor_release(x);
    clrt_optimizer_free(opt);
    clrt_module_free(lin);
}
END_TEST

/* A layer whose second call takes the first call's output (ff(gelu(ff(x))))
 * keeps that input for its explicit backward, which leads back to the
 * first call's node: once backward ran and the caller let go of
 * everything, the layer and its weight must go (a node that kept its
 * module counted would make a cycle, found by LeakSanitizer in the
 * attention program). The weight's reference count shows it. */
START_TEST(shared_layer_freed_after_backward)
{
    enum { N = 2, D = 3 };
    uint64_t rng = tu_seed() + 7;
    clrt_module *f = TU_NONNULL(clrt_linear(D, D));
    clrt_tensor *w = clrt_module_param(f, "weight");
    clrt_tensor_retain(w);
    float *fx = tu_random_floats(&rng, N * D, -1, 1);
    int64_t s[2] = {N, D};
    clrt_tensor *x = upload(fx, 2, s);
    clrt_tensor *a = TU_NONNULL(clrt_module_forward(f, x)), *g = TU_NONNULL(clrt_f_gelu(a));
    clrt_tensor *c = TU_NONNULL(clrt_module_forward(f, g)), *loss = TU_NONNULL(clrt_sum(c));
    TU_OK(clrt_backward(loss));
    clrt_tensor *all[] = {x, a, g, c, loss};
    for (int i = 0; i < 5; i++)
        clrt_tensor_release(all[i]);
    clrt_module_free(f);
    ck_assert_int_eq(clrt_tensor_refcount(w), 1); /* ours alone: the layer is gone */
    clrt_tensor_release(w);
    free(fx);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("autograd");
    TCase *tc = tu_tcase("autograd");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, ops_graph_matches_reference);
    tcase_add_test(tc, module_graph_matches_reference);
    tcase_add_test(tc, layer_called_twice_sums_gradients);
    tcase_add_test(tc, shared_layer_freed_after_backward);
    tcase_add_test(tc, backward_accumulates);
    tcase_add_test(tc, errors_are_clear);
    tcase_add_test(tc, resnet18_autograd_equals_explicit);
    tcase_add_test(tc, warm_step_allocates_nothing);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
