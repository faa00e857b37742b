/* The training loop: shuffled passes over a data set, each batch streamed
 * by the batch stream, forward + cross-entropy + backward + optimizer step only
 * enqueued, loss and accuracy summed on the device and read once per pass. */
#include "runtime/core/clock_internal.h"
#include "runtime/core/alloc_internal.h"
#include "runtime/device/trace_internal.h"
#include "runtime/train/batch_stream_internal.h"
#include "runtime/nn/module_internal.h"
#include "runtime/optim/optim_internal.h"

#include <clrt/ops_loss.h>
#include <clrt/train.h>
#include <math.h>
#include <stdlib.h>

/* Device-side accumulators of a pass and the loss-gradient buffer, kept
 * across passes so that no step allocates. */
typedef struct {
    clrt_tensor *loss_sum; /* 0-dim float32 */
    clrt_tensor *correct;  /* 0-dim int32 */
    clrt_tensor *grad;     /* d loss / d logits, [batch, classes] */
    clrt_tensor *cum;      /* cfg.step_losses: loss_sum after each step, [batches] */
    float *step_losses;    /* host: each step's mean loss, from cum */
} sums;

struct clrt_trainer {
    clrt_module *model;
    clrt_optimizer *opt;
    clrt_train_config cfg;
    clrt__batch_stream train, test;
    sums sums;
    int have_test;
    int epoch;
};

/* One pass over a batch stream: training when opt is non-NULL, else evaluation. */
typedef struct {
    clrt_module *model;
    clrt_optimizer *opt;
    clrt__batch_stream *stream;
    sums *sums;
    int classes;
    clrt_phase phase;
    int epoch;
    const clrt_train_config *cfg; /* callbacks; may be NULL */
} pass_args;

typedef struct {
    double loss, acc, seconds, data_seconds, wait_seconds;
    int64_t samples;
} pass_result;

static clrt_status sums_init(sums *s, clrt_device *d)
{
    s->grad = NULL;
    s->loss_sum = clrt__alloc(d, CLRT_F32, 0, NULL);
    s->correct = s->loss_sum ? clrt__alloc(d, CLRT_I32, 0, NULL) : NULL;
    return s->correct ? CLRT_OK : clrt_last_status();
}

static void sums_free(sums *s)
{
    clrt_tensor_release(s->cum);
    free(s->step_losses);
    clrt_tensor_release(s->loss_sum);
    clrt_tensor_release(s->correct);
    clrt_tensor_release(s->grad);
}

clrt_train_config clrt_train_defaults(void)
{
    return (clrt_train_config){.epochs = 10, .batch_size = 256, .seed = 0, .evaluate = 1};
}

static clrt_status check_logits(const pass_args *p, const clrt_tensor *logits)
{
    char s[128];
    if (logits->ndim == 2 && logits->shape[1] == p->classes)
        return CLRT_OK;
    return clrt__fail(CLRT_ESHAPE,
                      "training: the model's output is %s but %s has %d classes (expected "
                      "[N, %d])",
                      clrt_shape_str(logits->ndim, logits->shape, s, sizeof s),
                      clrt_dataset_name(p->stream->ds), p->classes, p->classes);
}

/* Enqueues one batch: forward, loss sums, and in training the backward
 * pass and the optimizer step. *grad is the loss-gradient buffer. */
static clrt_status step(const pass_args *p, clrt_tensor *x, clrt_tensor *y)
{
    sums *s = p->sums;
    clrt_tensor *logits = clrt_module_forward(p->model, x);
    if (!logits)
        return clrt_last_status();
    clrt_status st = check_logits(p, logits);
    if (st == CLRT_OK && p->opt)
        st = clrt__tensor_reuse(&s->grad, p->model->device, CLRT_F32, 2, logits->shape);
    if (st == CLRT_OK)
        st = clrt_cross_entropy(logits, y, s->loss_sum, p->opt ? s->grad : NULL, s->correct);
    if (st == CLRT_OK && p->opt) {
        st = clrt_module_zero_grad(p->model);
        if (st == CLRT_OK)
            st = clrt_module_backward_params(p->model, s->grad);
        if (st == CLRT_OK)
            st = clrt_optimizer_step(p->opt);
    }
    clrt_tensor_release(logits);
    return st;
}

/* Reads the pass's sums: the one place a pass waits for the device. */
static clrt_status read_sums(const sums *s, pass_result *r)
{
    double loss = 0, right = 0;
    clrt_status st = clrt_item(s->loss_sum, &loss);
    if (st == CLRT_OK)
        st = clrt_item(s->correct, &right);
    r->loss = loss / (double)r->samples;
    r->acc = right / (double)r->samples;
    return st;
}

/* Copies the running loss sum after step i into cum[i], on the device:
 * per-step losses cost no wait. */
static clrt_status record_step(sums *s, int64_t i)
{
    clrt_device *d = clrt__dev(s->cum);
    cl_event ev;
    cl_int err = clEnqueueCopyBuffer(d->queue, clrt__mem(s->loss_sum), clrt__mem(s->cum), 0,
                                     (size_t)i * sizeof(float), sizeof(float), 0, NULL,
                                     clrt__trace_slot(&ev));
    clrt__trace_command(d, d->queue, ev, CLRT__TRACE_COPY, "step loss (clEnqueueCopyBuffer)");
    return err == CL_SUCCESS ? CLRT_OK : clrt__fail_cl(err, "clEnqueueCopyBuffer (step loss)");
}

/* After the pass (its sums already read, so no new wait): each step's mean
 * loss from the differences of the running sums. */
static clrt_status read_step_losses(sums *s, const clrt__batch_stream *b, int64_t batches)
{
    clrt_status st = clrt_to_host(s->cum, s->step_losses, (size_t)batches * sizeof(float));
    for (int64_t i = batches - 1; st == CLRT_OK && i >= 0; i--) {
        int64_t n = i < batches - 1 ? b->batch : b->size - (batches - 1) * b->batch;
        s->step_losses[i] = (s->step_losses[i] - (i ? s->step_losses[i - 1] : 0.0f)) / (float)n;
    }
    return st;
}

static clrt_status run_pass(const pass_args *p, uint64_t seed, pass_result *r)
{
    clrt_tensor *x = NULL, *y = NULL;
    double t0 = clrt__now();
    int64_t batches = clrt__stream_batches(p->stream), done = 0;
    clrt_status st = clrt__fill(p->sums->loss_sum, 0);
    if (st == CLRT_OK)
        st = clrt__fill(p->sums->correct, 0);
    if (st == CLRT_OK)
        st = clrt__stream_start(p->stream, p->opt != NULL, seed);
    for (int64_t i = 0; i < batches && st == CLRT_OK; i++) {
        st = clrt__stream_next(p->stream, i, &x, &y);
        if (st == CLRT_OK)
            st = step(p, x, y);
        if (st == CLRT_OK && p->opt && p->sums->cum)
            st = record_step(p->sums, i);
        done += x ? x->shape[0] : 0;
        if (st == CLRT_OK && p->cfg && p->cfg->progress)
            p->cfg->progress(p->cfg->ctx, p->phase, p->epoch, done, p->stream->size);
    }
    r->samples = p->stream->size;
    if (st == CLRT_OK)
        st = read_sums(p->sums, r);
    if (st == CLRT_OK && p->opt && p->sums->cum)
        st = read_step_losses(p->sums, p->stream, batches);
    r->seconds = clrt__now() - t0;
    r->data_seconds = p->stream->data_seconds;
    r->wait_seconds = p->stream->wait_seconds;
    return st;
}

/* An evaluation pass with the model in evaluation mode, restored after. */
static clrt_status eval_pass(pass_args *p, pass_result *r)
{
    int was_training = clrt_module_is_training(p->model);
    clrt_module_train(p->model, 0);
    p->opt = NULL;
    p->phase = CLRT_PHASE_TEST;
    clrt_status st = run_pass(p, 0, r);
    clrt_module_train(p->model, was_training);
    return st;
}

clrt_status clrt_evaluate(clrt_module *model, const clrt_dataset *ds, int batch_size, double *loss,
                          double *accuracy)
{
    clrt__batch_stream l;
    sums s = {NULL, NULL, NULL, NULL, NULL};
    pass_result r = {0};
    if (!model || !ds)
        return clrt__fail(CLRT_EINVAL, "clrt_evaluate: NULL model or data set");
    clrt_status st = clrt__stream_init(&l, ds, model->device, batch_size);
    pass_args p = {model, NULL, &l, &s, clrt_dataset_num_classes(ds), CLRT_PHASE_TEST, 0, NULL};
    if (st == CLRT_OK)
        st = sums_init(&s, model->device);
    if (st == CLRT_OK)
        st = eval_pass(&p, &r);
    sums_free(&s);
    clrt__stream_free(&l);
    if (st == CLRT_OK && loss)
        *loss = r.loss;
    if (st == CLRT_OK && accuracy)
        *accuracy = r.acc;
    return st;
}

/* --- the trainer --- */

static clrt_status check_config(const clrt_module *model, const clrt_optimizer *opt,
                                const clrt_dataset *train, const clrt_dataset *test,
                                const clrt_train_config *cfg)
{
    int64_t a[3], b[3];
    if (!model || !opt || !train || !cfg)
        return clrt__fail(CLRT_EINVAL, "clrt_trainer_new: NULL model, optimizer, training set "
                                       "or config");
    if (cfg->batch_size < 1 || cfg->epochs < 0)
        return clrt__fail(CLRT_EINVAL,
                          "clrt_trainer_new: batch_size %d must be >= 1 and "
                          "epochs %d >= 0",
                          cfg->batch_size, cfg->epochs);
    if (!test)
        return CLRT_OK;
    clrt_dataset_sample_shape(train, a);
    clrt_dataset_sample_shape(test, b);
    if (a[0] != b[0] || a[1] != b[1] || a[2] != b[2] ||
        clrt_dataset_num_classes(train) != clrt_dataset_num_classes(test))
        return clrt__fail(CLRT_ESHAPE,
                          "clrt_trainer_new: %s has samples [%lld, %lld, %lld] in %d classes but "
                          "%s has [%lld, %lld, %lld] in %d",
                          clrt_dataset_name(train), (long long)a[0], (long long)a[1],
                          (long long)a[2], clrt_dataset_num_classes(train), clrt_dataset_name(test),
                          (long long)b[0], (long long)b[1], (long long)b[2],
                          clrt_dataset_num_classes(test));
    return CLRT_OK;
}

/* The per-step buffers of cfg.step_losses: one float per training batch. */
static int cum_init(clrt_trainer *t, const clrt_dataset *train, clrt_device *d)
{
    int64_t size = clrt_dataset_size(train),
            batch = t->cfg.batch_size < size ? t->cfg.batch_size : size;
    if (size < 1)
        return 0; /* an empty data set: the batch stream reports it */
    int64_t n[1] = {(size + batch - 1) / batch};
    t->sums.cum = clrt__alloc(d, CLRT_F32, 1, n);
    t->sums.step_losses = t->sums.cum ? clrt__malloc((size_t)n[0] * sizeof(float)) : NULL;
    if (t->sums.cum && !t->sums.step_losses)
        clrt__fail(CLRT_ENOMEM, "clrt_trainer_new: out of host memory");
    return t->sums.step_losses == NULL;
}

clrt_trainer *clrt_trainer_new(clrt_module *model, clrt_optimizer *opt, const clrt_dataset *train,
                               const clrt_dataset *test, const clrt_train_config *cfg)
{
    if (check_config(model, opt, train, test, cfg) != CLRT_OK)
        return NULL;
    clrt_device *d = cfg->device ? cfg->device : model->device;
    if (clrt__optim_check_device(opt, d, "clrt_trainer_new") != CLRT_OK ||
        clrt_module_to(model, d) != CLRT_OK)
        return NULL;
    clrt_trainer *t = clrt__calloc(1, sizeof *t);
    if (!t) {
        clrt__fail(CLRT_ENOMEM, "clrt_trainer_new: out of host memory");
        return NULL;
    }
    *t =
        (clrt_trainer){model, opt, *cfg, {0}, {0}, {NULL, NULL, NULL, NULL, NULL}, test != NULL, 0};
    t->cfg.device = d;
    t->epoch = cfg->start_epoch > 0 ? cfg->start_epoch : 0; /* resuming: epochs done */
    if (sums_init(&t->sums, d) != CLRT_OK || (cfg->step_losses && cum_init(t, train, d)) ||
        clrt__stream_init(&t->train, train, d, cfg->batch_size) != CLRT_OK ||
        (test && clrt__stream_init(&t->test, test, d, cfg->batch_size) != CLRT_OK)) {
        clrt_trainer_free(t);
        return NULL;
    }
    return t;
}

static void fill_stats(clrt_trainer *t, const pass_result *tr, const pass_result *te,
                       clrt_epoch_stats *s)
{
    *s = (clrt_epoch_stats){.epoch = t->epoch,
                            .train_samples = tr->samples,
                            .test_samples = te ? te->samples : 0,
                            .train_loss = tr->loss,
                            .train_acc = tr->acc,
                            .test_loss = te ? te->loss : NAN,
                            .test_acc = te ? te->acc : NAN,
                            .train_seconds = tr->seconds,
                            .test_seconds = te ? te->seconds : 0,
                            .seconds = tr->seconds + (te ? te->seconds : 0),
                            .samples_per_s = (double)tr->samples / tr->seconds,
                            .data_seconds = tr->data_seconds,
                            .wait_seconds = tr->wait_seconds,
                            .compute_seconds = tr->seconds - tr->data_seconds,
                            .data_share = tr->data_seconds / tr->seconds,
                            .lr = clrt_optimizer_lr(t->opt),
                            .step_losses = t->sums.step_losses,
                            .steps = t->sums.step_losses ? clrt__stream_batches(&t->train) : 0};
}

/* A NaN or infinite loss in any step makes the pass's loss sum NaN or
 * infinite too, so one check when the sums are read (once per pass, no
 * extra wait) catches it; the pass itself runs to its end. */
static clrt_status diverged(const clrt_trainer *t, const pass_result *tr)
{
    return clrt__fail(CLRT_ENONFINITE,
                      "clrt_trainer_epoch: training diverged: the mean loss of epoch %d is %g "
                      "(%lld samples of %s on %s); lower the learning rate (it is %g) or check "
                      "the inputs",
                      t->epoch, tr->loss, (long long)tr->samples, clrt_dataset_name(t->train.ds),
                      clrt_device_str(t->cfg.device), clrt_optimizer_lr(t->opt));
}

clrt_status clrt_trainer_epoch(clrt_trainer *t, clrt_epoch_stats *stats)
{
    if (!t)
        return clrt__fail(CLRT_EINVAL, "clrt_trainer_epoch: trainer is NULL");
    t->epoch++;
    pass_result tr = {0}, te = {0};
    pass_args p = {
        t->model,         t->opt,   &t->train, &t->sums, clrt_dataset_num_classes(t->train.ds),
        CLRT_PHASE_TRAIN, t->epoch, &t->cfg};
    clrt_module_train(t->model, 1);
    clrt_status st = run_pass(&p, clrt__seed_mix(t->cfg.seed, (uint64_t)t->epoch), &tr);
    if (st == CLRT_OK && !isfinite(tr.loss))
        st = diverged(t, &tr);
    int evaluate = t->have_test && t->cfg.evaluate;
    if (st == CLRT_OK && evaluate) {
        p.stream = &t->test;
        st = eval_pass(&p, &te);
    }
    if (st == CLRT_OK && stats)
        fill_stats(t, &tr, evaluate ? &te : NULL, stats);
    return st;
}

void clrt_trainer_free(clrt_trainer *t)
{
    if (!t)
        return;
    clrt__stream_free(&t->train);
    clrt__stream_free(&t->test);
    sums_free(&t->sums);
    free(t);
}

clrt_status clrt_train(clrt_module *model, clrt_optimizer *opt, const clrt_dataset *train,
                       const clrt_dataset *test, const clrt_train_config *cfg,
                       clrt_epoch_stats *stats)
{
    clrt_trainer *t = clrt_trainer_new(model, opt, train, test, cfg);
    if (!t)
        return clrt_last_status();
    clrt_status st = CLRT_OK;
    for (int e = 0; e < cfg->epochs && st == CLRT_OK; e++) {
        clrt_epoch_stats s;
        st = clrt_trainer_epoch(t, &s);
        if (st != CLRT_OK)
            break;
        if (stats)
            stats[e] = s;
        if (cfg->on_epoch && cfg->on_epoch(cfg->ctx, &s))
            break;
    }
    clrt_trainer_free(t);
    return st;
}
