/* The threading contract (clrt/device.h): two threads on one device and two
 * threads on two devices, each with its own tensors, get the values they
 * would get alone. Each thread adds 1 to its own scalar many times (the
 * exact count is the reference), then trains its own small CNN, whose
 * parameters must match the same training run alone on that device: a
 * kernel argument or scratch buffer shared across threads without a lock
 * shows as another thread's update in this one's values. */
#include "testutil.h"

#include <math.h>
#include <pthread.h>
#include <string.h>

#define BATCH 8
#define CLASSES 10
#define SIDE 12

typedef struct {
    clrt_device *dev;
    uint64_t seed;
    int adds;
    double sum;    /* the scalar after `adds` additions of 1 */
    float *params; /* the trained parameters, flattened (malloc'ed) */
    int64_t n_params;
    clrt_status status; /* CLRT_OK, or the first failure */
    char error[512];
} job;

static void job_fail(job *j, clrt_status st)
{
    if (j->status == CLRT_OK) {
        j->status = st;
        snprintf(j->error, sizeof j->error, "%s", clrt_last_error());
    }
}

static void run_adds(job *j)
{
    int64_t one = 1;
    clrt_tensor *t = clrt_zeros(j->dev, CLRT_F32, 1, &one);
    clrt_status st = t ? CLRT_OK : clrt_last_status();
    for (int i = 0; i < j->adds && st == CLRT_OK; i++)
        st = clrt_add_scalar_(t, 1.0);
    if (st == CLRT_OK)
        st = clrt_item(t, &j->sum);
    if (st != CLRT_OK)
        job_fail(j, st);
    clrt_tensor_release(t);
}

/* Conv (workspace, conv kernels), pool, GEMM (linear), loss (workspace),
 * SGD: one of each op family a training step uses. */
static clrt_module *small_cnn(clrt_device *d)
{
    clrt_module *mods[5] = {clrt_conv2d(1, 4, 3, 1, 1), clrt_relu(), clrt_maxpool2d(2, 2),
                            clrt_flatten(), clrt_linear(4 * (SIDE / 2) * (SIDE / 2), CLASSES)};
    clrt_module *m = clrt_sequential(5, mods);
    if (m && (clrt_module_init(m, 7) != CLRT_OK || clrt_module_to(m, d) != CLRT_OK)) {
        clrt_module_free(m);
        return NULL;
    }
    return m;
}

static clrt_status train_steps(clrt_module *m, clrt_optimizer *opt, clrt_tensor *x, clrt_tensor *y,
                               clrt_tensor *grad, int steps)
{
    clrt_status st = CLRT_OK;
    for (int s = 0; s < steps && st == CLRT_OK; s++) {
        clrt_tensor *logits = clrt_module_forward(m, x);
        st = logits ? clrt_cross_entropy(logits, y, NULL, grad, NULL) : clrt_last_status();
        if (st == CLRT_OK)
            st = clrt_module_zero_grad(m);
        if (st == CLRT_OK)
            st = clrt_module_backward_params(m, grad);
        if (st == CLRT_OK)
            st = clrt_optimizer_step(opt);
        clrt_tensor_release(logits);
    }
    return st;
}

/* The model's parameters, flattened into j->params. */
static clrt_status read_params(job *j, clrt_module *m)
{
    clrt_tensor *p[8];
    int n = clrt_module_parameters(m, NULL, p, NULL, 8);
    j->n_params = clrt_module_param_count(m);
    j->params = malloc((size_t)j->n_params * sizeof(float));
    clrt_status st = j->params ? CLRT_OK : CLRT_ENOMEM;
    for (int i = 0, at = 0; i < n && st == CLRT_OK; at += (int)clrt_tensor_numel(p[i]), i++)
        st = clrt_to_host(p[i], j->params + at, clrt_tensor_nbytes(p[i]));
    return st;
}

static void run_training(job *j, int steps)
{
    uint64_t rng = j->seed;
    int64_t xs[4] = {BATCH, 1, SIDE, SIDE}, n = BATCH, gs[2] = {BATCH, CLASSES};
    float *hx = tu_random_floats(&rng, BATCH * SIDE * SIDE, -1, 1);
    int32_t hy[BATCH];
    for (int i = 0; i < BATCH; i++)
        hy[i] = (int32_t)(tu_next(&rng) % CLASSES);
    clrt_tensor *x = clrt_from_host(j->dev, CLRT_F32, 4, xs, hx);
    clrt_tensor *y = clrt_from_host(j->dev, CLRT_I32, 1, &n, hy);
    clrt_tensor *grad = clrt_empty(j->dev, CLRT_F32, 2, gs);
    clrt_module *m = small_cnn(j->dev);
    clrt_tensor *params[8], *grads[8];
    int np = m ? clrt_module_parameters(m, NULL, params, grads, 8) : 0;
    clrt_optimizer *opt = np > 0 ? clrt_sgd(np, params, grads, 0.1, 0.9, 0) : NULL;
    clrt_status st =
        x && y && grad && opt ? train_steps(m, opt, x, y, grad, steps) : clrt_last_status();
    if (st == CLRT_OK)
        st = read_params(j, m);
    if (st != CLRT_OK)
        job_fail(j, st);
    clrt_optimizer_free(opt);
    clrt_module_free(m);
    clrt_tensor_release(x), clrt_tensor_release(y), clrt_tensor_release(grad);
    free(hx);
}

static int steps(void) { return TU_SIZED(20, 3); }

static void *job_main(void *arg)
{
    job *j = arg;
    run_adds(j);
    if (j->status == CLRT_OK)
        run_training(j, steps());
    return NULL;
}

static void assert_job_ok(const job *j, int i)
{
    ck_assert_msg(j->status == CLRT_OK, "thread %d on %s: %s: %s", i, clrt_device_str(j->dev),
                  clrt_status_name(j->status), j->error);
}

/* Two jobs on devices a and b at once; each against the same job run alone
 * before, on its device. */
static void run_pair(clrt_device *a, clrt_device *b)
{
    job alone[2], both[2];
    clrt_device *devs[2] = {a, b};
    for (int i = 0; i < 2; i++) {
        uint64_t seed = tu_seed() + 1000003 * (uint64_t)i;
        alone[i] = (job){devs[i], seed, 1, 0, NULL, 0, CLRT_OK, ""};
        job_main(&alone[i]);
        assert_job_ok(&alone[i], i);
        both[i] = (job){devs[i], seed, TU_SIZED(20000, 300), 0, NULL, 0, CLRT_OK, ""};
    }
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
        ck_assert_int_eq(pthread_create(&th[i], NULL, job_main, &both[i]), 0);
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < 2; i++) {
        assert_job_ok(&both[i], i);
        ck_assert_msg(both[i].sum == both[i].adds, "thread %d: %d additions of 1 gave %.1f", i,
                      both[i].adds, both[i].sum);
        ck_assert_int_eq(both[i].n_params, alone[i].n_params);
        for (int64_t k = 0; k < alone[i].n_params; k++) {
            float want = alone[i].params[k], got = both[i].params[k];
            ck_assert_msg(fabsf(want - got) <= 1e-5f * (1 + fabsf(want)),
                          "thread %d parameter %lld: %.9g alone, %.9g beside another thread", i,
                          (long long)k, (double)want, (double)got);
        }
        free(alone[i].params), free(both[i].params);
    }
}

START_TEST(two_threads_one_device) { run_pair(tu_device_pair(0), tu_device_pair(0)); }
END_TEST

START_TEST(two_threads_two_devices) { run_pair(tu_device_pair(0), tu_device_pair(1)); }
END_TEST

int main(void)
{
    Suite *s = suite_create("threads");
    TCase *tc = tu_tcase("threads");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, two_threads_one_device);
    tcase_add_test(tc, two_threads_two_devices);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
