/* The trainer across processes: start-up agreement, parameter broadcast
 * and metric sums over a clrt_collective (world_internal.h). */
#include "runtime/train/world_internal.h"
#include "runtime/core/alloc_internal.h"
#include "runtime/device/cache_internal.h"
#include "runtime/optim/optim_internal.h"

#include <stdio.h>

#include <stdlib.h>
#include <string.h>

#define AGREE_MAX 64  /* items one agreement compares */
#define VALUE_CAP 160 /* a value as quoted in the message */
#define TERM_CAP 128  /* a trainer term's value */

static const uint8_t hash_key[CLRT__CACHE_KEY_BYTES]; /* a fixed key: a checksum */

/* A hash of every parameter's ndim and shape, in order. */
static uint64_t shapes_hash(clrt_module *m, int n)
{
    size_t row = CLRT_MAX_DIMS + 1;
    clrt_tensor **p = NULL;
    int64_t *dims = clrt__calloc((size_t)n * row + 1, sizeof *dims);
    uint64_t h = 0;
    if (dims && clrt__module_param_arrays(m, &p, NULL) == n) {
        for (int i = 0; i < n; i++) {
            dims[(size_t)i * row] = p[i]->ndim;
            memcpy(dims + (size_t)i * row + 1, p[i]->shape, sizeof(int64_t) * (size_t)p[i]->ndim);
        }
        h = clrt__siphash24(hash_key, dims, sizeof(int64_t) * (size_t)n * row);
    }
    free(dims);
    free(p);
    return h;
}

/* name and value as one hash: the name is part of what is compared. */
static uint64_t item_hash(const char *name, const char *value)
{
    size_t a = strlen(name), b = strlen(value);
    char *both = clrt__malloc(a + b + 2);
    if (!both)
        return 0;
    memcpy(both, name, a + 1);
    memcpy(both + a + 1, value, b + 1);
    uint64_t h = clrt__siphash24(hash_key, both, a + b + 2);
    free(both);
    return h;
}

/* The first rank whose flag is set, or -1. */
static int first_flagged(const double *flags, int n)
{
    for (int r = 0; r < n; r++)
        if (flags[r] != 0)
            return r;
    return -1;
}

/* Every process learns the first process that differs and its first
 * differing item (flags[r] = item + 1, summed over the group); then that
 * process's value and rank 0's are broadcast so the message is one. */
static clrt_status report(const clrt_collective *w, const double *flags, const char *const *names,
                          const char *const *values, const char *what)
{
    char vr[VALUE_CAP] = "", v0[VALUE_CAP] = "";
    int r = first_flagged(flags, w->size), item = (int)flags[r] - 1;
    if (w->rank == r)
        snprintf(vr, sizeof vr, "%s", values[item]);
    if (w->rank == 0)
        snprintf(v0, sizeof v0, "%s", values[item]);
    clrt_status st = w->broadcast(w->ctx, vr, sizeof vr, r);
    if (st == CLRT_OK)
        st = w->broadcast(w->ctx, v0, sizeof v0, 0);
    if (st != CLRT_OK)
        return st;
    vr[VALUE_CAP - 1] = v0[VALUE_CAP - 1] = '\0';
    return clrt__fail(CLRT_EINVAL,
                      "%s: rank %d of %d has %s '%s' but rank 0 has '%s': every process of a "
                      "distributed run must have the same",
                      what, r, w->size, names[item], vr, v0);
}

clrt_status clrt_collective_agree(const clrt_collective *w, int n, const char *const *names,
                                  const char *const *values, const char *what)
{
    uint64_t mine[AGREE_MAX], root[AGREE_MAX];
    what = what ? what : "clrt_collective_agree";
    if (n < 0 || n > AGREE_MAX || (n > 0 && (!names || !values)))
        return clrt__fail(CLRT_EINVAL, "%s: %d items (0 to %d, with names and values)", what, n,
                          AGREE_MAX);
    for (int i = 0; i < n; i++)
        if (!names[i] || !values[i])
            return clrt__fail(CLRT_EINVAL, "%s: item %d has a NULL name or value", what, i);
    if (clrt__world_size(w) == 1)
        return CLRT_OK;
    double *flags = clrt__calloc((size_t)w->size, sizeof *flags);
    if (!flags)
        return clrt__fail(CLRT_ENOMEM, "%s: out of host memory", what);
    for (int i = 0; i < n; i++)
        mine[i] = root[i] = item_hash(names[i], values[i]);
    clrt_status st = w->broadcast(w->ctx, root, sizeof(uint64_t) * (size_t)n, 0);
    int diff = 0;
    while (diff < n && root[diff] == mine[diff])
        diff++;
    flags[w->rank] = diff < n ? diff + 1 : 0;
    if (st == CLRT_OK)
        st = w->sum_f64(w->ctx, flags, w->size);
    if (st == CLRT_OK && first_flagged(flags, w->size) >= 0)
        st = report(w, flags, names, values, what);
    free(flags);
    return st;
}

/* What every process must have in common to train together. */
enum { N_TERMS = 16 };
static const char *const term_names[N_TERMS] = {"parameter tensors",
                                                "parameter floats",
                                                "parameter shapes (hash)",
                                                "seed",
                                                "batch size",
                                                "training samples",
                                                "test samples",
                                                "options (step_losses, evaluate)",
                                                "augmentation (padding pixels)",
                                                "start epoch",
                                                "epochs (cfg.epochs)",
                                                "devices in the process",
                                                "optimizer",
                                                "learning rate",
                                                "optimizer hyperparameters",
                                                "optimizer steps"};

static void my_terms(clrt_module *m, const clrt_optimizer *o, int n_dev,
                     const clrt_train_config *cfg, const clrt_dataset *train,
                     const clrt_dataset *test, char (*t)[TERM_CAP])
{
    int n = clrt_module_parameters(m, NULL, NULL, NULL, 0), k = 0;
    snprintf(t[k++], TERM_CAP, "%d", n);
    snprintf(t[k++], TERM_CAP, "%lld", (long long)clrt_module_param_count(m));
    snprintf(t[k++], TERM_CAP, "%016llx", (unsigned long long)shapes_hash(m, n));
    snprintf(t[k++], TERM_CAP, "%llu", (unsigned long long)cfg->seed);
    snprintf(t[k++], TERM_CAP, "%d", cfg->batch_size);
    snprintf(t[k++], TERM_CAP, "%lld", (long long)clrt_dataset_size(train));
    snprintf(t[k++], TERM_CAP, "%lld", test ? (long long)clrt_dataset_size(test) : 0LL);
    snprintf(t[k++], TERM_CAP, "%d, %d", cfg->step_losses != 0, test && cfg->evaluate);
    snprintf(t[k++], TERM_CAP, "%d", cfg->augment);
    snprintf(t[k++], TERM_CAP, "%d", cfg->start_epoch);
    snprintf(t[k++], TERM_CAP, "%d", cfg->epochs);
    snprintf(t[k++], TERM_CAP, "%d", n_dev);
    snprintf(t[k++], TERM_CAP, "%s (%s)", o->kind->name, o->kind->kernel);
    snprintf(t[k++], TERM_CAP, "%.17g", o->lr);
    snprintf(t[k++], TERM_CAP, "momentum %.9g, betas %.9g %.9g, eps %.9g, weight decay %.9g",
             o->momentum, o->beta1, o->beta2, o->eps, o->weight_decay);
    snprintf(t[k++], TERM_CAP, "%lld", (long long)o->steps);
}

clrt_status clrt__world_agree(const clrt_collective *w, clrt_module *model,
                              const clrt_optimizer *opt, int n_devices,
                              const clrt_train_config *cfg, const clrt_dataset *train,
                              const clrt_dataset *test)
{
    char terms[N_TERMS][TERM_CAP];
    const char *values[N_TERMS];
    if (clrt__world_size(w) == 1)
        return CLRT_OK;
    my_terms(model, opt, n_devices, cfg, train, test, terms);
    for (int i = 0; i < N_TERMS; i++)
        values[i] = terms[i];
    return clrt_collective_agree(w, N_TERMS, term_names, values, "clrt_trainer_new (distributed)");
}

clrt_status clrt__world_agree_epoch(const clrt_collective *w, int epoch, double lr)
{
    static const char *const names[2] = {"epoch", "learning rate"};
    char e[24], l[40];
    const char *values[2] = {e, l};
    snprintf(e, sizeof e, "%d", epoch);
    snprintf(l, sizeof l, "%.17g", lr);
    return clrt__world_size(w) == 1
               ? CLRT_OK
               : clrt_collective_agree(w, 2, names, values, "clrt_trainer_epoch (distributed)");
}

/* Copies every parameter into (to_host) or out of flat, blocking. */
static clrt_status copy_params(clrt_tensor **p, int n, float *flat, int to_host)
{
    clrt_status st = CLRT_OK;
    for (int i = 0; i < n && st == CLRT_OK; i++) {
        size_t bytes = clrt_tensor_nbytes(p[i]);
        st = to_host ? clrt_to_host(p[i], flat, bytes) : clrt_copy_from_host(p[i], flat, bytes);
        flat += clrt_tensor_numel(p[i]);
    }
    return st;
}

/* Rank 0's parameter values from its device to every other process's;
 * *hash: of what rank 0 sent, elsewhere of what was read back from the
 * device after the write. */
static clrt_status receive_params(const clrt_collective *w, clrt_tensor **p, int n, float *flat,
                                  int64_t numel, uint64_t *hash)
{
    size_t bytes = (size_t)numel * sizeof(float);
    clrt_status st = w->rank == 0 ? copy_params(p, n, flat, 1) : CLRT_OK;
    if (st == CLRT_OK)
        st = w->broadcast(w->ctx, flat, bytes, 0);
    if (st == CLRT_OK && w->rank != 0)
        st = copy_params(p, n, flat, 0);
    if (st == CLRT_OK && w->rank != 0)
        st = copy_params(p, n, flat, 1);
    *hash = st == CLRT_OK ? clrt__siphash24(hash_key, flat, bytes) : 0;
    return st;
}

/* The model's parameters then buffers, as one new array (*t) of *n
 * tensors holding *numel floats. */
static clrt_status state_tensors(clrt_module *model, clrt_tensor ***t, int *n, int64_t *numel)
{
    clrt_tensor **p = NULL, **b = NULL;
    int np = clrt__module_param_arrays(model, &p, NULL);
    int nb = np < 0 ? np : clrt__module_buffer_arrays(model, &b);
    *t = nb >= 0 ? clrt__calloc((size_t)(np + nb) + 1, sizeof **t) : NULL;
    clrt_status st = nb < 0 ? (clrt_status)nb
                     : !*t  ? clrt__fail(CLRT_ENOMEM, "clrt_trainer_new: out of host memory")
                            : CLRT_OK;
    *n = 0, *numel = 0;
    for (int i = 0; st == CLRT_OK && i < np + nb; i++) {
        (*t)[(*n)++] = i < np ? p[i] : b[i - np];
        *numel += clrt_tensor_numel((*t)[i]);
    }
    free(p);
    free(b);
    return st;
}

/* Rank 0's host counters (num_batches_tracked) to every process. */
static clrt_status broadcast_counters(const clrt_collective *w, clrt_module *model)
{
    int64_t **c = NULL;
    int n = clrt__module_counter_arrays(model, &c);
    int64_t *v = n > 0 ? clrt__calloc((size_t)n, sizeof *v) : NULL;
    clrt_status st = n < 0         ? (clrt_status)n
                     : n > 0 && !v ? clrt__fail(CLRT_ENOMEM, "clrt_trainer_new: out of host "
                                                             "memory")
                                   : CLRT_OK;
    for (int i = 0; st == CLRT_OK && i < n; i++)
        v[i] = *c[i];
    if (st == CLRT_OK && n > 0)
        st = w->broadcast(w->ctx, v, (size_t)n * sizeof *v, 0);
    for (int i = 0; st == CLRT_OK && i < n; i++)
        *c[i] = v[i];
    free(v);
    free(c);
    return st;
}

/* A hash of the optimizer's state, read from its device. */
static clrt_status state_hash(const clrt_optimizer *o, uint64_t *hash)
{
    int count = o->n * o->kind->n_state;
    size_t total = 0;
    for (int k = 0; k < count; k++)
        total += clrt_tensor_nbytes(o->state[k]);
    unsigned char *all = clrt__malloc(total + 1), *at = all;
    clrt_status st = all ? CLRT_OK
                         : clrt__fail(CLRT_ENOMEM, "clrt_trainer_new: out of host memory for "
                                                   "the optimizer state's hash");
    for (int k = 0; k < count && st == CLRT_OK; k++) {
        st = clrt_to_host(o->state[k], at, clrt_tensor_nbytes(o->state[k]));
        at += clrt_tensor_nbytes(o->state[k]);
    }
    *hash = st == CLRT_OK ? clrt__siphash24(hash_key, all, total) : 0;
    free(all);
    return st;
}

clrt_status clrt__world_broadcast_params(const clrt_collective *w, clrt_module *model,
                                         const clrt_optimizer *opt)
{
    static const char *const names[2] = {"parameter values (hash, after the broadcast)",
                                         "optimizer state (hash; resume every process from "
                                         "the same checkpoint)"};
    if (clrt__world_size(w) == 1)
        return CLRT_OK;
    clrt_tensor **p = NULL;
    int n = 0;
    int64_t numel = 0;
    clrt_status st = state_tensors(model, &p, &n, &numel);
    float *flat = st == CLRT_OK ? clrt__malloc((size_t)numel * sizeof(float) + 1) : NULL;
    uint64_t hash[2] = {0, 0};
    char h[2][24];
    const char *values[2] = {h[0], h[1]};
    if (st == CLRT_OK && !flat)
        st = clrt__fail(CLRT_ENOMEM, "clrt_trainer_new: out of host memory for the parameter "
                                     "broadcast");
    if (st == CLRT_OK)
        st = receive_params(w, p, n, flat, numel, &hash[0]);
    if (st == CLRT_OK)
        st = broadcast_counters(w, model);
    if (st == CLRT_OK) { /* a state this process cannot read still takes part */
        int readable = state_hash(opt, &hash[1]) == CLRT_OK;
        snprintf(h[0], sizeof h[0], "%016llx", (unsigned long long)hash[0]);
        snprintf(h[1], sizeof h[1], readable ? "%016llx" : "unreadable",
                 (unsigned long long)hash[1]);
        st = clrt_collective_agree(w, 2, names, values, "clrt_trainer_new (distributed)");
    }
    free(flat);
    free(p);
    return st;
}

clrt_status clrt__world_sum(const clrt_collective *w, double *v, int64_t n)
{
    return clrt__world_size(w) == 1 ? CLRT_OK : w->sum_f64(w->ctx, v, n);
}

clrt_status clrt__world_sum_f32(const clrt_collective *w, float *v, int64_t n)
{
    return clrt__world_size(w) == 1 ? CLRT_OK : w->sum_f32(w->ctx, v, n);
}
