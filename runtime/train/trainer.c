/* The training loop: shuffled passes over a data set, each batch streamed
 * by the batch stream, forward + cross-entropy + backward + optimizer step only
 * enqueued, loss and accuracy summed on the device and read once per pass.
 * Data parallel: one replica (model, optimizer, stream of its part of each
 * batch, sums) per device, gradients summed across them every step
 * (grad_exchange_internal.h). One device is the case of one replica.
 * Across processes (cfg.world), the replicas of every process split each
 * batch, and the gradient and metric sums run over the processes too. */
#include "runtime/core/clock_internal.h"
#include "runtime/core/alloc_internal.h"
#include "runtime/device/command_internal.h"
#include "runtime/train/trainer_internal.h"
#include "runtime/nn/module_internal.h"
#include "runtime/optim/optim_internal.h"

#include <clrt/ops_elementwise.h>
#include <clrt/ops_loss.h>
#include <clrt/train.h>
#include <math.h>
#include <stdlib.h>

/* One pass over a batch stream: training when opt is non-NULL, else evaluation. */
typedef struct {
    clrt_module *model;
    clrt_optimizer *opt;
    clrt__batch_stream *stream;
    clrt__sums *sums;
    int classes;
    clrt_phase phase;
    int epoch;
    const clrt_train_config *cfg; /* callbacks; may be NULL */
} pass_args;

typedef struct {
    double loss, acc, seconds, data_seconds, wait_seconds;
    double exchange_seconds, exchange_wait_seconds, world_seconds;
    int64_t samples;
} pass_result;

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

/* The program's loss (cfg->loss) on a batch part's output: its sum into
 * the loss sums (mean times the samples), the correct count where the
 * output has a class per column, and in training its backward, scaled by
 * `weight`. */
static clrt_status custom_loss_step(const pass_args *p, clrt_tensor *out, clrt_tensor *y,
                                    double weight)
{
    clrt__sums *s = p->sums;
    clrt_tensor *loss = p->cfg->loss(p->cfg->ctx, out, y);
    if (!loss)
        return clrt_last_status() != CLRT_OK
                   ? clrt_last_status()
                   : clrt__fail(CLRT_EINVAL, "training: the loss callback returned NULL");
    char sh[128];
    clrt_status st = loss->numel == 1 && loss->dtype == CLRT_F32
                         ? CLRT_OK
                         : clrt__fail(CLRT_ESHAPE,
                                      "training: the loss callback gave a %s %s tensor, not one "
                                      "float32 element",
                                      clrt_dtype_str(loss->dtype),
                                      clrt_shape_str(loss->ndim, loss->shape, sh, sizeof sh));
    int was = clrt_set_grad_enabled(0);
    clrt_tensor *v = st == CLRT_OK ? clrt__view("training", loss, 0, NULL) : NULL;
    if (st == CLRT_OK)
        st = v ? clrt_axpy_(s->loss_sum, (double)y->shape[0], v) : clrt_last_status();
    int counts = out->ndim == 2 && out->shape[1] == p->classes && y->ndim == 1;
    if (st == CLRT_OK && counts)
        st = clrt_count_correct(out, y, s->correct);
    s->uncounted |= !counts;
    clrt_set_grad_enabled(was);
    clrt_tensor_release(v);
    clrt_tensor *scaled =
        st == CLRT_OK && p->opt && weight != 1.0 ? clrt_mul_scalar(loss, weight) : NULL;
    if (st == CLRT_OK && p->opt)
        st = clrt_module_zero_grad(p->model);
    if (st == CLRT_OK && p->opt)
        st = clrt_backward(weight != 1.0 ? scaled : loss);
    clrt_tensor_release(scaled);
    clrt_tensor_release(loss);
    return st;
}

/* Enqueues one batch: forward, loss sums, and in training the backward
 * pass with the loss gradient scaled by `weight` (a replica's share of
 * the batch). clrt_cross_entropy's gradient is the mean over the rows
 * whose label is in range, and a data set's labels all are (its reader
 * checks them): the mean over the replica's rows, which the weights turn
 * into the batch's. The optimizer step is the caller's. An empty part of a batch
 * (a replica's, when the batch has fewer samples than replicas) only zeroes
 * the gradients, which then add nothing to the sum. */
static clrt_status step(const pass_args *p, clrt_tensor *x, clrt_tensor *y, double weight)
{
    clrt__sums *s = p->sums;
    if (x->shape[0] == 0)
        return p->opt ? clrt_module_zero_grad(p->model) : CLRT_OK;
    clrt_tensor *logits = clrt_module_forward(p->model, x);
    if (logits && p->cfg && p->cfg->loss) {
        clrt_status st = custom_loss_step(p, logits, y, weight);
        clrt_tensor_release(logits);
        return st;
    }
    if (!logits)
        return clrt_last_status();
    clrt_status st = check_logits(p, logits);
    if (st == CLRT_OK && p->opt)
        st = clrt__tensor_reuse(&s->grad, p->model->device, CLRT_F32, 2, logits->shape);
    if (st == CLRT_OK)
        st = clrt_cross_entropy(logits, y, s->loss_sum, p->opt ? s->grad : NULL, s->correct);
    if (st == CLRT_OK && p->opt) {
        st = clrt_module_zero_grad(p->model);
        if (st == CLRT_OK && weight != 1.0)
            st = clrt_mul_scalar_(s->grad, weight);
        if (st == CLRT_OK)
            st = clrt_module_backward_params(p->model, s->grad);
    }
    clrt_tensor_release(logits);
    return st;
}

/* *loss and *right summed over the processes of cfg's world (none: as they are). */
static clrt_status sum_over_world(const clrt_train_config *cfg, double *loss, double *right)
{
    double v[2] = {*loss, *right};
    clrt_status st = clrt__world_sum(cfg ? cfg->world : NULL, v, 2);
    *loss = v[0], *right = v[1];
    return st;
}

/* Samples in batch i of a pass (all replicas' parts together). */
static int64_t batch_samples(const clrt__batch_stream *b, int64_t i)
{
    int64_t left = b->size - i * b->batch;
    return left < b->batch ? left : b->batch;
}

/* After the pass (its sums already read, so no new wait): each step's mean
 * loss from the differences of the running sums, added over the replicas
 * and the processes, into replica 0's step_losses. */
static clrt_status read_step_losses(clrt_trainer *t, int64_t batches)
{
    float *acc = t->rep[0].sums.step_losses;
    size_t bytes = (size_t)batches * sizeof(float);
    clrt_status st = clrt_to_host(t->rep[0].sums.cum, acc, bytes);
    for (int k = 1; k < t->n_rep && st == CLRT_OK; k++) {
        float *part = t->rep[k].sums.step_losses;
        st = clrt_to_host(t->rep[k].sums.cum, part, bytes);
        for (int64_t i = 0; st == CLRT_OK && i < batches; i++)
            acc[i] += part[i];
    }
    if (st == CLRT_OK)
        st = clrt__world_sum_f32(t->cfg.world, acc, batches);
    const clrt__batch_stream *b = &t->rep[0].train;
    for (int64_t i = batches - 1; st == CLRT_OK && i >= 0; i--) {
        int64_t n = i < batches - 1 ? b->batch : b->size - (batches - 1) * b->batch;
        acc[i] = (acc[i] - (i ? acc[i - 1] : 0.0f)) / (float)n;
    }
    return st;
}

/* An evaluation pass over p->stream in order, the model in evaluation mode
 * (restored after). */
static clrt_status eval_pass(pass_args *p, pass_result *r)
{
    clrt_tensor *x = NULL, *y = NULL;
    double t0 = clrt__now(), loss = 0, right = 0;
    int was_training = clrt_module_is_training(p->model);
    int was_grad = clrt_set_grad_enabled(0); /* nothing to record in a test pass */
    clrt_module_train(p->model, 0);
    p->opt = NULL;
    p->phase = CLRT_PHASE_TEST;
    int64_t batches = clrt__stream_batches(p->stream), done = 0;
    clrt_status st = clrt__sums_zero(p->sums);
    if (st == CLRT_OK)
        st = clrt__stream_start(p->stream, 0, 0);
    for (int64_t i = 0; i < batches && st == CLRT_OK; i++) {
        st = clrt__stream_next(p->stream, i, &x, &y);
        if (st == CLRT_OK)
            st = step(p, x, y, 1.0);
        done += batch_samples(p->stream, i);
        if (st == CLRT_OK && p->cfg && p->cfg->progress)
            p->cfg->progress(p->cfg->ctx, p->phase, p->epoch, done, p->stream->size);
    }
    r->samples = p->stream->size;
    if (st == CLRT_OK)
        st = clrt__sums_add(p->sums, &loss, &right);
    if (st == CLRT_OK)
        st = sum_over_world(p->cfg, &loss, &right);
    r->loss = loss / (double)r->samples;
    r->acc = right / (double)r->samples;
    r->seconds = clrt__now() - t0;
    r->data_seconds = p->stream->data_seconds;
    r->wait_seconds = p->stream->wait_seconds;
    clrt_module_train(p->model, was_training);
    clrt_set_grad_enabled(was_grad);
    return st;
}

clrt_status clrt_evaluate(clrt_module *model, const clrt_dataset *ds, int batch_size, double *loss,
                          double *accuracy)
{
    clrt__batch_stream l;
    clrt__sums s = {0};
    pass_result r = {0};
    if (!model || !ds)
        return clrt__fail(CLRT_EINVAL, "clrt_evaluate: NULL model or data set");
    clrt_status st = clrt__stream_init(&l, ds, model->device, batch_size);
    pass_args p = {model, NULL, &l, &s, clrt_dataset_num_classes(ds), CLRT_PHASE_TEST, 0, NULL};
    if (st == CLRT_OK)
        st = clrt__sums_init(&s, model->device);
    if (st == CLRT_OK)
        st = eval_pass(&p, &r);
    clrt__sums_free(&s);
    clrt__stream_free(&l);
    if (st == CLRT_OK && loss)
        *loss = r.loss;
    if (st == CLRT_OK && accuracy)
        *accuracy = r.acc;
    return st;
}

/* --- training --- */

/* Batch i on every replica: forward and backward enqueued on each device
 * before anything waits, the gradients summed across devices, then each
 * replica's optimizer step. */
static clrt_status train_batch(clrt_trainer *t, const pass_args *base, int64_t i)
{
    double n = (double)batch_samples(&t->rep[0].train, i);
    clrt_status st = CLRT_OK;
    for (int k = 0; k < t->n_rep && st == CLRT_OK; k++) {
        clrt__replica *r = &t->rep[k];
        pass_args p = *base;
        p.model = r->model, p.opt = r->opt, p.stream = &r->train, p.sums = &r->sums;
        clrt_tensor *x, *y;
        st = clrt__stream_next(&r->train, i, &x, &y);
        if (st == CLRT_OK)
            st = step(&p, x, y, (double)x->shape[0] / n);
        if (st == CLRT_OK && t->n_rep > 1) /* computing while the next device's step is enqueued */
            st = clrt_device_flush(r->model->device);
    }
    if (st == CLRT_OK && t->exchange.n_parts > 0)
        st = clrt__grad_exchange_sum(&t->exchange);
    for (int k = 0; k < t->n_rep && st == CLRT_OK; k++) {
        st = clrt_optimizer_step(t->rep[k].opt);
        if (st == CLRT_OK && t->rep[k].sums.cum)
            st = clrt__sums_record_step(&t->rep[k].sums, i);
    }
    return st;
}

/* Every replica in training mode at replica 0's learning rate (the caller
 * may have changed it between epochs), sums zeroed, first batch staged. */
static clrt_status start_train_pass(clrt_trainer *t, uint64_t seed)
{
    clrt_status st = CLRT_OK;
    t->exchange.sum_seconds = t->exchange.wait_seconds = t->exchange.world_seconds = 0;
    for (int k = 0; k < t->n_rep && st == CLRT_OK; k++) {
        clrt_module_train(t->rep[k].model, 1);
        st = clrt_optimizer_set_lr(t->rep[k].opt, clrt_optimizer_lr(t->rep[0].opt));
        if (st == CLRT_OK)
            st = clrt__sums_zero(&t->rep[k].sums);
        if (st == CLRT_OK)
            st = clrt__stream_start(&t->rep[k].train, 1, seed);
    }
    return st;
}

/* The pass's loss and accuracy over every replica, and its time split. */
static clrt_status finish_train_pass(clrt_trainer *t, int64_t batches, pass_result *r)
{
    double loss = 0, right = 0;
    clrt_status st = CLRT_OK;
    for (int k = 0; k < t->n_rep && st == CLRT_OK; k++) {
        st = clrt__sums_add(&t->rep[k].sums, &loss, &right);
        r->data_seconds += t->rep[k].train.data_seconds;
        r->wait_seconds += t->rep[k].train.wait_seconds;
    }
    if (st == CLRT_OK)
        st = sum_over_world(&t->cfg, &loss, &right);
    r->samples = t->rep[0].train.size;
    r->loss = loss / (double)r->samples;
    r->acc = right / (double)r->samples;
    r->exchange_seconds = t->exchange.sum_seconds;
    r->exchange_wait_seconds = t->exchange.wait_seconds;
    r->world_seconds = t->exchange.world_seconds;
    if (st == CLRT_OK && t->rep[0].sums.cum)
        st = read_step_losses(t, batches);
    return st;
}

static clrt_status train_pass(clrt_trainer *t, uint64_t seed, pass_result *r)
{
    double t0 = clrt__now();
    pass_args base = {NULL,
                      NULL,
                      NULL,
                      NULL,
                      clrt_dataset_num_classes(t->rep[0].train.ds),
                      CLRT_PHASE_TRAIN,
                      t->epoch,
                      &t->cfg};
    int64_t batches = clrt__stream_batches(&t->rep[0].train), done = 0;
    clrt_status st = start_train_pass(t, seed);
    for (int64_t i = 0; i < batches && st == CLRT_OK; i++) {
        st = train_batch(t, &base, i);
        done += batch_samples(&t->rep[0].train, i);
        if (st == CLRT_OK && t->cfg.progress)
            t->cfg.progress(t->cfg.ctx, CLRT_PHASE_TRAIN, t->epoch, done, t->rep[0].train.size);
    }
    if (st == CLRT_OK)
        st = finish_train_pass(t, batches, r);
    r->seconds = clrt__now() - t0;
    return st;
}

static void fill_stats(clrt_trainer *t, const pass_result *tr, const pass_result *te,
                       clrt_epoch_stats *s)
{
    const clrt__sums *s0 = &t->rep[0].sums;
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
                            .lr = clrt_optimizer_lr(t->rep[0].opt),
                            .exchange_seconds = tr->exchange_seconds,
                            .exchange_wait_seconds = tr->exchange_wait_seconds,
                            .world_seconds = tr->world_seconds,
                            .step_losses = s0->step_losses,
                            .steps = s0->step_losses ? clrt__stream_batches(&t->rep[0].train) : 0};
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
                      t->epoch, tr->loss, (long long)tr->samples,
                      clrt_dataset_name(t->rep[0].train.ds), clrt_device_str(t->cfg.device),
                      clrt_optimizer_lr(t->rep[0].opt));
}

clrt_status clrt_trainer_epoch(clrt_trainer *t, clrt_epoch_stats *stats)
{
    if (!t)
        return clrt__fail(CLRT_EINVAL, "clrt_trainer_epoch: trainer is NULL");
    clrt_status st =
        clrt__world_agree_epoch(t->cfg.world, t->epoch + 1, clrt_optimizer_lr(t->rep[0].opt));
    if (st != CLRT_OK)
        return st;
    t->epoch++;
    pass_result tr = {0}, te = {0};
    st = train_pass(t, clrt__seed_mix(t->cfg.seed, (uint64_t)t->epoch), &tr);
    if (st == CLRT_OK && !isfinite(tr.loss))
        st = diverged(t, &tr);
    int evaluate = t->have_test && t->cfg.evaluate;
    if (st == CLRT_OK && evaluate) {
        pass_args p = {t->rep[0].model,
                       NULL,
                       &t->test,
                       &t->rep[0].sums,
                       clrt_dataset_num_classes(t->test.ds),
                       CLRT_PHASE_TEST,
                       t->epoch,
                       &t->cfg};
        st = eval_pass(&p, &te);
    }
    if (st == CLRT_OK && stats)
        fill_stats(t, &tr, evaluate ? &te : NULL, stats);
    return st;
}
