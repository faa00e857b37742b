/* clrt-bench subcommands: each prints figures and ratios against a
 * reference run in the same process. */
#ifndef CLRT_BENCH_H
#define CLRT_BENCH_H

typedef struct {
    const char *name;
    const char *help;
    int (*run)(int argc, char **argv); /* argv[0] is the subcommand */
} bench_command;

/* One line per subcommand, each in bench_<name>.c: X(name, "help"). */
#define BENCH_COMMANDS(X)                                                                   \
    X(gemm, "SGEMM GFLOP/s: host-BLAS and CLBlast paths vs OpenBLAS called directly")       \
    X(launch, "clrt_add launch overhead vs bare clEnqueueNDRangeKernel loops")              \
    X(startup, "fresh process to first finished kernel, cold vs warm caches")               \
    X(data, "Fashion-MNIST load and batch gathers vs gzip -dc and a convert loop")          \
    X(optim, "fused SGD/Adam steps over LeNet's parameters vs a host loop")                 \
    X(elementwise, "elementwise ops, broadcasts, reductions vs same-shape add, host loops") \
    X(conv, "LeNet conv layers + max pooling, fwd+bwd, vs im2col + host SGEMM")             \
    X(train, "LeNet training steps through the trainer vs on a resident batch")             \
    X(clblast, "SGEMM through CLBlast: its own parameters vs its tuners' (clrt_clblast_override)")

#define BENCH_DECLARE(name, help) int bench_##name(int argc, char **argv);
BENCH_COMMANDS(BENCH_DECLARE)
#undef BENCH_DECLARE

/* Seconds on a monotonic clock. */
double bench_now(void);
/* The median of t[0..n) (sorts t). */
double bench_median(double *t, int n);

#endif
