/* clrt/tune.h — tuning clrt's own kernels on a device (clrt-smi --tune).
 *
 * The hand-written kernels take their parameters, and the convolutions
 * their algorithm, from the tuning store: records measured on the device
 * model and driver, kept in clrt's cache folder (README: "Kernel
 * parameters"). Without a record a kernel runs the defaults it computes
 * from device queries, and a convolution pass measures its algorithm at
 * first use while the process has measuring time left (CLRT_MEASURE_SECONDS,
 * 1 s by default). clrt_kernels_tune measures everything at once:
 * for each model it runs one training step to see its convolution passes,
 * searches the direct convolution kernel's item block (rows by pixels an
 * item accumulates) per shape class, then times each pass's candidate
 * algorithms in alternating rounds; then, on a CPU-style device, the
 * tile of clrt's GEMM kernels (rows by vectors a work item accumulates)
 * on a layer's three products; the winners replace the records.
 * CLRT_KERNELS_TUNED=0 makes programs run the defaults instead.
 *
 * Not to be called while other threads use the device: it times kernels.
 * Nothing returned needs freeing; a result is valid during its report. */
#ifndef CLRT_TUNE_H
#define CLRT_TUNE_H
#include <clrt/device.h>
#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    /* Models and the batch of their step, "name:batch" comma-separated,
     * names lenet (1x28x28), seed-cnn and resnet18 (small stem, 3x32x32),
     * resnet18-224 (torchvision's stem, 3x224x224). NULL: the training
     * batches of clrt-cnn and bench/compare.sh,
     * "lenet:256,seed-cnn:256,resnet18:128". */
    const char *models;
    int rounds; /* timed rounds of each candidate, alternating; 0: 5 */
} clrt_tune_options;

typedef struct {
    const char *what;  /* "conv_vec_fwd" (the direct kernel's item block),
                          "conv_algo" (a pass's algorithm) or "gemm_cpu" (the
                          tile of clrt's GEMM kernels for CPUs) */
    char where[160];   /* the model, and the shape class or layer and pass */
    char chosen[64];   /* what is stored now: "rb=2 pw=14", "vec" */
    char defaults[64]; /* what runs without a record */
    double chosen_ms;  /* the best run of the chosen and of the default; */
    double default_ms; /* < 0 where it did not run */
    int candidates;    /* how many were timed */
} clrt_tune_result;

typedef void (*clrt_tune_report)(const clrt_tune_result *r, void *user);

/* Tunes on d and stores the records; report (may be NULL) is called with
 * each. CLRT_OK, or an error: a bad option (CLRT_EINVAL naming it), a
 * model step or a candidate that failed in every round. Records stored
 * before an error stay. */
CLRT_API clrt_status clrt_kernels_tune(clrt_device *d, const clrt_tune_options *o,
                                       clrt_tune_report report, void *user);

#ifdef __cplusplus
}
#endif
#endif
