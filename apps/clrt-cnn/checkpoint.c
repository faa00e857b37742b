/* --save / --resume: the model in PATH (safetensors, loadable by PyTorch)
 * and the optimizer's state in PATH.optim, one pair written by one save
 * (clrt/checkpoint.h). The pair records the epochs done and the options
 * that shape the computation; a resume must give the same ones, so that it
 * continues as if never stopped. The cosine schedule spans the epochs
 * planned at the start, so under it --epochs is one of them. */
#include "cnn.h"

#include <clrt/checkpoint.h>
#include <stdio.h>
#include <string.h>

static void describe(const cnn_options *o, int64_t train_samples, app_run_desc *r)
{
    r->n = 0;
    app_run_put(r, "model", "%s", o->model);
    app_run_put(r, "dataset", "%s", o->dataset);
    app_run_put(r, "training samples", "%lld", (long long)train_samples);
    app_run_put(r, "batch-size", "%d", o->batch_size);
    app_run_put(r, "seed", "%llu", (unsigned long long)o->seed);
    app_run_put(r, "optimizer", "%s", o->optimizer);
    app_run_put(r, "lr", "%.17g", o->lr);
    if (strcmp(o->optimizer, "sgd") == 0)
        app_run_put(r, "momentum", "%.17g", o->momentum);
    app_run_put(r, "weight-decay", "%.17g", o->weight_decay);
    app_run_put(r, "augment", "%s", o->augment ? "on" : "off");
    if (o->cosine)
        app_run_put(r, "schedule", "cosine over %d epochs", o->epochs);
    else
        app_run_put(r, "schedule", "constant");
}

int cnn_checkpoint_save(const cnn_options *o, clrt_module *model, clrt_optimizer *opt, int epochs,
                        int64_t train_samples)
{
    app_run_desc r;
    describe(o, train_samples, &r);
    if (clrt_checkpoint_save(o->save, model, opt, epochs, r.n, r.pairs) != CLRT_OK) {
        fprintf(stderr, "clrt-cnn: --save: %s\n", clrt_last_error());
        return 1;
    }
    return 0;
}

int cnn_checkpoint_resume(const cnn_options *o, clrt_module *model, clrt_optimizer *opt,
                          int64_t steps_per_epoch, int64_t train_samples, int *done)
{
    app_run_desc r;
    int64_t epochs = 0;
    describe(o, train_samples, &r);
    if (clrt_checkpoint_load(o->resume, model, opt, r.n, r.pairs, &epochs) != CLRT_OK) {
        fprintf(stderr, "clrt-cnn: --resume: %s\n", clrt_last_error());
        if (strstr(clrt_last_error(), "schedule 'cosine"))
            fprintf(stderr, "clrt-cnn: --resume: the cosine schedule spans the epochs planned "
                            "when the run began: resume with the same --epochs, or use "
                            "--schedule constant from the start to extend a run\n");
        return 1;
    }
    int64_t steps = clrt_optimizer_steps(opt);
    if (steps_per_epoch <= 0 || steps % steps_per_epoch != 0 || steps / steps_per_epoch != epochs) {
        fprintf(stderr,
                "clrt-cnn: --resume: %s.optim holds %lld optimizer steps at epoch %lld, not "
                "%lld steps per epoch\n",
                o->resume, (long long)steps, (long long)epochs, (long long)steps_per_epoch);
        return 1;
    }
    *done = (int)epochs; /* at most INT32_MAX (clrt_checkpoint_load checks) */
    return 0;
}
