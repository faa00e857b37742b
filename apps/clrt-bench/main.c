/* clrt-bench: measurements, each against a reference in the same run. */
#include "bench.h"

#include <string.h>

static const bench_command commands[] = {
#define ENTRY(name, help) {#name, help, bench_##name},
    BENCH_COMMANDS(ENTRY)
#undef ENTRY
        {NULL, NULL, NULL}};

static void usage(FILE *f)
{
    fprintf(f, "usage: clrt-bench COMMAND [options]\n\ncommands:\n");
    for (const bench_command *c = commands; c->name; c++)
        fprintf(f, "  %-12s %s\n", c->name, c->help);
    fprintf(f, "\nclrt-bench COMMAND --help for each command's options; most take --device\n"
               "SPEC and --json (one JSON object on stdout, for bench/benchmarks.sh).\n");
}

int main(int argc, char **argv)
{
    clrt_host_blas_restart(argv); /* OpenBLAS's fastest kernels for this CPU */
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    for (const bench_command *c = commands; c->name; c++)
        if (strcmp(argv[1], c->name) == 0) {
            int rc = c->run(argc - 1, argv + 1);
            (void)clrt_device_synchronize_all(); /* nothing queued at exit */
            return rc;
        }
    fprintf(stderr, "clrt-bench: unknown command '%s'\n\n", argv[1]);
    usage(stderr);
    return 2;
}
