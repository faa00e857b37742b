/* A training run: the text cut into a training part and a validation tail,
 * clrt_gpt trained by the trainer with AdamW under a warm-up and cosine
 * schedule, the next-character cross-entropy as its loss, a line per
 * epoch with the validation loss in bits per character. */
#include "lm.h"

#include <math.h>
#include <stdlib.h>

#define LN2 0.69314718055994530942

typedef struct {
    app_progress progress;
    int vocab;
} run_ctx;

/* Mean cross-entropy of logits [B, T, V] against labels [B, T]. */
static clrt_tensor *next_char_loss(void *ctx, clrt_tensor *logits, clrt_tensor *labels)
{
    const run_ctx *r = ctx;
    int64_t rows = clrt_tensor_numel(labels), shape[2] = {rows, r->vocab};
    clrt_tensor *l2 = clrt_reshape(logits, 2, shape);
    clrt_tensor *t1 = l2 ? clrt_reshape(labels, 1, &rows) : NULL;
    clrt_tensor *loss = t1 ? clrt_cross_entropy_loss(l2, t1) : NULL;
    clrt_tensor_release(l2);
    clrt_tensor_release(t1);
    return loss;
}

/* The training windows and the validation tail, as token data sets. */
static int make_data(const lm_options *o, const lm_text *t, clrt_dataset **train,
                     clrt_dataset **val)
{
    int32_t *ids = malloc((size_t)t->n * sizeof *ids);
    if (!ids) {
        fprintf(stderr, "clrt-lm: out of memory for %lld ids\n", (long long)t->n);
        return 1;
    }
    int rc = lm_encode(t, o->text, t->bytes, t->n, ids);
    int64_t n_val = (int64_t)(o->val_fraction * (double)t->n), n_train = t->n - n_val;
    if (!rc && (n_train < o->block + 1 || n_val < o->block + 1)) {
        fprintf(stderr,
                "clrt-lm: %s has %lld characters: too few for training and validation samples "
                "of %d (--block) with %g of it held out (--val-fraction)\n",
                o->text, (long long)t->n, o->block, o->val_fraction);
        rc = 1;
    }
    if (!rc) {
        *train = clrt_dataset_tokens("text/train", ids, n_train, o->block, t->vocab);
        *val = *train ? clrt_dataset_tokens("text/validation", ids + n_train, n_val, o->block,
                                            t->vocab)
                      : NULL;
        rc = !*val;
        if (rc)
            fprintf(stderr, "clrt-lm: %s\n", clrt_last_error());
    }
    free(ids);
    return rc;
}

/* AdamW over every parameter (counted first: a deep model has many). */
static clrt_optimizer *make_optimizer(const lm_options *o, clrt_module *model)
{
    int n = clrt_module_parameters(model, NULL, NULL, NULL, 0);
    clrt_tensor **params = n > 0 ? calloc((size_t)n, sizeof *params) : NULL;
    clrt_tensor **grads = params ? calloc((size_t)n, sizeof *grads) : NULL;
    clrt_optimizer *opt = NULL;
    if (grads && clrt_module_parameters(model, NULL, params, grads, n) == n)
        opt = clrt_adamw(n, params, grads, o->lr, 0.9, 0.95, 1e-8, o->weight_decay);
    else if (n > 0)
        fprintf(stderr, "clrt-lm: out of memory listing %d parameters\n", n);
    free(params);
    free(grads);
    return opt;
}

static void print_epoch(run_ctx *r, const clrt_epoch_stats *s, int64_t tokens)
{
    app_progress_clear(&r->progress);
    printf("epoch %3d  lr %.2e  train %.4f bits/char  validation %.4f bits/char  %6.2f s  %7.0f "
           "chars/s\n",
           s->epoch, s->lr, s->train_loss / LN2, s->test_loss / LN2, s->train_seconds,
           (double)tokens / s->train_seconds);
    fflush(stdout);
}

static int log_epoch(clrt_summary_writer *w, const clrt_epoch_stats *s, int64_t first_step)
{
    int bad = 0;
    for (int64_t i = 0; i < s->steps && !bad; i++)
        bad = clrt_summary_scalar(w, "Train/Loss", first_step + i, 0, s->step_losses[i]) != CLRT_OK;
    bad = bad ||
          clrt_summary_scalar(w, "Epoch/Train bits per char", s->epoch, 0,
                              (float)(s->train_loss / LN2)) != CLRT_OK ||
          clrt_summary_scalar(w, "Epoch/Validation bits per char", s->epoch, 0,
                              (float)(s->test_loss / LN2)) != CLRT_OK ||
          clrt_summary_flush(w) != CLRT_OK;
    if (bad)
        fprintf(stderr, "clrt-lm: --logdir: %s\n", clrt_last_error());
    return bad;
}

static clrt_train_config config(lm_options *o, clrt_device *d, run_ctx *r, int start)
{
    clrt_train_config cfg = clrt_train_defaults();
    cfg.device = d;
    cfg.world = o->job.world;
    if (o->n_dp > 1)
        cfg.devices = o->dp, cfg.n_devices = o->n_dp;
    cfg.epochs = o->epochs;
    cfg.batch_size = o->batch_size;
    cfg.seed = o->seed;
    cfg.start_epoch = start;
    cfg.step_losses = o->logdir != NULL; /* the same on every rank */
    cfg.loss = next_char_loss;
    cfg.progress = o->job.rank == 0 ? app_progress_report : NULL;
    cfg.ctx = r;
    return cfg;
}

/* The epochs from `start` on; 0, or 1 after printing why. */
static int epochs(lm_options *o, const lm_text *t, clrt_module *model, clrt_optimizer *opt,
                  clrt_trainer *trainer, run_ctx *r, int start, int64_t train_samples)
{
    clrt_summary_writer *log = NULL;
    int writer = o->job.rank == 0; /* in an MPI job, rank 0 writes the files */
    if (writer && o->logdir && !(log = clrt_summary_open(o->logdir))) {
        fprintf(stderr, "clrt-lm: --logdir: %s\n", clrt_last_error());
        return 1;
    }
    int rc = 0;
    clrt_epoch_stats s;
    for (int e = start; e < o->epochs && !rc; e++) {
        double lr =
            o->constant ? o->lr : clrt_lr_warmup_cosine(e, o->warmup, o->epochs, o->lr, o->min_lr);
        if (clrt_optimizer_set_lr(opt, lr) != CLRT_OK ||
            clrt_trainer_epoch(trainer, &s) != CLRT_OK) {
            fprintf(stderr, "clrt-lm: %s\n", clrt_last_error());
            rc = 1;
            break;
        }
        print_epoch(r, &s, s.train_samples * o->block);
        rc = (log && log_epoch(log, &s, clrt_optimizer_steps(opt) - s.steps)) ||
             (writer && o->save && lm_checkpoint_save(o, t, model, opt, e + 1, train_samples));
    }
    clrt_summary_close(log);
    return rc;
}

/* The model built, initialised from o->seed, moved to d; a checkpoint
 * resumed; then the epochs. */
static int run(lm_options *o, const lm_text *t, clrt_device *d, clrt_dataset *train,
               clrt_dataset *val)
{
    run_ctx r = {.vocab = t->vocab};
    clrt_optimizer *opt = NULL;
    clrt_trainer *trainer = NULL;
    clrt_module *model =
        clrt_gpt_ex(t->vocab, o->block, o->d_model, o->heads, o->layers, o->dim_ff, o->dropout);
    int rc = !model || clrt_module_init(model, o->seed) != CLRT_OK ||
             clrt_module_to(model, d) != CLRT_OK || !(opt = make_optimizer(o, model));
    if (rc)
        fprintf(stderr, "clrt-lm: %s\n", clrt_last_error());
    int64_t samples = clrt_dataset_size(train);
    int start = 0;
    rc = rc || (o->resume && lm_checkpoint_resume(o, t, model, opt, samples, &start));
    printf("model clrt_gpt(vocab %d, block %d, d_model %d, heads %d, layers %d, dim_ff %d): %lld "
           "parameters; %lld training and %lld validation samples\n",
           t->vocab, o->block, o->d_model, o->heads, o->layers, o->dim_ff,
           (long long)(model ? clrt_module_param_count(model) : 0), (long long)samples,
           (long long)clrt_dataset_size(val));
    app_progress_init(&r.progress, clrt_device_str(d));
    clrt_train_config cfg = config(o, d, &r, start);
    if (!rc && !(trainer = clrt_trainer_new(model, opt, train, val, &cfg))) {
        fprintf(stderr, "clrt-lm: %s\n", clrt_last_error());
        rc = 1;
    }
    if (!rc && o->epochs == 0 && o->save && o->job.rank == 0) /* the initial state */
        rc = lm_checkpoint_save(o, t, model, opt, 0, samples);
    rc = rc || epochs(o, t, model, opt, trainer, &r, start, samples);
    clrt_trainer_free(trainer);
    clrt_optimizer_free(opt);
    clrt_module_free(model);
    return rc;
}

int lm_train(lm_options *o, const lm_text *t, clrt_device *d)
{
    clrt_dataset *train = NULL, *val = NULL;
    printf("text %s: %lld characters, vocabulary of %d\n", o->text, (long long)t->n, t->vocab);
    int rc = make_data(o, t, &train, &val) || run(o, t, d, train, val);
    clrt_dataset_free(train);
    clrt_dataset_free(val);
    return rc;
}
