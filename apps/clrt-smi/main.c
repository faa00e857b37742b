/* clrt-smi: nvidia-smi for OpenCL. Lists every device clrt sees, in clrt's
 * order and with clrt's names, as a table or as JSON (--json); --tune tunes
 * CLBlast's GEMM on one of them (tune.c). */
#include "smi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ROWS 64
#define N_COLS 14
#define CELL 160

static const char *const headers[N_COLS] = {
    "DEVICE", "MODEL", "TYPE",     "PLATFORM", "DRIVER",  "MEMORY", "MAX ALLOC",
    "CUS",    "MHZ",   "OPENCL C", "FP64",     "UNIFIED", "GEMM",   "CLBLAST TUNED"};

static const char *gemm_name(clrt_gemm_path p)
{
    return p == CLRT_GEMM_HOST_BLAS ? "host-blas" : "clblast";
}

static const char *yes_no(int b) { return b ? "yes" : "no"; }

/* 5606132736 -> "5.2 GiB" */
static void human_bytes(unsigned long long b, char *out, size_t cap)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)b;
    int u = 0;
    while (v >= 1024 && u < 4) {
        v /= 1024;
        u++;
    }
    snprintf(out, cap, u == 0 ? "%.0f %s" : "%.1f %s", v, units[u]);
}

/* The parameters d's CLBlast GEMMs run with: "tuned here", "built-in",
 * "refused" (clrt_clblast_tuning_of). */
static const char *clblast_tuning(const clrt_device_info *in)
{
    return clrt_clblast_tuning_str(clrt_clblast_tuning_of(clrt_device_get(in->name)));
}

static void table_row(const clrt_device_info *in, char row[N_COLS][CELL])
{
    const char *cells[N_COLS] = {in->name, in->model, clrt_device_kind_str(in->kind), in->platform,
                                 in->driver_version};
    for (int c = 0; c < 5; c++)
        snprintf(row[c], CELL, "%s", cells[c]);
    human_bytes(in->global_mem_bytes, row[5], CELL);
    human_bytes(in->max_alloc_bytes, row[6], CELL);
    snprintf(row[7], CELL, "%u", in->compute_units);
    snprintf(row[8], CELL, "%u", in->clock_mhz);
    /* "OpenCL C 1.2 " -> "1.2" */
    const char *v = strncmp(in->opencl_c_version, "OpenCL C ", 9) == 0 ? in->opencl_c_version + 9
                                                                       : in->opencl_c_version;
    snprintf(row[9], CELL, "%.*s", (int)strcspn(v, " "), v);
    snprintf(row[10], CELL, "%s", yes_no(in->has_fp64));
    snprintf(row[11], CELL, "%s", yes_no(in->unified_memory));
    snprintf(row[12], CELL, "%s", gemm_name(in->gemm_path));
    snprintf(row[13], CELL, "%s", clblast_tuning(in));
}

static void print_row(char row[N_COLS][CELL], const int *width)
{
    for (int c = 0; c + 1 < N_COLS; c++)
        printf("%-*s  ", width[c], row[c]);
    printf("%s\n", row[N_COLS - 1]);
}

static void print_table(const clrt_device_info *infos, int n)
{
    static char rows[MAX_ROWS + 1][N_COLS][CELL];
    int width[N_COLS] = {0};
    for (int c = 0; c < N_COLS; c++)
        snprintf(rows[0][c], CELL, "%s", headers[c]);
    for (int r = 0; r < n; r++)
        table_row(&infos[r], rows[r + 1]);
    for (int r = 0; r <= n; r++)
        for (int c = 0; c < N_COLS; c++)
            if ((int)strlen(rows[r][c]) > width[c])
                width[c] = (int)strlen(rows[r][c]);
    for (int r = 0; r <= n; r++)
        print_row(rows[r], width);
}

/* Below the table, for each device whose stored CLBlast parameters are
 * refused: why, and what to do (the error a GEMM there would give). */
static void print_refused(const clrt_device_info *infos, int n)
{
    for (int i = 0; i < n; i++)
        if (clrt_clblast_tuning_of(clrt_device_get(infos[i].name)) == CLRT_CLBLAST_REFUSED)
            printf("\n%s: %s\n", infos[i].name, clrt_last_error());
}

/* Below the table, when a device runs GEMMs on the host's BLAS: which
 * kernels OpenBLAS picked, and the faster ones this CPU runs when it
 * picked its generic fallback (clrt/host_blas.h). */
static void print_host_blas(const clrt_device_info *infos, int n)
{
    int used = 0;
    for (int i = 0; i < n; i++)
        used |= infos[i].gemm_path == CLRT_GEMM_HOST_BLAS;
    clrt_host_blas_info b = clrt_host_blas();
    if (!used || !b.core)
        return;
    printf("\nhost BLAS: OpenBLAS, %s kernels", b.core);
    if (b.pool_threads > 0)
        printf(", %d threads", b.pool_threads);
    if (b.better_core)
        printf(" (this CPU runs %s's several times faster: set OPENBLAS_CORETYPE=%s)",
               b.better_core, b.better_core);
    printf("\n");
}

static void json_string(const char *s)
{
    putchar('"');
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            printf("\\%c", *p);
        else if (*p < 0x20)
            printf("\\u%04x", *p);
        else
            putchar(*p);
    }
    putchar('"');
}

static void json_field(const char *key, const char *value, int last)
{
    printf("      \"%s\": ", key);
    json_string(value);
    printf(last ? "\n" : ",\n");
}

static void json_number(const char *key, unsigned long long value)
{
    printf("      \"%s\": %llu,\n", key, value);
}

static void json_bool(const char *key, int value)
{
    printf("      \"%s\": %s,\n", key, value ? "true" : "false");
}

/* "clblast_parameters": the stored text per kernel, null where none. */
static void json_clblast_parameters(const clrt_device_info *in)
{
    static const char *const kernels[] = {"Xgemm", "XgemmDirect"};
    char params[1024];
    printf("      \"clblast_parameters\": {");
    for (int k = 0; k < 2; k++) {
        printf("%s\"%s\": ", k ? ", " : "", kernels[k]);
        if (clrt_clblast_tuning_load(clrt_device_get(in->name), kernels[k], params, sizeof params) >
            0)
            json_string(params);
        else
            printf("null");
    }
    printf("},\n");
}

static void print_json_device(const clrt_device_info *in, int index, int last)
{
    printf("    {\n      \"index\": %d,\n", index);
    json_field("name", in->name, 0);
    json_field("model", in->model, 0);
    json_field("vendor", in->vendor, 0);
    json_field("type", clrt_device_kind_str(in->kind), 0);
    json_field("platform", in->platform, 0);
    json_field("platform_version", in->platform_version, 0);
    json_field("driver_version", in->driver_version, 0);
    json_field("opencl_c_version", in->opencl_c_version, 0);
    json_number("global_mem_bytes", in->global_mem_bytes);
    json_number("max_alloc_bytes", in->max_alloc_bytes);
    json_number("local_mem_bytes", in->local_mem_bytes);
    json_number("compute_units", in->compute_units);
    json_number("clock_mhz", in->clock_mhz);
    json_number("max_work_group_size", in->max_work_group_size);
    json_bool("fp64", in->has_fp64);
    json_bool("unified_memory", in->unified_memory);
    json_number("opencl_platform_index", in->opencl_platform_index);
    json_number("opencl_device_index", in->opencl_device_index);
    json_field("gemm_path", gemm_name(in->gemm_path), 0);
    json_clblast_parameters(in);
    json_field("clblast_tuning", clblast_tuning(in), 1);
    printf(last ? "    }\n" : "    },\n");
}

static void print_json(const clrt_device_info *infos, int n, const char *error)
{
    printf("{\n");
    if (error) {
        printf("  \"error\": ");
        json_string(error);
        printf(",\n");
    }
    printf("  \"devices\": [%s", n ? "\n" : "");
    for (int i = 0; i < n; i++)
        print_json_device(&infos[i], i, i + 1 == n);
    printf("%s]", n ? "  " : "");
    clrt_host_blas_info b = clrt_host_blas();
    if (b.core) {
        printf(",\n  \"host_blas\": {\"core\": ");
        json_string(b.core);
        printf(", \"better_core\": ");
        if (b.better_core)
            json_string(b.better_core);
        else
            printf("null");
        printf(", \"pool_threads\": %d}", b.pool_threads);
    }
    printf("\n}\n");
}

static void usage(FILE *f)
{
    fprintf(f, "usage: clrt-smi [--json] [--help]\n"
               "       clrt-smi --tune [DEVICE] [--tune-only clblast|kernels]\n"
               "                [--tune-settings N] [--tune-size N] [--tune-sizes N,N,...]\n"
               "                [--tune-rounds R] [--tune-dir DIR] [--tune-models LIST]\n\n"
               "Lists the OpenCL devices clrt sees, in its order and with its names\n"
               "(gpu:N, cpu, cpu:N), as a table or, with --json, as JSON.\n"
               "CLBLAST TUNED: 'tuned here' when clrt hands CLBlast GEMM parameters that\n"
               "--tune measured on this device model and driver, 'built-in' when CLBlast\n"
               "uses its own (its database's, else its defaults), 'refused' when stored\n"
               "ones cannot be used (the reason follows the table).\n"
               "CLRT_VISIBLE_DEVICES selects and orders GPUs as in every clrt program.\n\n"
               "--tune runs CLBlast's tuners (clblast_tuner_xgemm, clblast_tuner_xgemm_direct\n"
               "from Debian's clblast-utils, on PATH) on DEVICE (default: gpu:0 if any, else\n"
               "cpu), stores the best parameters in clrt's cache folder, where every clrt\n"
               "program takes them at its first CLBlast GEMM on such a device, then times\n"
               "SGEMM with CLBlast's built-in parameters against them and prints GFLOP/s:\n"
               "  --tune-settings N  settings each tuner tries, sampled at random (default 200)\n"
               "  --tune-size N      the tuners' m = n = k, a multiple of 128 (default 1024 on\n"
               "                     GPUs, 256 on CPU devices)\n"
               "  --tune-sizes LIST  the timed products' n (default 128,256,512,1024 on CPU\n"
               "                     devices, 256,...,4096 on GPUs)\n"
               "  --tune-rounds R    timing rounds, alternating (default 3)\n"
               "  --tune-dir DIR     where the tuners' logs and files go (default: a new\n"
               "                     folder under $TMPDIR or /tmp)\n"
               "then tunes clrt's own kernels on DEVICE (clrt/tune.h): one training step of\n"
               "each model shows its convolution passes; the direct convolution kernel's\n"
               "item block is searched per shape class and each pass's algorithm timed\n"
               "against the others, in alternating rounds; the winners are stored where\n"
               "every clrt program finds them (CLRT_KERNELS_TUNED=0 leaves them unused):\n"
               "  --tune-models LIST name:batch,... of lenet, seed-cnn, resnet18 (32x32),\n"
               "                     resnet18-224 (default lenet:256,seed-cnn:256,resnet18:128)\n"
               "  --tune-rounds R    also the rounds of each candidate here\n"
               "  --tune-only W      clblast or kernels: only that part\n\n"
               "Exit status: 0 when devices were listed; 1 when no OpenCL device was found\n"
               "(no platform, or platforms without devices): the message on stderr, or with\n"
               "--json the \"error\" field beside an empty \"devices\" list, says why;\n"
               "2 for a bad option. --tune: 0 when parameters were stored and timed, 1 when\n"
               "not (the message on stderr says why).\n");
}

static int list_devices(int json)
{
    static clrt_device_info infos[MAX_ROWS];
    int n = clrt_device_count();
    const char *error = n < 0 ? clrt_last_error() : NULL;
    if (n > MAX_ROWS)
        n = MAX_ROWS;
    for (int i = 0; i < n; i++)
        if (clrt_device_info_get(clrt_device_at(i), &infos[i]) != CLRT_OK) {
            fprintf(stderr, "clrt-smi: %s\n", clrt_last_error());
            return 1;
        }
    if (n < 0)
        n = 0;
    if (json)
        print_json(infos, n, error);
    else if (n == 0) /* with platforms but no device, error says "no OpenCL device found" */
        fprintf(stderr, "clrt-smi: %s%s\n",
                clrt_last_status() == CLRT_ENOPLATFORM ? "no OpenCL device found: " : "", error);
    else {
        print_table(infos, n);
        print_refused(infos, n);
        print_host_blas(infos, n);
    }
    return n == 0 ? 1 : 0;
}

/* A whole number in [lo, hi] into *out: 1, or 0. */
static int number(const char *v, long lo, long hi, long *out)
{
    char *end = NULL;
    long x = v ? strtol(v, &end, 10) : 0;
    if (!v || end == v || *end || x < lo || x > hi)
        return 0;
    *out = x;
    return 1;
}

/* "128,256" into o->sizes: 1, or 0 when malformed. */
static int parse_sizes(smi_tune_options *o, const char *v)
{
    long x = 0;
    char buf[256];
    o->n_sizes = 0;
    if (!v || snprintf(buf, sizeof buf, "%s", v) >= (int)sizeof buf)
        return 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (o->n_sizes == SMI_MAX_SIZES || !number(t, 1, 16384, &x))
            return 0;
        o->sizes[o->n_sizes++] = (int)x;
    }
    return o->n_sizes > 0;
}

/* One --tune-* option and its value at argv[*i]: 1, 0 when the value is
 * bad, -1 when the option is not one. */
static int tune_option(smi_tune_options *o, char **argv, int argc, int *i)
{
    const char *a = argv[*i], *v = *i + 1 < argc ? argv[*i + 1] : NULL;
    long x = 0;
    int ok = -1;
    if (strcmp(a, "--tune-settings") == 0 && (ok = number(v, 1, 100000000, &x)))
        o->settings = x;
    else if (strcmp(a, "--tune-size") == 0 && (ok = number(v, 128, 16384, &x) && x % 128 == 0))
        o->size = x;
    else if (strcmp(a, "--tune-sizes") == 0)
        ok = parse_sizes(o, v);
    else if (strcmp(a, "--tune-rounds") == 0 && (ok = number(v, 1, 15, &x)))
        o->rounds = (int)x;
    else if (strcmp(a, "--tune-dir") == 0)
        o->dir = (ok = v && *v) ? v : NULL;
    else if (strcmp(a, "--tune-models") == 0)
        o->models = (ok = v && *v) ? v : NULL;
    else if (strcmp(a, "--tune-only") == 0 &&
             (ok = v && (strcmp(v, "clblast") == 0 || strcmp(v, "kernels") == 0)))
        o->what = strcmp(v, "clblast") == 0 ? SMI_TUNE_CLBLAST : SMI_TUNE_KERNELS;
    *i += ok == 1;
    return ok;
}

int main(int argc, char **argv)
{
    int json = 0, tune = 0, tune_options = 0, known = 0;
    smi_tune_options o = {
        .settings = 200, .rounds = 3, .what = SMI_TUNE_CLBLAST | SMI_TUNE_KERNELS};
    if (argc == 4 && strcmp(argv[1], "--tune-child") == 0)
        return smi_time_child(argv[2], argv[3]);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--json") == 0) {
            json = 1;
        } else if (strcmp(a, "--tune") == 0) {
            tune = 1;
            if (i + 1 < argc && strncmp(argv[i + 1], "--", 2) != 0)
                o.device = argv[++i];
        } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 0;
        } else if ((known = tune_option(&o, argv, argc, &i)) != 1) {
            fprintf(stderr, "clrt-smi: %s option '%s'\n", known ? "unknown" : "bad value for", a);
            usage(stderr);
            return 2;
        } else {
            tune_options = 1;
        }
    }
    if ((tune && json) || (tune_options && !tune)) {
        fprintf(stderr, "clrt-smi: %s\n",
                json ? "--tune and --json do not go together" : "--tune-* options need --tune");
        usage(stderr);
        return 2;
    }
    /* The kernels' tuning times GEMMs on the host's BLAS too: on the
     * kernels this CPU runs best (a restart with OPENBLAS_CORETYPE where
     * OpenBLAS would pick generic ones), as clrt's other programs. */
    if (tune && (o.what & SMI_TUNE_KERNELS))
        (void)clrt_host_blas_restart(argv);
    int rc = tune ? smi_tune(&o) : list_devices(json);
    (void)clrt_device_synchronize_all(); /* nothing queued at exit */
    return rc;
}
