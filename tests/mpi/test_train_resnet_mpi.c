/* ResNet-18 (small stem) trained across two MPI ranks, one PoCL device
 * each, with PyTorch DDP's semantics: each rank's BatchNorm normalises its
 * own half of every batch, and after each of 20 steps both ranks hold the
 * same parameters and buffers (running statistics), bit for bit: a hash
 * of every value, compared over the ranks. After the last step the whole
 * saved state (num_batches_tracked included) is the same file on both.
 * Run under mpirun -np 2; not a check suite (see test_train_mpi.c). */
#include "testutil.h"
#include <clrt/mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BATCH 16
#define STEPS 20
#define MAX_TENSORS 256

static int rank, failures;

static void failed_when(int bad, const char *what)
{
    if (bad) {
        fprintf(stderr, "rank %d: FAIL: %s\n", rank, what);
        failures++;
    }
}

static void *need(void *p, const char *what)
{
    if (!p) {
        fprintf(stderr, "rank %d: FAIL: %s: %s\n", rank, what, clrt_last_error());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return p;
}

static uint64_t fnv(uint64_t h, const void *data, size_t n)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ULL;
    return h;
}

/* A hash of every parameter and buffer value, read from the device. */
static uint64_t state_hash(clrt_module *m)
{
    clrt_tensor *t[MAX_TENSORS];
    int np = clrt_module_parameters(m, NULL, t, NULL, MAX_TENSORS);
    int nb = clrt_module_buffers(m, NULL, t + np, MAX_TENSORS - np);
    uint64_t h = 0xcbf29ce484222325ULL;
    for (int i = 0; i < np + nb; i++) {
        size_t bytes = clrt_tensor_nbytes(t[i]);
        void *host = need(malloc(bytes), "malloc");
        if (clrt_to_host(t[i], host, bytes) != CLRT_OK)
            need(NULL, "clrt_to_host");
        h = fnv(h, host, bytes);
        free(host);
    }
    return h;
}

static int same_on_every_rank(uint64_t h)
{
    unsigned long long v = h, lo, hi;
    MPI_Allreduce(&v, &lo, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&v, &hi, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    return lo == hi;
}

typedef struct {
    clrt_module *model;
    int steps;
} watch;

/* After each step (the progress callback): the ranks' states agree. */
static void after_step(void *ctx, clrt_phase phase, int epoch, int64_t done, int64_t total)
{
    watch *w = ctx;
    (void)epoch, (void)done, (void)total;
    if (phase != CLRT_PHASE_TRAIN)
        return;
    w->steps++;
    char what[96];
    snprintf(what, sizeof what, "step %d: the ranks' parameters and buffers differ", w->steps);
    failed_when(!same_on_every_rank(state_hash(w->model)), what);
}

/* The saved state file's bytes, hashed. */
static uint64_t file_hash(const char *path)
{
    FILE *f = need(fopen(path, "rb"), path);
    uint64_t h = 0xcbf29ce484222325ULL;
    unsigned char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        h = fnv(h, buf, n);
    fclose(f);
    return h;
}

int main(int argc, char **argv)
{
    int provided, size;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        fprintf(stderr, "run with mpirun -np 2\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    clrt_collective *world = need(clrt_mpi_collective(MPI_COMM_WORLD), "clrt_mpi_collective");
    clrt_device *d = need(clrt_device_at(rank % clrt_device_count()), "device");
    need(clrt_set_default_device(d) == CLRT_OK ? d : NULL, "clrt_set_default_device");
    clrt_dataset *ds = need(clrt_dataset_fashion_mnist(NULL, 1), "Fashion-MNIST");
    need(clrt_dataset_limit(ds, STEPS * BATCH) == CLRT_OK ? ds : NULL, "clrt_dataset_limit");
    unsigned long long seed = (unsigned long long)time(NULL);
    MPI_Bcast(&seed, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
    clrt_module *m = need(clrt_resnet18(1, 10, CLRT_RESNET_SMALL), "clrt_resnet18");
    need(clrt_module_init(m, seed) == CLRT_OK ? m : NULL, "clrt_module_init");
    clrt_tensor *params[MAX_TENSORS], *grads[MAX_TENSORS];
    int n = clrt_module_parameters(m, NULL, params, grads, MAX_TENSORS);
    clrt_optimizer *opt = need(clrt_sgd(n, params, grads, 0.05, 0.9, 5e-4), "clrt_sgd");
    watch w = {m, 0};
    clrt_train_config cfg = clrt_train_defaults();
    cfg.epochs = 1, cfg.batch_size = BATCH, cfg.seed = seed, cfg.augment = 4, cfg.evaluate = 0;
    cfg.device = d, cfg.world = world, cfg.progress = after_step, cfg.ctx = &w;
    clrt_trainer *t = need(clrt_trainer_new(m, opt, ds, NULL, &cfg), "clrt_trainer_new");
    clrt_epoch_stats s;
    need(clrt_trainer_epoch(t, &s) == CLRT_OK ? t : NULL, "clrt_trainer_epoch");
    failed_when(w.steps != STEPS, "not 20 steps");
    char path[256];
    snprintf(path, sizeof path, "/tmp/clrt-resnet-mpi-%d-%d.safetensors", (int)getpid(), rank);
    need(clrt_module_save(m, path) == CLRT_OK ? m : NULL, "clrt_module_save");
    failed_when(!same_on_every_rank(file_hash(path)), "the saved states differ");
    remove(path);
    clrt_trainer_free(t);
    clrt_optimizer_free(opt);
    clrt_module_free(m);
    clrt_dataset_free(ds);
    clrt_mpi_collective_free(world);
    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s: %d failed checks over the ranks, %d steps each\n", all ? "FAILED" : "passed",
               all, w.steps);
    MPI_Finalize();
    return all ? 1 : 0;
}
