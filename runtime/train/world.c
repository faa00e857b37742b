/* The trainer across processes: start-up agreement, parameter broadcast
 * and metric sums over a clrt_collective (world_internal.h). */
#include "runtime/train/world_internal.h"
#include "runtime/core/alloc_internal.h"
#include "runtime/device/cache_internal.h"

#include <stdlib.h>
#include <string.h>

enum { N_TERMS = 9 };

/* What every process must have in common, in the order of `term_names`. */
static const char *const term_names[N_TERMS] = {"parameter tensors",
                                                "parameter floats",
                                                "parameter shapes (hash)",
                                                "seed",
                                                "batch size",
                                                "training samples",
                                                "test samples",
                                                "options (bits: step_losses 1, evaluate 2)",
                                                "start epoch"};

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

static void my_terms(clrt_module *m, const clrt_train_config *cfg, const clrt_dataset *train,
                     const clrt_dataset *test, uint64_t *t)
{
    int n = clrt_module_parameters(m, NULL, NULL, NULL, 0);
    t[0] = (uint64_t)n;
    t[1] = (uint64_t)clrt_module_param_count(m);
    t[2] = shapes_hash(m, n);
    t[3] = cfg->seed;
    t[4] = (uint64_t)cfg->batch_size;
    t[5] = (uint64_t)clrt_dataset_size(train);
    t[6] = test ? (uint64_t)clrt_dataset_size(test) : 0;
    t[7] = (cfg->step_losses ? 1u : 0u) | (test && cfg->evaluate ? 2u : 0u);
    t[8] = (uint64_t)(cfg->start_epoch > 0 ? cfg->start_epoch : 0);
}

/* The first rank whose flag is set, or -1. */
static int first_flagged(const double *flags, int n)
{
    for (int r = 0; r < n; r++)
        if (flags[r] != 0)
            return r;
    return -1;
}

/* Compares mine[0..n) with rank 0's on every process. flags[r] is rank r's
 * first differing term + 1 (0: none), summed over the group so that every
 * process learns who differs and fails alike. */
static clrt_status compare_terms(const clrt_collective *w, const uint64_t *mine,
                                 const char *const *names, int n, const char *api)
{
    uint64_t root[N_TERMS];
    double *flags = clrt__calloc((size_t)w->size, sizeof *flags);
    if (!flags)
        return clrt__fail(CLRT_ENOMEM, "%s: out of host memory", api);
    memcpy(root, mine, sizeof(uint64_t) * (size_t)n);
    clrt_status st = w->broadcast(w->ctx, root, sizeof(uint64_t) * (size_t)n, 0);
    int diff = 0;
    while (diff < n && root[diff] == mine[diff])
        diff++;
    flags[w->rank] = diff < n ? diff + 1 : 0;
    if (st == CLRT_OK)
        st = w->sum_f64(w->ctx, flags, w->size);
    int r = st == CLRT_OK ? first_flagged(flags, w->size) : -1;
    if (r >= 0 && diff < n)
        st = clrt__fail(CLRT_EINVAL,
                        "%s: this process (rank %d of %d) has %s %llu but rank 0 has %llu: every "
                        "process of a distributed run must build the same model and use the same "
                        "seed, batch size and data",
                        api, w->rank, w->size, names[diff], (unsigned long long)mine[diff],
                        (unsigned long long)root[diff]);
    else if (r >= 0)
        st = clrt__fail(CLRT_EINVAL,
                        "%s: rank %d of %d differs from rank 0 in its %s (its own error says "
                        "how)",
                        api, r, w->size, names[(int)flags[r] - 1]);
    free(flags);
    return st;
}

clrt_status clrt__world_agree(const clrt_collective *w, clrt_module *model,
                              const clrt_train_config *cfg, const clrt_dataset *train,
                              const clrt_dataset *test)
{
    uint64_t t[N_TERMS];
    if (clrt__world_size(w) == 1)
        return CLRT_OK;
    my_terms(model, cfg, train, test, t);
    return compare_terms(w, t, term_names, N_TERMS, "clrt_trainer_new (distributed)");
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

clrt_status clrt__world_broadcast_params(const clrt_collective *w, clrt_module *model)
{
    static const char *const names[1] = {"parameter values (hash, after the broadcast)"};
    if (clrt__world_size(w) == 1)
        return CLRT_OK;
    clrt_tensor **p = NULL;
    int n = 0;
    int64_t numel = 0;
    clrt_status st = state_tensors(model, &p, &n, &numel);
    float *flat = st == CLRT_OK ? clrt__malloc((size_t)numel * sizeof(float) + 1) : NULL;
    uint64_t hash = 0;
    if (st == CLRT_OK && !flat)
        st = clrt__fail(CLRT_ENOMEM, "clrt_trainer_new: out of host memory for the parameter "
                                     "broadcast");
    if (st == CLRT_OK)
        st = receive_params(w, p, n, flat, numel, &hash);
    if (st == CLRT_OK)
        st = broadcast_counters(w, model);
    if (st == CLRT_OK)
        st = compare_terms(w, &hash, names, 1, "clrt_trainer_new (distributed)");
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
