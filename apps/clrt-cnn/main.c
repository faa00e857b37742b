/* clrt-cnn: the d2l "use a GPU" experience in C. Trains LeNet on
 * Fashion-MNIST (or the seed notebook's CNN on CIFAR-10) on the best
 * device, compares devices, or sweeps batch sizes. */
#include "cnn.h"

#include <string.h>

#define MAX_DEVICES 64

static int load_data(const cnn_options *o, cnn_data *data)
{
    int cifar = strcmp(o->dataset, "cifar10") == 0;
    clrt_dataset *train =
        cifar ? clrt_dataset_cifar10(o->data_dir, 1) : clrt_dataset_fashion_mnist(o->data_dir, 1);
    clrt_dataset *test = !train  ? NULL
                         : cifar ? clrt_dataset_cifar10(o->data_dir, 0)
                                 : clrt_dataset_fashion_mnist(o->data_dir, 0);
    if (!test || (o->limit && clrt_dataset_limit(train, o->limit) != CLRT_OK) ||
        (o->test_limit && clrt_dataset_limit(test, o->test_limit) != CLRT_OK)) {
        fprintf(stderr, "clrt-cnn: %s\n", clrt_last_error());
        if (cifar && !o->data_dir)
            fprintf(stderr, "clrt-cnn: give CIFAR-10's binary files (data_batch_1.bin ... "
                            "test_batch.bin) with --data-dir DIR\n");
        clrt_dataset_free(train);
        clrt_dataset_free(test);
        return 1;
    }
    data->train = train;
    data->test = test;
    printf("data: %s (%lld images), %s (%lld images)\n", clrt_dataset_name(train),
           (long long)clrt_dataset_size(train), clrt_dataset_name(test),
           (long long)clrt_dataset_size(test));
    return 0;
}

/* --devices, --device, else the best device (gpu:0 if any, else cpu; in an
 * MPI job, the local rank's); NULL after printing why. */
static clrt_device *pick_device(cnn_options *o)
{
    return app_pick_device("clrt-cnn", o->device, o->devices, &o->job, o->dp, &o->n_dp);
}

static int train_one(const cnn_options *o, const cnn_data *data, clrt_device *d)
{
    clrt_epoch_stats last;
    double mean = 0;
    app_print_devices(o->dp, o->n_dp, d);
    printf("model %s, %s lr %g, batch %d, %d epochs, seed %llu\n", o->model, o->optimizer, o->lr,
           o->batch_size, o->epochs, (unsigned long long)o->seed);
    if (cnn_run(o, data, d, o->epochs, o->batch_size, &last, &mean))
        return 1;
    printf("final test accuracy %.4f on %s, %.2f s per epoch\n", last.test_acc, clrt_device_str(d),
           mean);
    return 0;
}

/* --compare: every device in turn, then a table. */
static int compare(const cnn_options *o, const cnn_data *data)
{
    int n = clrt_device_count();
    clrt_epoch_stats last[MAX_DEVICES];
    double mean[MAX_DEVICES], cpu_seconds = 0;
    if (n <= 0) {
        fprintf(stderr, "clrt-cnn: %s\n", n < 0 ? clrt_last_error() : "no OpenCL device");
        return 1;
    }
    n = n > MAX_DEVICES ? MAX_DEVICES : n;
    cnn_options run = *o;
    run.plot = NULL; /* the bar chart below, not one curve plot per run */
    for (int i = 0; i < n; i++) {
        clrt_device *d = clrt_device_at(i);
        app_print_device(d);
        if (cnn_run(&run, data, d, o->epochs, o->batch_size, &last[i], &mean[i]))
            return 1;
        if (!cpu_seconds && strncmp(clrt_device_str(d), "cpu", 3) == 0)
            cpu_seconds = mean[i];
    }
    printf("\n%-8s %14s %12s %14s %14s\n", "device", "s/epoch", "samples/s", "test acc",
           "speed-up/cpu");
    for (int i = 0; i < n; i++)
        printf("%-8s %14.2f %12.0f %14.4f %13.2fx\n", clrt_device_str(clrt_device_at(i)), mean[i],
               last[i].samples_per_s, last[i].test_acc, cpu_seconds ? cpu_seconds / mean[i] : 0);
    const char *labels[MAX_DEVICES];
    double speed[MAX_DEVICES];
    for (int i = 0; i < n; i++)
        labels[i] = clrt_device_str(clrt_device_at(i)), speed[i] = last[i].samples_per_s;
    return o->plot && cnn_plot_bars(o->plot, "training samples per second", labels, speed, n);
}

/* --batch-sweep: one epoch at each batch size, with the share of the time
 * spent moving data (the seed notebook's closing exercise). */
static int sweep(const cnn_options *o, const cnn_data *data, clrt_device *d)
{
    clrt_epoch_stats s[CNN_MAX_SWEEP];
    double mean;
    app_print_device(d);
    cnn_options run = *o;
    run.plot = NULL;
    for (int i = 0; i < o->n_sweep; i++)
        if (cnn_run(&run, data, d, 1, o->sweep[i], &s[i], &mean))
            return 1;
    printf("\n%-8s %10s %12s %12s %12s\n", "batch", "seconds", "samples/s", "data share",
           "test acc");
    for (int i = 0; i < o->n_sweep; i++)
        printf("%-8d %10.2f %12.0f %11.1f%% %12.4f\n", o->sweep[i], s[i].train_seconds,
               s[i].samples_per_s, 100.0 * s[i].data_share, s[i].test_acc);
    char names[CNN_MAX_SWEEP][24];
    const char *labels[CNN_MAX_SWEEP];
    double speed[CNN_MAX_SWEEP];
    for (int i = 0; i < o->n_sweep; i++) {
        snprintf(names[i], sizeof names[i], "batch %d", o->sweep[i]);
        labels[i] = names[i], speed[i] = s[i].samples_per_s;
    }
    return o->plot &&
           cnn_plot_bars(o->plot, "training samples per second", labels, speed, o->n_sweep);
}

/* Everything after the options; 0, or 1 after printing why. */
static int run(cnn_options *o)
{
    cnn_data data;
    /* Output paths and a bad --device fail before the data set is read. */
    if (app_outputs_check("clrt-cnn", &o->job, o->save, o->plot, "--plot"))
        return 1;
    clrt_device *d = o->compare ? NULL : pick_device(o);
    if ((!o->compare && !d) || load_data(o, &data))
        return 1;
    int rc = o->profile ? app_profile_begin("clrt-cnn") : 0;
    if (rc == 0)
        rc = o->compare   ? compare(o, &data)
             : o->n_sweep ? sweep(o, &data, d)
                          : train_one(o, &data, d);
    if (o->profile && rc == 0)
        rc = app_profile_report("clrt-cnn", stdout);
    if (rc == 0)
        rc = app_outputs_finish("clrt-cnn"); /* a trace that cannot be written fails the run */
    clrt_dataset_free(data.train);
    clrt_dataset_free(data.test);
    return rc;
}

int main(int argc, char **argv)
{
    clrt_host_blas_restart(argv); /* OpenBLAS's fastest kernels for this CPU */
    cnn_options o;
    int parsed = cnn_parse_options(argc, argv, &o);
    if (parsed != 0)
        return parsed > 0 ? 0 : 2;
    if (o.distributed && app_job_begin(&argc, &argv, "clrt-cnn", &o.job))
        return 1;
    if (o.distributed && cnn_options_agree(&o)) { /* every rank ends here alike */
        app_job_end(&o.job);
        return 1;
    }
    int rc = run(&o);
    if (o.distributed && rc != 0)
        app_job_abort(&o.job, rc); /* the other ranks may wait for this one */
    if (o.distributed)
        app_job_end(&o.job);
    /* Before exit: work still queued, and CLBlast's programs (Oclgrind cannot
     * release them at exit). */
    (void)clrt_device_synchronize_all();
    clrt_clblast_release_programs();
    return rc;
}
