/* clrt-bench subcommands: each prints figures and ratios against a
 * reference run in the same process. */
#ifndef CLRT_BENCH_H
#define CLRT_BENCH_H

typedef struct {
    const char *name;
    const char *help;
    int (*run)(int argc, char **argv); /* argv[0] is the subcommand */
} bench_command;

/* Seconds on a monotonic clock. */
double bench_now(void);

#endif
