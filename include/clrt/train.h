/* clrt/train.h — the training loop: mini-batch SGD (any clrt_optimizer)
 * with softmax cross-entropy, or a loss of the program's own, on a
 * clrt_dataset (images, or samples of float features), and an evaluation
 * pass.
 *
 * What a step does: the next batch is gathered on the host and uploaded
 * while the device computes the current one (two host staging buffers and
 * two device batches); forward, loss, zero_grad, backward and the optimizer
 * step are only enqueued. Loss sums and correct counts stay on the device
 * and are read once per pass, so nothing in a training step waits for the
 * device except that a staging buffer is reused only after its previous
 * upload has completed (an OpenCL event per buffer).
 *
 * Typical use, as in PyTorch (the optimizer after the move, since its state
 * lives on the parameters' device):
 *
 *   clrt_module_init(model, seed);
 *   clrt_module_to(model, dev);
 *   n = clrt_module_parameters(model, NULL, params, grads, cap);
 *   opt = clrt_sgd(n, params, grads, 0.1, 0.9, 0);
 *   clrt_train_config cfg = clrt_train_defaults();
 *   cfg.epochs = 10;
 *   clrt_train(model, opt, train, test, &cfg, stats);
 *
 * A model with a lazy Linear has no parameters until its first forward:
 * run one forward (e.g. clrt_evaluate on a data set limited to one batch)
 * before collecting its parameters. */
#ifndef CLRT_TRAIN_H
#define CLRT_TRAIN_H
#include <clrt/collective.h>
#include <clrt/data.h>
#include <clrt/nn.h>
#include <clrt/optim.h>
#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    int epoch; /* 1, 2, ... */
    int64_t train_samples;
    int64_t test_samples; /* 0 without a test set */
    double train_loss;    /* mean cross-entropy over the epoch (running model) */
    double train_acc;     /* fraction of training samples classified right */
    double test_loss;     /* NaN without a test set */
    double test_acc;      /* NaN without a test set */
    double train_seconds; /* training pass, until the device has finished it */
    double test_seconds;  /* evaluation pass */
    double seconds;       /* the whole epoch: train_seconds + test_seconds */
    double samples_per_s; /* train_samples / train_seconds */
    /* How the training pass's time splits, measured on the host clock:
     * data_seconds is the host's work on data, gathering (and normalising)
     * batches into the staging buffers and enqueueing their uploads;
     * wait_seconds is the host blocked until a staging buffer's previous
     * upload completed, which on the in-order queue means until the device
     * finished the compute queued before it: device time, not data time.
     * The copies themselves run on the device's queue between compute
     * commands (a memcpy on a CPU device, a DMA on a GPU) and count as
     * compute. When data preparation is the bottleneck, data_share nears 1;
     * when compute is, wait_seconds takes up the difference. */
    double data_seconds;
    double wait_seconds;
    double compute_seconds; /* train_seconds - data_seconds */
    double data_share;      /* data_seconds / train_seconds */
    double lr;              /* the optimizer's learning rate this epoch */
    /* Data-parallel training (several devices): host time spent in the
     * gradient sum (packing, reading, summing, writing back: enqueueing
     * and the host's adds), and the part of it blocked until every
     * device's gradients were read (the devices' compute). 0 on one
     * device. */
    double exchange_seconds;
    double exchange_wait_seconds;
    /* Across processes (cfg.world): the part of exchange_seconds spent in
     * the sum over the processes (MPI_Allreduce), which includes waiting
     * for the slowest process to reach it. 0 in one process. */
    double world_seconds;
    /* With cfg.step_losses: the mean training loss of each of this epoch's
     * `steps` batches, in order (the last batch may be smaller). Kept on
     * the device while the pass runs and read once at its end; owned by
     * the trainer, valid until its next epoch. NULL and 0 otherwise. */
    const float *step_losses;
    int64_t steps;
} clrt_epoch_stats;

typedef enum { CLRT_PHASE_TRAIN, CLRT_PHASE_TEST } clrt_phase;

/* Called after each batch is enqueued (for a progress bar: it never waits
 * for the device): `done` of `total` samples of this pass. */
typedef void (*clrt_progress_fn)(void *ctx, clrt_phase phase, int epoch, int64_t done,
                                 int64_t total);
/* Called after each epoch; return nonzero to stop training early. */
typedef int (*clrt_epoch_fn)(void *ctx, const clrt_epoch_stats *stats);

typedef struct {
    clrt_device *device; /* NULL: wherever the model is */
    /* Data-parallel training over n_devices devices (devices[0] first;
     * NULL/0: one device, as above). The model and optimizer given to the
     * trainer live on devices[0]; the trainer replicates both on the other
     * devices (parameters and optimizer state copied from devices[0]),
     * splits each batch across the devices in near-equal parts (the last
     * batch may leave some device none), enqueues forward and backward on
     * every device before waiting for any, sums the gradients across the
     * devices (weighted by each part's share of the batch, so the result is
     * the batch mean as on one device), and steps each replica's optimizer
     * with the sum, which keeps the replicas identical. The loss and
     * accuracy cover every device; the test pass runs on devices[0]. The
     * replicas take the optimizer's learning rate at each epoch's start. A
     * device listed twice, more devices (over all processes) than the batch size or than
     * CLRT_MAX_DATA_PARALLEL, a `device` other than devices[0]: CLRT_EINVAL.
     * The list is copied. */
    clrt_device *const *devices;
    int n_devices;
    /* Training across processes (clrt/collective.h; clrt/mpi.h makes one
     * from an MPI communicator), NULL: this process alone. Each process
     * trains on its own devices (device/devices above) and every process
     * must make the same calls with the same model, seed, batch size and
     * data, which clrt_trainer_new checks (CLRT_EINVAL on every process,
     * naming what differs). It starts every process from rank 0's
     * parameters (broadcast, then a hash of each process's parameters
     * checked against rank 0's); each global batch, shuffled alike
     * everywhere, is split across all the devices of all the processes
     * (process r's devices take the r-th run of parts), so a batch holds
     * the samples a one-device run's batch holds and each sample is seen
     * once per epoch across the processes; the gradients are summed over
     * every device of every process each step, and the epoch's loss and
     * accuracy (training and test) over the processes, so each process gets
     * the same stats. The test set is split across the processes too.
     * Optimizer state is not broadcast: resume every process from the same
     * checkpoint. Borrowed until the trainer is freed. */
    const clrt_collective *world;
    int epochs; /* for clrt_train */
    int batch_size;
    uint64_t seed;   /* epoch e shuffles with a seed mixed from (seed, e) */
    int step_losses; /* record each training step's loss (see clrt_epoch_stats) */
    int start_epoch; /* epochs already done (resuming a checkpoint): the first
                        epoch run is start_epoch + 1, with that epoch's shuffle */
    int evaluate;    /* run the test pass each epoch (when a test set is given) */
    /* > 0: augment each training sample, torchvision's RandomCrop(size,
     * padding=augment) and RandomHorizontalFlip() (the padding black), on
     * the host while the device computes, each sample's crop and flip from
     * the epoch's seed and its index: the same on any device count. 0: none. */
    int augment;
    /* The loss, when it is not softmax cross-entropy over [N, classes]
     * outputs (NULL, the default): a one-element float32 tensor, the mean
     * over the batch's samples, from the model's output and the batch's
     * labels ([N] int32), computed with recorded ops (clrt/autograd.h) so
     * that clrt_backward runs it backward (in the test pass, with grad
     * mode off). It gets `ctx`. The epoch's accuracy is then counted only
     * where the output is [N, classes] (else NaN). */
    clrt_tensor *(*loss)(void *ctx, clrt_tensor *output, clrt_tensor *labels);
    clrt_progress_fn progress; /* may be NULL */
    clrt_epoch_fn on_epoch;    /* may be NULL */
    void *ctx;                 /* passed to the callbacks */
} clrt_train_config;

#define CLRT_MAX_DATA_PARALLEL 16

/* epochs 10, batch_size 256, seed 0, evaluate 1, no callbacks, one device. */
CLRT_API clrt_train_config clrt_train_defaults(void);

/* A trainer holds the pipeline's buffers across epochs. It borrows the
 * model, optimizer and data sets (they must outlive it) and moves the model
 * to cfg->device once (clrt_module_to). test may be NULL. NULL + error on
 * bad arguments: a model whose output is not [N, classes] fails at the
 * first epoch with the shapes named; a cfg->device (or, without one, the
 * model's device) other than the optimizer's fails with CLRT_EDEVMISMATCH
 * before anything moves or runs. */
typedef struct clrt_trainer clrt_trainer;
CLRT_API clrt_trainer *clrt_trainer_new(clrt_module *model, clrt_optimizer *opt,
                                        const clrt_dataset *train, const clrt_dataset *test,
                                        const clrt_train_config *cfg);
/* One epoch: a shuffled training pass, then the test pass. Fills *stats
 * (may be NULL). The only blocking points are the staging-buffer waits and
 * one read of the sums at the end of each pass. A training pass whose mean
 * loss is NaN or infinite fails with CLRT_ENONFINITE (no test pass, no
 * stats): checked when the sums are read, so the pass that diverged runs
 * to its end first. */
CLRT_API clrt_status clrt_trainer_epoch(clrt_trainer *t, clrt_epoch_stats *stats);
CLRT_API void clrt_trainer_free(clrt_trainer *t); /* waits for its uploads; NULL: no-op */

/* cfg->epochs epochs; stats (may be NULL) receives one entry per epoch run.
 * Returns CLRT_OK also when on_epoch stopped early. */
CLRT_API clrt_status clrt_train(clrt_module *model, clrt_optimizer *opt, const clrt_dataset *train,
                                const clrt_dataset *test, const clrt_train_config *cfg,
                                clrt_epoch_stats *stats);

/* Mean cross-entropy and accuracy of the model (in evaluation mode, then
 * back to the mode it was in) over a data set, in batches on the model's
 * device. loss or accuracy may be NULL. */
CLRT_API clrt_status clrt_evaluate(clrt_module *model, const clrt_dataset *ds, int batch_size,
                                   double *loss, double *accuracy);

/* A TensorBoard summary writer, like torch.utils.tensorboard's
 * SummaryWriter: clrt_summary_open creates `logdir` if needed and a new
 * event file in it, events.out.tfevents.<seconds>.<host>, that TensorBoard
 * reads. clrt_summary_scalar appends one value under `tag` (e.g.
 * "Train/Loss") at `step`; wall_time is seconds since the epoch, <= 0 for
 * now. Records are buffered: clrt_summary_flush makes them visible to a
 * reader, clrt_summary_close flushes and frees (NULL: no-op). Host-only:
 * nothing here touches a device. One writer is for one thread at a time. */
typedef struct clrt_summary_writer clrt_summary_writer;
CLRT_API clrt_summary_writer *clrt_summary_open(const char *logdir);
CLRT_API clrt_status clrt_summary_scalar(clrt_summary_writer *w, const char *tag, int64_t step,
                                         double wall_time, float value);
CLRT_API clrt_status clrt_summary_flush(clrt_summary_writer *w);
CLRT_API clrt_status clrt_summary_close(clrt_summary_writer *w);

#ifdef __cplusplus
}
#endif
#endif
