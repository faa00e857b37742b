/* probe_api's subcommands for issue 36 (scripts/probe.py's "issue 36"
 * section): loads that were quadratic in the number of tensors (item 6),
 * CLBlast parameters far beyond CLBlast's constraints (item 7), names that
 * are not UTF-8 or hold a NUL (item 9). Each writes what it needs into a
 * folder of its own under $TMPDIR and removes it. */
#include "probe_api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static char folder[512];

static const char *scratch(const char *name)
{
    static char path[640];
    if (!folder[0]) {
        const char *tmp = getenv("TMPDIR");
        snprintf(folder, sizeof folder, "%s/clrt-probe36-XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (!mkdtemp(folder))
            folder[0] = '\0';
    }
    snprintf(path, sizeof path, "%s/%s", folder, name);
    return path;
}

static void remove_scratch(void)
{
    char cmd[600];
    if (folder[0]) {
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", folder);
        if (system(cmd) != 0)
            fprintf(stderr, "could not remove %s\n", folder);
    }
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* A safetensors file of n one-element F32 tensors "t0" ... written by
 * hand (the format is simple); 0 when it could not be written. */
static int write_many(const char *path, int n)
{
    size_t cap = (size_t)n * 80 + 64, len = 0;
    char *h = malloc(cap);
    FILE *f = h ? fopen(path, "wb") : NULL;
    if (!f) {
        free(h);
        return 0;
    }
    len += (size_t)snprintf(h + len, cap - len, "{");
    for (int i = 0; i < n; i++)
        len +=
            (size_t)snprintf(h + len, cap - len,
                             "%s\"t%d\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[%d,%d]}",
                             i ? "," : "", i, 4 * i, 4 * i + 4);
    len += (size_t)snprintf(h + len, cap - len, "}");
    while (len % 8)
        h[len++] = ' ';
    unsigned char n8[8];
    for (int i = 0; i < 8; i++)
        n8[i] = (unsigned char)((uint64_t)len >> (8 * i));
    int ok = fwrite(n8, 1, 8, f) == 8 && fwrite(h, 1, len, f) == len;
    for (int i = 0; ok && i < n; i++)
        ok = fwrite("\0\0\200?", 1, 4, f) == 4; /* 1.0f */
    ok = fclose(f) == 0 && ok;
    free(h);
    return ok;
}

/* Item 6: 160k tensors took 60 s (quadratic; Python's reader: 0.34 s). */
int probe36_load_many_tensors(void)
{
    enum { N = 160000 };
    const char *path = scratch("many.safetensors");
    char skipped[128], why[160];
    if (!write_many(path, N))
        return defect("cannot write the file");
    clrt_module *m = clrt_relu();
    double t0 = now();
    clrt_status st = clrt_module_load_ex(m, path, 0, skipped, sizeof skipped);
    double took = now() - t0;
    clrt_module_free(m);
    remove_scratch();
    if (st != CLRT_OK)
        return defect(clrt_last_error());
    printf("%d tensors loaded in %.2f s\n", N, took);
    snprintf(why, sizeof why, "%d tensors took %.1f s to load (linear: well under a second)", N,
             took);
    return took > 10 ? defect(why) : clean();
}

/* Item 6 through --resume's path: a checkpoint of 20000 Linear(1, 1) layers
 * (40000 parameters) with SGD's momentum took 31.7 s to load. */
int probe36_checkpoint_many_tensors(void)
{
    enum { K = 20000 };
    static clrt_module *layers[K];
    char why[160];
    for (int i = 0; i < K; i++)
        if (!(layers[i] = clrt_linear(1, 1)))
            return defect(clrt_last_error());
    clrt_module *m = clrt_sequential(K, layers);
    if (!m || clrt_module_to(m, dev()) != CLRT_OK)
        return defect(clrt_last_error());
    int n = clrt_module_parameters(m, NULL, NULL, NULL, 0);
    clrt_tensor **p = calloc((size_t)n, sizeof *p), **g = calloc((size_t)n, sizeof *g);
    if (!p || !g || clrt_module_parameters(m, NULL, p, g, n) != n)
        return defect("cannot list the parameters");
    clrt_optimizer *o = clrt_sgd(n, p, g, 0.1, 0.9, 0);
    const char *path = scratch("ckpt");
    int64_t epoch = 0;
    if (!o || clrt_checkpoint_save(path, m, o, 1, 0, NULL) != CLRT_OK)
        return defect(clrt_last_error());
    double t0 = now();
    clrt_status st = clrt_checkpoint_load(path, m, o, 0, NULL, &epoch);
    double took = now() - t0;
    remove_scratch();
    clrt_optimizer_free(o);
    clrt_module_free(m);
    free(p);
    free(g);
    if (st != CLRT_OK)
        return defect(clrt_last_error());
    printf("a checkpoint of %d parameters loaded in %.2f s\n", n, took);
    snprintf(why, sizeof why, "a checkpoint of %d parameters took %.1f s to load", n, took);
    return took > 20 ? defect(why) : clean();
}

/* Item 7: the store took MWG=4294967296, clrt-smi said "tuned here", and
 * every later CLBlast GEMM spun in LLVM. No GEMM runs here: the probe's
 * own cache folder (CLRT_CACHE_DIR, set by probe.py) holds the record. */
int probe36_clblast_huge_mwg(void)
{
    static const char params[] =
        "GEMMK=0 KREG=1 KWG=16 KWI=2 MDIMA=8 MDIMC=8 MWG=4294967296 NDIMB=8 NDIMC=8 NWG=32 SA=0 "
        "SB=0 STRM=0 STRN=0 VWM=2 VWN=2";
    clrt_device *d = dev();
    if (!d)
        return defect(clrt_last_error());
    if (clrt_clblast_tuning_store(d, "Xgemm", params) == CLRT_OK)
        return defect("clrt_clblast_tuning_store took MWG=4294967296");
    printf("store: %s\n", clrt_last_error());
    if (clrt_clblast_tuning_of(d) != CLRT_CLBLAST_BUILT_IN)
        return defect("after a refused store, the device's CLBlast GEMMs are not 'built-in'");
    if (clrt_clblast_override(d, "Xgemm", params) == CLRT_OK)
        return defect("clrt_clblast_override took MWG=4294967296");
    printf("override: %s\n", clrt_last_error());
    return clean();
}

/* Item 9: "\xff" was taken as a child name and saved; PyTorch's reader
 * refused the file. */
int probe36_child_name_not_utf8(void)
{
    clrt_module *mods[2] = {clrt_relu(), clrt_relu()};
    const char *names[2] = {"act", "\xff"};
    clrt_module *m = clrt_sequential_named(2, mods, names);
    if (m) {
        clrt_module_free(m);
        return defect("clrt_sequential_named took the child name \"\\xff\" (not UTF-8)");
    }
    if (!strstr(clrt_last_error(), "UTF-8"))
        return defect(clrt_last_error());
    return clean();
}

/* Item 9: a file naming "weight" and "weight\u0000x" was reported as holding
 * a duplicate (the NUL ended the C string). */
int probe36_safetensors_nul_name(void)
{
    static const char header[] =
        "{\"weight\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,24]},"
        "\"bias\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[24,32]},"
        "\"weight\\u0000x\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[32,36]}}";
    const char *path = scratch("nul.safetensors");
    FILE *f = fopen(path, "wb");
    unsigned char n8[8] = {0};
    size_t n = sizeof header - 1;
    for (int i = 0; i < 8; i++)
        n8[i] = (unsigned char)((uint64_t)n >> (8 * i));
    static const unsigned char zeros[36];
    if (!f || fwrite(n8, 1, 8, f) != 8 || fwrite(header, 1, n, f) != n ||
        fwrite(zeros, 1, sizeof zeros, f) != sizeof zeros || fclose(f) != 0)
        return defect("cannot write the file");
    clrt_module *m = clrt_linear(3, 2);
    clrt_status st =
        m && clrt_module_to(m, dev()) == CLRT_OK ? clrt_module_load(m, path) : CLRT_EINVAL;
    char why[512];
    snprintf(why, sizeof why, "%s", clrt_last_error());
    clrt_module_free(m);
    remove_scratch();
    if (st == CLRT_OK)
        return defect("a tensor name with \\u0000 loaded");
    printf("load: %s\n", why);
    return strstr(why, "u0000") ? clean() : defect(why);
}

/* Item 4: CLRT_CONV_ALGO=winograd on a 5x5 and on a stride-2 convolution
 * ran the direct kernels without a word (probe.py sets the variable). */
int probe36_winograd_not_applicable(void)
{
    clrt_device *d = dev();
    int64_t xs[4] = {1, 8, 9, 9}, w5[4] = {8, 8, 5, 5}, w3[4] = {8, 8, 3, 3};
    clrt_tensor *x = d ? clrt_zeros(d, CLRT_F32, 4, xs) : NULL;
    clrt_tensor *a = x ? clrt_zeros(d, CLRT_F32, 4, w5) : NULL;
    clrt_tensor *b = a ? clrt_zeros(d, CLRT_F32, 4, w3) : NULL;
    if (!b)
        return defect(clrt_last_error());
    clrt_tensor *y5 = clrt_f_conv2d(x, a, NULL, 1, 2);
    char first[512];
    snprintf(first, sizeof first, "%s", clrt_last_error());
    clrt_tensor *y2 = clrt_f_conv2d(x, b, NULL, 2, 1);
    int refused = !y5 && !y2 && strstr(first, "CLRT_CONV_ALGO=winograd") &&
                  strstr(clrt_last_error(), "does not apply");
    printf("5x5: %s\nstride 2: %s\n", first, clrt_last_error());
    clrt_tensor *all[] = {x, a, b, y5, y2};
    for (int i = 0; i < 5; i++)
        clrt_tensor_release(all[i]);
    return refused ? clean()
                   : defect("a forced Winograd ran another algorithm on a layer it does not fit");
}

/* Item 8: clrt_residual(clrt_conv2d(1, 4, 3, 1, 1), NULL) broadcast the
 * identity in its forward, and its backward failed (clrt_add_out: out has
 * shape [2, 1, 5, 5]). Now the identity's gradient is summed over the
 * channels it was broadcast to: checked against the conv's input gradient
 * plus that sum, computed apart. */
int probe36_residual_broadcast(void)
{
    clrt_device *d = dev();
    clrt_module *m = clrt_residual(clrt_conv2d(1, 4, 3, 1, 1), NULL);
    int64_t xs[4] = {2, 1, 5, 5};
    clrt_tensor *x = m && clrt_module_to(m, d) == CLRT_OK ? clrt_randn(d, 4, xs, 7) : NULL;
    clrt_tensor *y = x ? clrt_module_forward(m, x) : NULL;
    clrt_tensor *g = y ? clrt_ones(d, CLRT_F32, 4, clrt_tensor_shape(y)) : NULL;
    clrt_tensor *gx = g ? clrt_module_backward(m, g) : NULL;
    int ok = gx && clrt_tensor_ndim(gx) == 4 && clrt_tensor_shape(gx)[1] == 1;
    char why[512];
    snprintf(why, sizeof why, "%s", ok ? "" : clrt_last_error());
    clrt_tensor *all[] = {x, y, g, gx};
    for (int i = 0; i < 4; i++)
        clrt_tensor_release(all[i]);
    clrt_module_free(m);
    return ok ? clean() : defect(why);
}
