/* --save / --resume: the model (safetensors under clrt_gpt's PyTorch
 * names) and the AdamW state, one pair per save (clrt/checkpoint.h). The
 * pair records the model's shape and vocabulary, which --sample reads back
 * to rebuild the model, and the data and recipe a resumed run must share. */
#include "lm.h"

#include <stdarg.h>
#include <string.h>

enum { MAX_KEYS = 20 };

typedef struct {
    char values[MAX_KEYS][80];
    char vocab[2 * 256 + 1];
    const char *pairs[2 * MAX_KEYS];
    int n;
} run_desc;

static void put(run_desc *r, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void put(run_desc *r, const char *key, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->values[r->n], sizeof r->values[r->n], fmt, ap);
    va_end(ap);
    r->pairs[2 * r->n] = key;
    r->pairs[2 * r->n + 1] = r->values[r->n];
    r->n++;
}

static void describe(const lm_options *o, const lm_text *t, int64_t train_samples, run_desc *r)
{
    r->n = 0;
    lm_vocab_hex(t, r->vocab, sizeof r->vocab);
    r->pairs[0] = "vocab";
    r->pairs[1] = r->vocab;
    r->n = 1;
    put(r, "block", "%d", o->block);
    put(r, "d_model", "%d", o->d_model);
    put(r, "heads", "%d", o->heads);
    put(r, "layers", "%d", o->layers);
    put(r, "dim_ff", "%d", o->dim_ff);
    put(r, "dropout", "%.17g", o->dropout);
    put(r, "text", "%.79s", o->text);
    put(r, "training samples", "%lld", (long long)train_samples);
    put(r, "batch-size", "%d", o->batch_size);
    put(r, "seed", "%llu", (unsigned long long)o->seed);
    put(r, "lr", "%.17g", o->lr);
    put(r, "min-lr", "%.17g", o->min_lr);
    put(r, "weight-decay", "%.17g", o->weight_decay);
    if (o->constant)
        put(r, "schedule", "constant");
    else
        put(r, "schedule", "warm-up %d then cosine over %d epochs", o->warmup, o->epochs);
}

int lm_checkpoint_save(const lm_options *o, const lm_text *t, clrt_module *model,
                       clrt_optimizer *opt, int epochs, int64_t train_samples)
{
    run_desc r;
    describe(o, t, train_samples, &r);
    if (clrt_checkpoint_save(o->save, model, opt, epochs, r.n, r.pairs) != CLRT_OK) {
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
    if (clrt_checkpoint_load(o->resume, model, opt, r.n, r.pairs, &epochs) != CLRT_OK) {
        fprintf(stderr, "clrt-lm: --resume: %s\n", clrt_last_error());
        return 1;
    }
    *done = (int)epochs;
    return 0;
}
