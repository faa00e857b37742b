/* clrt-cnn: train a CNN on Fashion-MNIST or CIFAR-10 on one device, or
 * compare devices. */
#ifndef CLRT_CNN_H
#define CLRT_CNN_H

#include "../common/app.h"

#define CNN_MAX_SWEEP 16

typedef struct {
    const char *model;   /* "lenet" | "seed-cnn" | "resnet18" */
    const char *device;  /* NULL: the best device, clrt_try_gpu(0) */
    const char *devices; /* --devices LIST|all: data-parallel training, or NULL */
    clrt_device *dp[CLRT_MAX_DATA_PARALLEL]; /* the --devices list, resolved by main */
    int n_dp;
    const char *dataset;   /* "fashion-mnist" | "cifar10" */
    const char *data_dir;  /* NULL: Debian's folder for Fashion-MNIST */
    const char *optimizer; /* "sgd" | "adam" */
    int epochs;
    int batch_size;
    double lr; /* < 0: the optimizer's default */
    double momentum;
    int cosine; /* cosine learning-rate schedule */
    double weight_decay;
    int augment; /* --augment: random 4-pixel crops and flips of training images */
    uint64_t seed;
    int64_t limit;      /* 0: all training images */
    int64_t test_limit; /* 0: all test images */
    int compare;
    int profile;        /* --profile: the ops with the most device time, at the end */
    const char *save;   /* --save PATH: model to PATH, optimizer to PATH.optim */
    const char *resume; /* --resume PATH: the same pair, read before training */
    const char *logdir; /* --logdir DIR: TensorBoard scalars */
    const char *plot;   /* --plot FILE.svg: loss and accuracy curves */
    int n_sweep;
    int sweep[CNN_MAX_SWEEP];
    int distributed; /* --distributed: an MPI job */
    app_job job;     /* set by app_job_begin; {NULL, 0, 0, 1} alone */
} cnn_options;

/* Parses argv. Returns 0 to go on, 1 when --help was printed (exit 0), -1
 * after printing an error and the usage to stderr (exit 2). */
int cnn_parse_options(int argc, char **argv, cnn_options *o);
void cnn_usage(FILE *f);
/* --distributed: the options every rank must share, compared across the
 * job (o->job.world); 0, or 1 after printing the difference (every rank fails
 * alike, so none waits for another). */
int cnn_options_agree(const cnn_options *o);

/* The model named by o->model for `chw` inputs; NULL + clrt_last_error(). */
clrt_module *cnn_build_model(const char *name, const int64_t chw[3]);

typedef struct {
    clrt_dataset *train, *test;
} cnn_data;
/* Trains o's model from o->seed on d for `epochs` epochs at batch size
 * `batch`, printing a summary line per epoch. Fills *last with the final
 * epoch's stats and *mean_seconds with the mean training seconds per epoch.
 * Returns 0, or 1 after printing the error. */
int cnn_run(const cnn_options *o, const cnn_data *data, clrt_device *d, int epochs, int batch,
            clrt_epoch_stats *last, double *mean_seconds);

/* --save and --resume (checkpoint.c): the pair PATH and PATH.optim after
 * `epochs` epochs of train_samples samples each; resume checks that the
 * pair and o's run agree and sets *done to the epochs it holds. Both
 * return 0, or 1 after printing the error. */
int cnn_checkpoint_save(const cnn_options *o, clrt_module *model, clrt_optimizer *opt, int epochs,
                        int64_t train_samples);
int cnn_checkpoint_resume(const cnn_options *o, clrt_module *model, clrt_optimizer *opt,
                          int64_t steps_per_epoch, int64_t train_samples, int *done);

/* --logdir (logdir.c): one epoch's scalars; first_step is the global step
 * number of its first batch. 0, or 1 after printing the error. */
int cnn_log_epoch(clrt_summary_writer *w, const clrt_epoch_stats *s, int64_t first_step);

/* --plot (plot.c): the n epochs' curves as an SVG file. 0, or 1 after
 * printing the error. */
int cnn_plot(const char *path, const clrt_epoch_stats *s, int n);
/* A bar chart of n labelled values. 0, or 1 after printing the error. */
int cnn_plot_bars(const char *path, const char *title, const char *const *labels,
                  const double *values, int n);

#endif
