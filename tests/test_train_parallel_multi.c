/* Data-parallel training on two devices (tu_device_pair; PoCL's two CPU
 * devices by default) against the same training on one: the same seed and
 * global batches give the same parameters after 20 steps (the last batch
 * with one sample, so one device gets none), and the same losses. A cloned
 * model computes what its original does. Bad device lists are refused
 * before anything runs. */
#include "testutil.h"

#include <float.h>
#include <math.h>
#include <string.h>

/* Smaller on slow devices (Oclgrind's pass): CLRT_TEST_SIZE=small. */
#define BATCH TU_SIZED(256, 32)
#define STEPS TU_SIZED(20, 4)
#define MAX_STEPS 20
#define MAX_PARAMS 16

static clrt_dataset *fashion(int64_t n)
{
    clrt_dataset *ds = TU_NONNULL(clrt_dataset_fashion_mnist(NULL, 1));
    TU_OK(clrt_dataset_limit(ds, n));
    return ds;
}

/* Conv, pool, linear layers: each kind of gradient the sum must carry. */
static clrt_module *small_cnn(clrt_device *d, uint64_t seed)
{
    TU_OK(clrt_set_default_device(d));
    clrt_module *mods[7] = {
        clrt_conv2d(1, 4, 5, 1, 2), clrt_relu(), clrt_maxpool2d(2, 2), clrt_flatten(),
        clrt_linear(784, 32),       clrt_relu(), clrt_linear(32, 10)};
    clrt_module *m = TU_NONNULL(clrt_sequential(7, mods));
    TU_OK(clrt_module_init(m, seed));
    return m;
}

/* lr 0.02: at 0.05 this model is still on its starting plateau after 20
 * steps, where the rounding of another summation order grows: over 8
 * seeds the largest difference was 2.4e-4 at lr 0.05 and 2e-7 at 0.02,
 * where only the rounding is left. But not always: over 40 seeds at 0.02
 * the median was 1e-7 and three seeds reached 5.7e-5, 1.3e-4 and 1.7e-4
 * (CI's seed 1882782139688472, parameter 3), in the convolution's and
 * first linear layer's parameters: the rounding tipped a ReLU or a
 * max-pooling choice between near-equal values, and the gradient took
 * another path from then on. PARAM_TOL sits above those and far below
 * what a wrong sum gives (one device's gradient taken at half weight:
 * 3.6e-2 after 20 steps). */
#define PARAM_TOL 1e-3
static clrt_optimizer *sgd_for(clrt_module *m)
{
    clrt_tensor *params[MAX_PARAMS], *grads[MAX_PARAMS];
    int n = clrt_module_parameters(m, NULL, params, grads, MAX_PARAMS);
    ck_assert_int_gt(n, 0);
    return TU_NONNULL(clrt_sgd(n, params, grads, 0.02, 0.9, 0));
}

typedef struct {
    int n;
    float *values[MAX_PARAMS];
    int64_t numel[MAX_PARAMS];
    double loss;
    float step_losses[MAX_STEPS];
} trained;

/* Trains a fresh model for one epoch of STEPS batches on `n_dev` devices
 * (devs[0] holds the model) and keeps its parameters. */
static trained train_on(clrt_device **devs, int n_dev, uint64_t seed, const clrt_dataset *ds)
{
    trained r = {0};
    clrt_module *m = small_cnn(devs[0], seed);
    clrt_optimizer *opt = sgd_for(m);
    clrt_train_config cfg = clrt_train_defaults();
    cfg.epochs = 1, cfg.batch_size = BATCH, cfg.seed = seed, cfg.step_losses = 1;
    cfg.devices = devs, cfg.n_devices = n_dev;
    clrt_epoch_stats s;
    clrt_trainer *t = TU_NONNULL(clrt_trainer_new(m, opt, ds, NULL, &cfg));
    TU_OK(clrt_trainer_epoch(t, &s));
    ck_assert_int_eq(s.steps, STEPS);
    memcpy(r.step_losses, s.step_losses, sizeof(float) * STEPS); /* the trainer's until freed */
    r.loss = s.train_loss;
    clrt_trainer_free(t);
    clrt_tensor *params[MAX_PARAMS];
    r.n = clrt_module_parameters(m, NULL, params, NULL, MAX_PARAMS);
    for (int i = 0; i < r.n; i++) {
        r.values[i] = tu_read(params[i]);
        r.numel[i] = clrt_tensor_numel(params[i]);
    }
    ck_assert_int_eq(clrt_optimizer_steps(opt), STEPS);
    clrt_optimizer_free(opt);
    clrt_module_free(m);
    return r;
}

START_TEST(two_devices_train_as_one)
{
    uint64_t seed = tu_seed();
    clrt_device *pair[2] = {tu_device_pair(0), tu_device_pair(1)};
    clrt_dataset *ds = fashion((STEPS - 1) * BATCH + 1); /* the last batch: one sample */
    trained one = train_on(pair, 1, seed, ds);
    trained two = train_on(pair, 2, seed, ds);
    ck_assert_int_eq(one.n, two.n);
    for (int i = 0; i < one.n; i++) {
        double d = tu_rel_diff(two.values[i], one.values[i], (size_t)one.numel[i]);
        ck_assert_msg(d <= PARAM_TOL, "parameter %d after %d steps: two devices differ by %.3g", i,
                      STEPS, d);
    }
    ck_assert_msg(fabs(two.loss - one.loss) <= 1e-4 * one.loss, "epoch loss %.7g vs %.7g", two.loss,
                  one.loss);
    /* A step's loss is the difference of running float32 sums over the
     * epoch, so it is only as exact as the sum's rounding over that step's
     * samples (a one-sample last step shows the whole sum's rounding). */
    double running = 0;
    for (int s = 0; s < STEPS; s++) {
        double n = s < STEPS - 1 ? BATCH : 1, want = one.step_losses[s];
        running += want * n;
        double tol = 1e-4 * fabs(want) + 4 * FLT_EPSILON * running / n;
        ck_assert_msg(fabs(two.step_losses[s] - want) <= tol, "step %d loss %.7g vs %.7g", s,
                      (double)two.step_losses[s], want);
    }
    for (int i = 0; i < one.n; i++)
        free(one.values[i]), free(two.values[i]);
    clrt_dataset_free(ds);
}
END_TEST

/* A clone on the other device: equal parameters, zero gradients, the same
 * output, and it owns its parameters (changing it leaves the original). */
START_TEST(clone_computes_what_the_original_does)
{
    clrt_device *a = tu_device_pair(0), *b = tu_device_pair(1);
    clrt_module *m = small_cnn(a, tu_seed());
    clrt_module *c = TU_NONNULL(clrt_module_clone(m, b));
    ck_assert_ptr_eq(clrt_module_device(c), b);
    ck_assert_int_eq(clrt_module_param_count(c), clrt_module_param_count(m));
    uint64_t rng = tu_seed();
    int64_t shape[4] = {3, 1, 28, 28};
    float *hx = tu_random_floats(&rng, 3 * 784, -1, 1);
    clrt_tensor *xa = TU_NONNULL(clrt_from_host(a, CLRT_F32, 4, shape, hx));
    clrt_tensor *xb = TU_NONNULL(clrt_from_host(b, CLRT_F32, 4, shape, hx));
    clrt_tensor *ya = TU_NONNULL(clrt_module_forward(m, xa));
    clrt_tensor *yb = TU_NONNULL(clrt_module_forward(c, xb));
    float *ha = tu_read(ya), *hb = tu_read(yb);
    ck_assert_double_le(tu_rel_diff(hb, ha, 30), tu_same_platform(a, b) ? 0 : 1e-5);
    float *g = tu_read(TU_NONNULL(clrt_module_grad(c, "0.weight")));
    for (int i = 0; i < 100; i++)
        ck_assert_float_eq(g[i], 0);
    clrt_set_grad_enabled(0); /* a parameter written in place, as under torch.no_grad */
    TU_OK(clrt_add_scalar_(TU_NONNULL(clrt_module_param(c, "0.weight")), 1.0));
    clrt_set_grad_enabled(1);
    float *w_orig = tu_read(clrt_module_param(m, "0.weight"));
    float *w_clone = tu_read(clrt_module_param(c, "0.weight"));
    ck_assert_float_eq_tol(w_clone[0], w_orig[0] + 1.0f, 1e-6f);
    free(hx), free(ha), free(hb), free(g), free(w_orig), free(w_clone);
    clrt_tensor_release(xa), clrt_tensor_release(xb);
    clrt_tensor_release(ya), clrt_tensor_release(yb);
    clrt_module_free(c);
    clrt_module_free(m);
}
END_TEST

/* Each bad list fails clrt_trainer_new with CLRT_EINVAL and a message
 * naming the problem; the model takes no step. */
static void refuse(clrt_device **devs, int n, int batch, clrt_device *device, const char *needle)
{
    clrt_dataset *ds = fashion(64);
    clrt_module *m = small_cnn(tu_device_pair(0), 1);
    clrt_optimizer *opt = sgd_for(m);
    clrt_train_config cfg = clrt_train_defaults();
    cfg.batch_size = batch, cfg.devices = devs, cfg.n_devices = n, cfg.device = device;
    ck_assert_ptr_null(clrt_trainer_new(m, opt, ds, NULL, &cfg));
    tu_assert_error(CLRT_EINVAL, "clrt_trainer_new", needle, NULL);
    ck_assert_int_eq(clrt_optimizer_steps(opt), 0);
    clrt_optimizer_free(opt);
    clrt_module_free(m);
    clrt_dataset_free(ds);
}

START_TEST(bad_device_lists_are_refused)
{
    clrt_device *a = tu_device_pair(0), *b = tu_device_pair(1);
    clrt_device *twice[2] = {a, a}, *pair[2] = {a, b}, *with_null[2] = {a, NULL};
    refuse(pair, 0, 32, NULL, "lists 0 devices");
    refuse(twice, 2, 32, NULL, "listed twice");
    refuse(pair, 2, 1, NULL, "2 devices but a batch of 1");
    refuse(with_null, 2, 32, NULL, "cfg.devices[1] is NULL");
    refuse(pair, 2, 32, b, "cfg.devices[0]");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("train_parallel");
    TCase *tc = tu_tcase("two devices");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, two_devices_train_as_one);
    tcase_add_test(tc, clone_computes_what_the_original_does);
    tcase_add_test(tc, bad_device_lists_are_refused);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
