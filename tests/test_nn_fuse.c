/* Sequential's fused paths (runtime/nn/fuse.c: a ReLU folded into the
 * layer before it in the forward pass and into the layer after it in the
 * backward pass) against the same modules run one by one, unfused, on the
 * same weights and inputs: outputs, input gradients and every parameter
 * gradient must be identical (the fused kernels do the same float
 * arithmetic). The unfused run comes between two fused ones on the same
 * model, so switching between the two is checked as well. The float64
 * references of the layers are in test_nn.c and test_nn_lenet.c. */
#include "testutil.h"

#include <string.h>

#define MAX_P 32

typedef struct {
    float *y, *gx, *grads[MAX_P];
    size_t ny, ngx, ng[MAX_P];
    int np;
} run_result;

static void result_free(run_result *r)
{
    free(r->y), free(r->gx);
    for (int p = 0; p < r->np; p++)
        free(r->grads[p]);
}

static void read_grads(clrt_module *m, run_result *r)
{
    clrt_tensor *params[MAX_P], *grads[MAX_P];
    r->np = clrt_module_parameters(m, NULL, params, grads, MAX_P);
    ck_assert_int_ge(r->np, 0);
    for (int p = 0; p < r->np; p++) {
        r->grads[p] = tu_read(grads[p]);
        r->ng[p] = (size_t)clrt_tensor_numel(grads[p]);
    }
}

static void read_outputs(run_result *r, clrt_tensor *y, clrt_tensor *gx)
{
    r->y = tu_read(y);
    r->ny = (size_t)clrt_tensor_numel(y);
    r->gx = gx ? tu_read(gx) : NULL;
    r->ngx = gx ? (size_t)clrt_tensor_numel(gx) : 0;
}

/* The Sequential's own forward and backward (fused where it can). With
 * want_gx the input gradient too, else only the parameters' (as the
 * trainer asks). */
static run_result run_fused(clrt_module *m, clrt_tensor *x, clrt_tensor *g, int want_gx)
{
    run_result r = {0};
    TU_OK(clrt_module_zero_grad(m));
    clrt_tensor *y = TU_NONNULL(clrt_module_forward(m, x)), *gx = NULL;
    if (want_gx)
        gx = TU_NONNULL(clrt_module_backward(m, g));
    else
        TU_OK(clrt_module_backward_params(m, g));
    read_outputs(&r, y, gx);
    read_grads(m, &r);
    clrt_tensor_release(y), clrt_tensor_release(gx);
    return r;
}

/* The children one by one through the public module calls: nothing fused. */
static run_result run_unfused(clrt_module *m, clrt_tensor *x, clrt_tensor *g)
{
    run_result r = {0};
    int n = clrt_module_num_children(m);
    clrt_tensor *act[MAX_P + 1] = {x};
    ck_assert_int_le(n, MAX_P);
    TU_OK(clrt_module_zero_grad(m));
    clrt_tensor_retain(x);
    for (int i = 0; i < n; i++)
        act[i + 1] = TU_NONNULL(clrt_module_forward(clrt_module_child(m, i), act[i]));
    clrt_tensor *cur = g;
    clrt_tensor_retain(cur);
    for (int i = n - 1; i >= 0; i--) {
        clrt_tensor *next = TU_NONNULL(clrt_module_backward(clrt_module_child(m, i), cur));
        clrt_tensor_release(cur);
        cur = next;
    }
    read_outputs(&r, act[n], cur);
    read_grads(m, &r);
    clrt_tensor_release(cur);
    for (int i = 0; i <= n; i++)
        clrt_tensor_release(act[i]);
    return r;
}

static void assert_same(const char *what, const float *a, const float *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(memcmp(&a[i], &b[i], sizeof *a) == 0, "%s[%zu]: fused %.9g, unfused %.9g",
                      what, i, (double)a[i], (double)b[i]);
}

static void assert_results_equal(const run_result *f, const run_result *u, int with_gx)
{
    ck_assert(f->ny == u->ny && f->np == u->np);
    assert_same("output", f->y, u->y, f->ny);
    if (with_gx) {
        ck_assert(f->ngx == u->ngx);
        assert_same("input gradient", f->gx, u->gx, f->ngx);
    }
    for (int p = 0; p < f->np; p++) {
        char what[32];
        snprintf(what, sizeof what, "parameter %d gradient", p);
        assert_same(what, f->grads[p], u->grads[p], f->ng[p]);
    }
}

/* Fused, unfused, fused again, and the trainer's parameters-only backward,
 * on input [shape] uniform in [-1, 1) and a random output gradient. */
static void check_model(clrt_module *m, int ndim, const int64_t *shape, uint64_t seed)
{
    uint64_t rng = seed;
    int64_t numel = 1;
    for (int d = 0; d < ndim; d++)
        numel *= shape[d];
    float *hx = tu_random_floats(&rng, (size_t)numel, -1, 1);
    clrt_tensor *x = TU_NONNULL(clrt_from_host(tu_device(), CLRT_F32, ndim, shape, hx));
    TU_OK(clrt_module_init(m, seed));
    clrt_tensor *y = TU_NONNULL(clrt_module_forward(m, x));
    float *hg = tu_random_floats(&rng, (size_t)clrt_tensor_numel(y), -1, 1);
    clrt_tensor *g = TU_NONNULL(
        clrt_from_host(tu_device(), CLRT_F32, clrt_tensor_ndim(y), clrt_tensor_shape(y), hg));
    clrt_tensor_release(y);

    run_result f1 = run_fused(m, x, g, 1), u = run_unfused(m, x, g);
    run_result f2 = run_fused(m, x, g, 1), p = run_fused(m, x, g, 0);
    assert_results_equal(&f1, &u, 1);
    assert_results_equal(&f2, &u, 1);
    assert_results_equal(&p, &u, 0);
    /* Evaluation mode keeps nothing for backward but fuses the same way. */
    clrt_module_train(m, 0);
    clrt_tensor *ye = TU_NONNULL(clrt_module_forward(m, x));
    float *hye = tu_read(ye);
    assert_same("evaluation output", hye, u.y, u.ny);
    ck_assert_ptr_null(clrt_module_backward(m, g));
    ck_assert_int_eq(clrt_last_status(), CLRT_ESTATE);
    clrt_module_train(m, 1);

    free(hye), free(hx), free(hg);
    result_free(&f1), result_free(&u), result_free(&f2), result_free(&p);
    clrt_tensor_release(ye), clrt_tensor_release(x), clrt_tensor_release(g);
    clrt_module_free(m);
}

START_TEST(lenet_fused_equals_unfused)
{
    const int64_t chw[3] = {1, 28, 28}, shape[4] = {3, 1, 28, 28};
    check_model(TU_NONNULL(clrt_lenet(chw, 10)), 4, shape, tu_seed() + 1);
}
END_TEST

START_TEST(seed_cnn_fused_equals_unfused)
{
    const int64_t shape[4] = {3, 3, 32, 32};
    check_model(TU_NONNULL(clrt_seed_cnn(10)), 4, shape, tu_seed() + 2);
}
END_TEST

/* Edge cases: a ReLU first (its input gradient is the network's), two
 * ReLUs in a row, a Sigmoid and an average pool (neither fuses), a ReLU
 * last. */
START_TEST(odd_orders_fused_equals_unfused)
{
    clrt_module *a[] = {clrt_relu(),    clrt_conv2d(2, 3, 3, 1, 1), clrt_relu(),
                        clrt_relu(),    clrt_avgpool2d(2, 2),       clrt_conv2d(3, 4, 3, 1, 0),
                        clrt_sigmoid(), clrt_maxpool2d(2, 2),       clrt_flatten(),
                        clrt_relu(),    clrt_linear(4, 5),          clrt_relu()};
    const int64_t shape[4] = {2, 2, 9, 9};
    check_model(TU_NONNULL(clrt_sequential(12, a)), 4, shape, tu_seed() + 3);
}
END_TEST

static Suite *fuse_suite(void)
{
    Suite *s = suite_create("nn_fuse");
    TCase *tc = tu_tcase("fuse");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, lenet_fused_equals_unfused);
    tcase_add_test(tc, seed_cnn_fused_equals_unfused);
    tcase_add_test(tc, odd_orders_fused_equals_unfused);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return tu_run(fuse_suite()); }
