/* clrt-bench subcommands: each prints figures and ratios against a
 * reference run in the same process; the shared helpers (clock, medians,
 * size lists, device choice, --json output) live in util.c. */
#ifndef CLRT_BENCH_H
#define CLRT_BENCH_H

#include <clrt/clrt.h>
#include <stdio.h>

typedef struct {
    const char *name;
    const char *help;
    int (*run)(int argc, char **argv); /* argv[0] is the subcommand */
} bench_command;

/* One line per subcommand, each in bench_<name>.c: X(name, "help"). */
#define BENCH_COMMANDS(X)                                                                       \
    X(matmul, "exercise 1: square SGEMM 16..4096 per device and GEMM path vs OpenBLAS")         \
    X(logging, "exercise 3: 1000 products, norms read per step vs kept on the device")          \
    X(multi, "exercise 4: two large products on two devices at once vs in sequence on one")     \
    X(transfer, "host<->device and device copies, pageable and pinned, vs memcpy")              \
    X(launch, "clrt_add launch overhead vs bare clEnqueueNDRangeKernel loops")                  \
    X(startup, "fresh process to first finished kernel, cold vs warm caches")                   \
    X(data, "Fashion-MNIST load and batch gathers vs gzip -dc and a convert loop")              \
    X(optim, "fused SGD/Adam steps over LeNet's parameters vs a host loop")                     \
    X(elementwise, "elementwise ops, broadcasts, reductions vs same-shape add, host loops")     \
    X(conv, "LeNet conv layers + max pooling, fwd+bwd, vs im2col + host SGEMM")                 \
    X(train, "LeNet or the seed CNN: trainer steps vs on a resident batch; --layers")           \
    X(gpt, "clrt_gpt training steps (bench/compare.sh: against PyTorch's module)")              \
    X(peak, "the device's FP32 FMA peak, memory bandwidth and launch latency vs its datasheet") \
    X(weights, "writes a model's initial parameters (for bench/torch_ref.py --init)")

#define BENCH_DECLARE(name, help) int bench_##name(int argc, char **argv);
BENCH_COMMANDS(BENCH_DECLARE)
#undef BENCH_DECLARE

/* Seconds on a monotonic clock. */
double bench_now(void);
/* The median of v[0..n) (n >= 1); sorts v. */
double bench_median(double *v, int n);

/* Parses "N,N,..." into at most cap integers in [lo, hi]; returns how
 * many, or -1 when the list is malformed or too long. */
int bench_parse_sizes(const char *arg, int *sizes, int cap, long lo, long hi);

/* Command-line options: a table ended by {NULL}. A BENCH_STR option stores
 * its value (const char *), BENCH_INT a long in [lo, hi] (into an int), a
 * BENCH_FLAG sets an int to 1. Returns -1 when argv parsed, else the exit
 * code after printing the usage (0 for --help, 2 for a bad option). */
typedef enum { BENCH_STR, BENCH_INT, BENCH_FLAG } bench_opt_kind;
typedef struct {
    const char *flag;
    bench_opt_kind kind;
    void *dest;
    long lo, hi;
} bench_opt;
int bench_parse_opts(int argc, char **argv, const bench_opt *opts, int (*usage)(FILE *, int));

/* The device named by spec, or the best one (gpu:0 if any, else cpu) when
 * spec is NULL; NULL after printing clrt's error under the command's name. */
clrt_device *bench_device(const char *command, const char *spec);

/* --json output: one object per run,
 *   {"command": ..., "rows": [{...}, ...], <fields given to _end>}
 * with rows and fields written by printf-style formats that the caller
 * keeps valid JSON (numbers, and strings through bench_json_str). Inactive
 * (prints nothing) unless on. */
typedef struct {
    int on;
    int rows;
} bench_json;
void bench_json_begin(bench_json *j, int on, const char *command);
void bench_json_row(bench_json *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void bench_json_end(bench_json *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* s as a JSON string literal (quotes and escapes) in buf; returns buf. */
const char *bench_json_str(const char *s, char *buf, size_t cap);
/* The device's identity as JSON fields: "device": ..., "device_model": ...,
 * "platform": ..., "gemm_path": ...; into buf; returns buf. */
const char *bench_json_device(clrt_device *d, char *buf, size_t cap);

#endif
