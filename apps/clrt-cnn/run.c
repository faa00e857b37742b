/* One training run: build, initialise and move the model, make the
 * optimizer, train, print a line per epoch. */
#include "cnn.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PARAMS 256

static clrt_optimizer *make_optimizer(const cnn_options *o, clrt_module *model)
{
    clrt_tensor *params[MAX_PARAMS], *grads[MAX_PARAMS];
    int n = clrt_module_parameters(model, NULL, params, grads, MAX_PARAMS);
    if (n < 0)
        return NULL;
    if (strcmp(o->optimizer, "adam") == 0)
        return clrt_adam(n, params, grads, o->lr, 0.9, 0.999, 1e-8, o->weight_decay);
    return clrt_sgd(n, params, grads, o->lr, o->momentum, o->weight_decay);
}

/* Cosine annealing from o->lr towards 0 over the run (epoch e of n), or
 * o->lr throughout: a high rate learns fast early, a small one settles the
 * weights at the end instead of leaving them jumping between minima. */
static double scheduled_lr(const cnn_options *o, int e, int n)
{
    if (!o->cosine)
        return o->lr;
    return 0.5 * o->lr * (1.0 + cos(3.14159265358979323846 * e / n));
}

static void print_epoch(app_progress *p, const clrt_epoch_stats *s)
{
    app_progress_clear(p);
    printf("%-6s epoch %2d  lr %.4f  loss %.4f  train acc %.4f  test acc %.4f  %6.2f s  %7.0f "
           "samples/s  "
           "data %4.1f%%\n",
           p->device, s->epoch, s->lr, s->train_loss, s->train_acc, s->test_acc, s->train_seconds,
           s->samples_per_s, 100.0 * s->data_share);
    if (s->exchange_seconds > 0) /* data parallel: where the training pass's host time went */
        printf("%-6s          time split: data %.3f s, staging waits %.3f s, gradient sums "
               "%.3f s (waiting for the devices %.3f s, across processes %.3f s)\n",
               p->device, s->data_seconds, s->wait_seconds, s->exchange_seconds,
               s->exchange_wait_seconds, s->world_seconds);
    fflush(stdout);
}

int cnn_run(const cnn_options *o, const cnn_data *data, clrt_device *d, int epochs, int batch,
            clrt_epoch_stats *last, double *mean_seconds)
{
    int64_t chw[3];
    clrt_optimizer *opt = NULL;
    clrt_trainer *trainer = NULL;
    clrt_summary_writer *log = NULL;
    clrt_epoch_stats *history = NULL;
    app_progress progress;
    int rc = 1;
    clrt_dataset_sample_shape(data->train, chw);
    clrt_module *model = cnn_build_model(o->model, chw);
    if (!model || clrt_module_init(model, o->seed) != CLRT_OK ||
        clrt_module_to(model, d) != CLRT_OK || !(opt = make_optimizer(o, model)))
        goto fail;
    int64_t size = clrt_dataset_size(data->train), per = (size + batch - 1) / batch;
    int start = 0;
    if (o->resume && cnn_checkpoint_resume(o, model, opt, per, size, &start))
        goto done;
    app_progress_init(&progress, clrt_device_str(d));
    clrt_train_config cfg = clrt_train_defaults();
    cfg.device = d;
    cfg.world = o->job.world;
    if (o->n_dp > 1)
        cfg.devices = o->dp, cfg.n_devices = o->n_dp;
    cfg.epochs = epochs;
    cfg.augment = o->augment ? 4 : 0;
    cfg.batch_size = batch;
    cfg.seed = o->seed;
    cfg.start_epoch = start;
    cfg.step_losses = o->logdir != NULL; /* the same on every rank */
    int writer = o->job.rank == 0;       /* in an MPI job, rank 0 writes the files */
    if (writer && o->logdir && !(log = clrt_summary_open(o->logdir)))
        goto fail;
    cfg.progress = writer ? app_progress_report : NULL;
    cfg.ctx = &progress;
    if (!(trainer = clrt_trainer_new(model, opt, data->train, data->test, &cfg)))
        goto fail;
    double total = 0;
    if (writer && o->plot && !(history = calloc((size_t)epochs, sizeof *history))) {
        fprintf(stderr, "clrt-cnn: out of memory\n");
        goto done;
    }
    for (int e = start; e < epochs; e++) {
        if (clrt_optimizer_set_lr(opt, scheduled_lr(o, e, epochs)) != CLRT_OK ||
            clrt_trainer_epoch(trainer, last) != CLRT_OK)
            goto fail;
        print_epoch(&progress, last);
        if (history)
            history[e - start] = *last;
        total += last->train_seconds;
        if (log && cnn_log_epoch(log, last, clrt_optimizer_steps(opt) - last->steps))
            goto done;
        if (writer && o->save && cnn_checkpoint_save(o, model, opt, e + 1, size))
            goto done;
    }
    if (start >= epochs) {
        fprintf(stderr, "clrt-cnn: --resume: %s already holds %d epochs (--epochs %d)\n", o->resume,
                start, epochs);
        goto done;
    }
    *mean_seconds = total / (epochs - start);
    if (history && cnn_plot(o->plot, history, epochs - start))
        goto done;
    rc = 0;
    goto done;
fail:
    fprintf(stderr, "clrt-cnn: %s\n", clrt_last_error());
done:
    free(history);
    clrt_summary_close(log);
    clrt_trainer_free(trainer);
    clrt_optimizer_free(opt);
    clrt_module_free(model);
    return rc;
}
