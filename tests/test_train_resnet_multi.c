/* ResNet-18 (small stem) trained data parallel on two devices with PyTorch
 * DDP's semantics: each replica's BatchNorm normalises over its own shard
 * of every batch, and after each step every replica holds the same
 * parameters, buffers (running statistics) and counters
 * (num_batches_tracked), replica 0's. Checked after each of 20 steps. */
#include "testutil.h"

#include "runtime/train/trainer_internal.h"
#include <string.h>

#define BATCH 16
#define STEPS TU_SIZED(20, 2)

/* Every float of m's state (parameters, then buffers), in state_dict
 * order, and its counters, read from its device. */
typedef struct {
    float *values;
    size_t n;
    int64_t counters[64];
    int n_counters;
} snapshot;

static snapshot take(clrt_module *m)
{
    snapshot s = {0};
    clrt_tensor **p = NULL, **b = NULL;
    int64_t **c = NULL;
    int np = clrt__module_param_arrays(m, &p, NULL), nb = clrt__module_buffer_arrays(m, &b);
    s.n_counters = clrt__module_counter_arrays(m, &c);
    ck_assert(np > 0 && nb > 0 && s.n_counters > 0 && s.n_counters <= 64);
    size_t total = (size_t)(clrt_module_param_count(m));
    for (int i = 0; i < nb; i++)
        total += (size_t)clrt_tensor_numel(b[i]);
    s.values = malloc(total * sizeof *s.values);
    for (int i = 0; i < np + nb; i++) {
        clrt_tensor *t = i < np ? p[i] : b[i - np];
        TU_OK(clrt_to_host(t, s.values + s.n, clrt_tensor_nbytes(t)));
        s.n += (size_t)clrt_tensor_numel(t);
    }
    for (int i = 0; i < s.n_counters; i++)
        s.counters[i] = *c[i];
    free(p), free(b), free(c);
    return s;
}

/* Fashion-MNIST (on every test host), 28x28: the small stem takes it. */
static clrt_dataset *fashion(int64_t n)
{
    clrt_dataset *ds = TU_NONNULL(clrt_dataset_fashion_mnist(NULL, 1));
    TU_OK(clrt_dataset_limit(ds, n));
    return ds;
}

typedef struct {
    clrt_trainer *t;
    int steps_seen, checked;
} watch;

/* After each enqueued step (the progress callback): both replicas'
 * state, equal bit for bit on one driver, to float rounding across two. */
static void check_replicas(void *ctx, clrt_phase phase, int epoch, int64_t done, int64_t total)
{
    watch *w = ctx;
    (void)epoch, (void)done, (void)total;
    if (phase != CLRT_PHASE_TRAIN)
        return;
    w->steps_seen++;
    snapshot a = take(w->t->rep[0].model), b = take(w->t->rep[1].model);
    ck_assert_uint_eq(a.n, b.n);
    double d = tu_rel_diff(b.values, a.values, a.n);
    clrt_device *d0 = w->t->rep[0].model->device, *d1 = w->t->rep[1].model->device;
    ck_assert_msg(d <= (tu_same_platform(d0, d1) ? 0 : 1e-6),
                  "step %d: the replicas' parameters and buffers differ by %.3g", w->steps_seen, d);
    for (int i = 0; i < a.n_counters; i++)
        ck_assert_int_eq(a.counters[i], b.counters[i]);
    ck_assert_int_eq(a.counters[0], w->steps_seen); /* one batch tracked per step */
    w->checked++;
    free(a.values), free(b.values);
}

START_TEST(replicas_hold_the_same_state_every_step)
{
    clrt_device *pair[2] = {tu_device_pair(0), tu_device_pair(1)};
    TU_OK(clrt_set_default_device(pair[0]));
    clrt_module *m = TU_NONNULL(clrt_resnet18(1, 10, CLRT_RESNET_SMALL));
    TU_OK(clrt_module_init(m, tu_seed()));
    clrt_tensor *params[256], *grads[256];
    int n = clrt_module_parameters(m, NULL, params, grads, 256);
    clrt_optimizer *opt = TU_NONNULL(clrt_sgd(n, params, grads, 0.05, 0.9, 5e-4));
    clrt_dataset *ds = fashion(STEPS * BATCH);
    clrt_train_config cfg = clrt_train_defaults();
    watch w = {0};
    cfg.epochs = 1, cfg.batch_size = BATCH, cfg.seed = tu_seed(), cfg.augment = 4;
    cfg.devices = pair, cfg.n_devices = 2, cfg.evaluate = 0;
    cfg.progress = check_replicas, cfg.ctx = &w;
    w.t = TU_NONNULL(clrt_trainer_new(m, opt, ds, NULL, &cfg));
    clrt_epoch_stats s;
    TU_OK(clrt_trainer_epoch(w.t, &s));
    ck_assert_int_eq(w.checked, STEPS);
    clrt_trainer_free(w.t);
    clrt_dataset_free(ds);
    clrt_optimizer_free(opt);
    clrt_module_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("train_resnet_multi");
    TCase *tc = tu_tcase("data_parallel");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, replicas_hold_the_same_state_every_step);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
