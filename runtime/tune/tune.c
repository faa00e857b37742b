/* clrt_kernels_tune (clrt/tune.h): for each model, one training step in
 * which the convolutions report their passes (clrt__conv_tuner), the item
 * block search over those passes (tune_blocks.c), then each distinct pass
 * with a choice run once more in the tuner's measuring mode, which times
 * its candidate algorithms in alternating rounds and replaces its record
 * (ops/conv/conv_choice.c). */
#include "runtime/tune/tune_internal.h"

#include <clrt/nn.h>
#include <clrt/tensor.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_MODELS "lenet:256,seed-cnn:256,resnet18:128"
#define DEFAULT_ROUNDS 5

static const char *const algo_names[] = {"", "im2col", "vec", "", "winograd"};
static const char *const pass_names[] = {"forward", "input", "weight"};

/* The model `name` and its input's [C, H, W], or NULL with an error. */
static clrt_module *make_model(const char *name, int64_t chw[3])
{
    if (strcmp(name, "lenet") == 0) {
        chw[0] = 1, chw[1] = chw[2] = 28;
        return clrt_lenet(chw, 10);
    }
    chw[0] = 3, chw[1] = chw[2] = 32;
    if (strcmp(name, "seed-cnn") == 0)
        return clrt_seed_cnn(10);
    if (strcmp(name, "resnet18") == 0)
        return clrt_resnet18(3, 10, CLRT_RESNET_SMALL);
    if (strcmp(name, "resnet18-224") == 0) {
        chw[1] = chw[2] = 224;
        return clrt_resnet18(3, 1000, CLRT_RESNET_IMAGENET);
    }
    clrt__fail(CLRT_EINVAL,
               "clrt_kernels_tune: unknown model '%s' (lenet, seed-cnn, resnet18, resnet18-224)",
               name);
    return NULL;
}

/* The tuner's `seen` while a step runs: each distinct pass with a choice. */
static void collect(clrt__conv_tuner *t, const clrt__conv_dims *cd, clrt__conv_pass pass,
                    int applicable, int algo, const double best_s[5])
{
    (void)algo, (void)best_s;
    clrt__tune_passes *list = t->user;
    if ((applicable & (applicable - 1)) == 0 || list->n == CLRT__TUNE_MAX_PASSES)
        return;
    for (int i = 0; i < list->n; i++)
        if (list->v[i].pass == pass && memcmp(&list->v[i].cd, cd, sizeof *cd) == 0)
            return;
    list->v[list->n++] = (clrt__tune_pass){*cd, pass, applicable};
}

/* One training step of m on batch x: forward, a random output gradient,
 * backward into the parameters; waits for it. */
static clrt_status model_step(clrt_device *d, clrt_module *m, clrt_tensor *x)
{
    clrt_tensor *y = clrt_module_forward(m, x), *g = NULL;
    clrt_status st = y ? CLRT_OK : clrt_last_status();
    if (st == CLRT_OK) {
        g = clrt_randn(d, clrt_tensor_ndim(y), clrt_tensor_shape(y), 7);
        st = g ? clrt_module_zero_grad(m) : clrt_last_status();
    }
    if (st == CLRT_OK)
        st = clrt_module_backward_params(m, g);
    if (st == CLRT_OK)
        st = clrt_device_synchronize(d);
    clrt_tensor_release(y);
    clrt_tensor_release(g);
    return st;
}

/* The passes of one step of model `name` at `batch` that have a choice. */
static clrt_status model_passes(clrt_device *d, const char *name, int batch,
                                clrt__tune_passes *list)
{
    int64_t chw[3];
    clrt_module *m = make_model(name, chw);
    if (!m)
        return clrt_last_status();
    int64_t xs[4] = {batch, chw[0], chw[1], chw[2]};
    clrt_tensor *x = clrt_randn(d, 4, xs, 5);
    clrt_status st = x ? clrt_module_to(m, d) : clrt_last_status();
    clrt__conv_tuner see = {.seen = collect, .user = list};
    list->n = 0;
    if (st == CLRT_OK) {
        clrt__conv_tuner_set(&see);
        st = model_step(d, m, x);
        clrt__conv_tuner_set(NULL);
    }
    clrt_tensor_release(x);
    clrt_module_free(m);
    return st;
}

typedef struct {
    const clrt_device *d;
    const char *model;
    clrt_tune_report report;
    void *user;
} algo_report;

/* The tuner's `seen` in the measuring rounds: reports the pass. */
static void report_algo(clrt__conv_tuner *t, const clrt__conv_dims *cd, clrt__conv_pass pass,
                        int applicable, int algo, const double best_s[5])
{
    const algo_report *a = t->user;
    if (!a->report)
        return;
    int def = clrt__conv_default(a->d, cd, pass, applicable), n = 0;
    for (int b = 1; b <= CLRT__ALGO_WINO; b <<= 1)
        n += (applicable & b) != 0;
    clrt_tune_result r = {.what = "conv_algo",
                          .chosen_ms = best_s[algo] < 0 ? -1 : best_s[algo] * 1e3,
                          .default_ms = best_s[def] < 0 ? -1 : best_s[def] * 1e3,
                          .candidates = n};
    snprintf(r.where, sizeof r.where, "%s %s x [%d, %d, %d, %d] w [%d, %d, %d, %d] s%d p%d",
             a->model, pass_names[pass], cd->N, cd->C, cd->H, cd->W, cd->O, cd->C, cd->K, cd->K,
             cd->stride, cd->pad);
    snprintf(r.chosen, sizeof r.chosen, "%s", algo_names[algo]);
    snprintf(r.defaults, sizeof r.defaults, "%s", algo_names[def]);
    a->report(&r, a->user);
}

static clrt_status tune_algorithms(clrt_device *d, const char *model, const clrt__tune_passes *list,
                                   int rounds, clrt_tune_report report, void *user)
{
    algo_report a = {d, model, report, user};
    clrt__conv_tuner measuring = {.rounds = rounds, .seen = report_algo, .user = &a};
    clrt_status st = CLRT_OK;
    for (int i = 0; i < list->n && st == CLRT_OK; i++) {
        clrt__tune_tensors t;
        st = clrt__tune_tensors_make(d, &list->v[i], &t);
        if (st != CLRT_OK)
            break;
        clrt__conv_tuner_set(&measuring);
        if (clrt__tune_run_pass(d, &list->v[i], &t) < 0)
            st = clrt_last_status();
        clrt__conv_tuner_set(NULL);
        clrt__tune_tensors_release(&t);
    }
    return st;
}

/* One "name:batch" entry of the model list. */
typedef struct {
    char name[32];
    int batch;
} model_entry;

#define MAX_MODELS 16

/* The list into out (at most MAX_MODELS): how many, or a negative status
 * naming the entry that is not name:batch of a known model. */
static int parse_models(const char *models, model_entry out[MAX_MODELS])
{
    int n = 0;
    for (const char *p = models; *p; p += strcspn(p, ",") + (p[strcspn(p, ",")] == ',')) {
        size_t len = strcspn(p, ",");
        const char *colon = memchr(p, ':', len);
        char *end = NULL;
        long b = colon ? strtol(colon + 1, &end, 10) : 0;
        if (n == MAX_MODELS)
            return clrt__fail(CLRT_EINVAL, "clrt_kernels_tune: more than %d models", MAX_MODELS);
        if (!colon || (size_t)(colon - p) >= sizeof out[n].name || end != p + len || b < 1 ||
            b > 4096)
            return clrt__fail(CLRT_EINVAL,
                              "clrt_kernels_tune: '%.*s' is not name:batch (e.g. resnet18:128, "
                              "batch 1 to 4096)",
                              (int)len, p);
        memcpy(out[n].name, p, (size_t)(colon - p));
        out[n].name[colon - p] = '\0';
        out[n].batch = (int)b;
        int64_t chw[3];
        clrt_module *m = make_model(out[n].name, chw); /* a known name? */
        if (!m)
            return clrt_last_status();
        clrt_module_free(m);
        n++;
    }
    return n ? n : clrt__fail(CLRT_EINVAL, "clrt_kernels_tune: no model given");
}

static clrt_status tune_model(clrt_device *d, const model_entry *e, int rounds,
                              clrt_tune_report report, void *user)
{
    static _Thread_local clrt__tune_passes list; /* large: not on the stack */
    char where[64];
    snprintf(where, sizeof where, "%.31s:%d", e->name, e->batch);
    clrt_status st = model_passes(d, e->name, e->batch, &list);
    if (st == CLRT_OK)
        st = clrt__tune_item_blocks(d, where, &list, rounds, report, user);
    return st == CLRT_OK ? tune_algorithms(d, where, &list, rounds, report, user) : st;
}

int clrt__tune_rounds(int n, int rounds, clrt__tune_trial trial, void *ctx, double *best_s)
{
    int best = -1;
    for (int c = 0; c < n; c++)
        best_s[c] = -1;
    for (int round = -1; round < rounds; round++)
        for (int c = 0; c < n; c++) {
            double s = trial(c, ctx);
            if (round >= 0 && s >= 0 && (best_s[c] < 0 || s < best_s[c]))
                best_s[c] = s;
        }
    for (int c = 0; c < n; c++)
        if (best_s[c] >= 0 && (best < 0 || best_s[c] < best_s[best]))
            best = c;
    return best;
}

clrt_status clrt_kernels_tune(clrt_device *d, const clrt_tune_options *o, clrt_tune_report report,
                              void *user)
{
    if (!d)
        return clrt__fail(CLRT_EINVAL, "clrt_kernels_tune: device is NULL");
    if (o && (o->rounds < 0 || o->rounds > 100))
        return clrt__fail(CLRT_EINVAL, "clrt_kernels_tune: rounds %d (1 to 100, 0: %d)", o->rounds,
                          DEFAULT_ROUNDS);
    int rounds = o && o->rounds > 0 ? o->rounds : DEFAULT_ROUNDS;
    model_entry models[MAX_MODELS];
    int n = parse_models(o && o->models ? o->models : DEFAULT_MODELS, models);
    clrt_status st = n < 0 ? (clrt_status)n : CLRT_OK;
    for (int i = 0; i < n && st == CLRT_OK; i++)
        st = tune_model(d, &models[i], rounds, report, user);
    return st == CLRT_OK ? clrt__tune_gemm_tile(d, rounds, report, user) : st;
}
