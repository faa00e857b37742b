/* --save / --resume: the model (safetensors under clrt_gpt's PyTorch
 * names) and the AdamW state, one pair per save (clrt/checkpoint.h). The
 * pair records the model's shape and vocabulary, which --sample reads back
 * to rebuild the model, and the data and recipe a resumed run must share. */
#include "lm.h"

#include <string.h>

/* The description, and the room for the vocabulary's hex. */
typedef struct {
    app_run_desc d;
    char vocab[2 * 256 + 1];
} run_desc;

static void describe(const lm_options *o, const lm_text *t, int64_t train_samples, run_desc *r)
{
    r->d.n = 0;
    lm_vocab_hex(t, r->vocab, sizeof r->vocab);
    app_run_pair(&r->d, "vocab", r->vocab);
    app_run_put(&r->d, "block", "%d", o->block);
    app_run_put(&r->d, "d_model", "%d", o->d_model);
    app_run_put(&r->d, "heads", "%d", o->heads);
    app_run_put(&r->d, "layers", "%d", o->layers);
    app_run_put(&r->d, "dim_ff", "%d", o->dim_ff);
    app_run_put(&r->d, "dropout", "%.17g", o->dropout);
    app_run_put(&r->d, "text", "%.79s", o->text);
    app_run_put(&r->d, "training samples", "%lld", (long long)train_samples);
    app_run_put(&r->d, "batch-size", "%d", o->batch_size);
    app_run_put(&r->d, "seed", "%llu", (unsigned long long)o->seed);
    app_run_put(&r->d, "lr", "%.17g", o->lr);
    app_run_put(&r->d, "min-lr", "%.17g", o->min_lr);
    app_run_put(&r->d, "weight-decay", "%.17g", o->weight_decay);
    if (o->constant)
        app_run_put(&r->d, "schedule", "constant");
    else
        app_run_put(&r->d, "schedule", "warm-up %d then cosine over %d epochs", o->warmup,
                    o->epochs);
}

int lm_checkpoint_save(const lm_options *o, const lm_text *t, clrt_module *model,
                       clrt_optimizer *opt, int epochs, int64_t train_samples)
{
    run_desc r;
    describe(o, t, train_samples, &r);
    if (clrt_checkpoint_save(o->save, model, opt, epochs, r.d.n, r.d.pairs) != CLRT_OK) {
        fprintf(stderr, "clrt-lm: --save: %s\n", clrt_last_error());
        return 1;
    }
    return 0;
}

int lm_checkpoint_resume(const lm_options *o, const lm_text *t, clrt_module *model,
                         clrt_optimizer *opt, int64_t train_samples, int *done)
{
    run_desc r;
    int64_t epochs = 0;
    describe(o, t, train_samples, &r);
    if (clrt_checkpoint_load(o->resume, model, opt, r.d.n, r.d.pairs, &epochs) != CLRT_OK) {
        fprintf(stderr, "clrt-lm: --resume: %s\n", clrt_last_error());
        return 1;
    }
    *done = (int)epochs;
    return 0;
}
