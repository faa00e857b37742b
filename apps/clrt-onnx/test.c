/* clrt-onnx test: ONNX backend-test folders (model.onnx, and
 * test_data_set_N folders of input_K.pb and output_K.pb) run on a device and compared
 * with ONNX's tolerances (rtol 1e-3, atol 1e-7 unless given; NaN equals NaN; integers
 * and bools exactly). A model refused as unsupported is skipped; one line
 * per test, then "N passed, N failed, N skipped". */
#include "onnx_cli.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum { T_PASS, T_FAIL, T_SKIP } outcome;

static int64_t numel(const clrt_onnx_host_tensor *t)
{
    int64_t n = 1;
    for (int d = 0; d < t->ndim; d++)
        n *= t->shape[d];
    return n;
}

static double elem(const clrt_onnx_host_tensor *t, int64_t i)
{
    switch (t->elem_type) {
    case 1:
        return ((const float *)t->data)[i];
    case 6:
        return ((const int32_t *)t->data)[i];
    case 7:
        return (double)((const int64_t *)t->data)[i];
    default:
        return ((const uint8_t *)t->data)[i];
    }
}

/* 1 when got matches want; else why in msg. */
static int matches(const clrt_onnx_host_tensor *got, const clrt_onnx_host_tensor *want,
                   const cli_tolerance *tol, char *msg, size_t cap)
{
    if (got->elem_type != want->elem_type) {
        snprintf(msg, cap, "type %s, expected %s", clrt_onnx_type_str(got->elem_type),
                 clrt_onnx_type_str(want->elem_type));
        return 0;
    }
    int same = got->ndim == want->ndim;
    for (int d = 0; same && d < got->ndim; d++)
        same = got->shape[d] == want->shape[d];
    if (!same) {
        char a[96], b[96];
        snprintf(msg, cap, "shape %s, expected %s",
                 clrt_shape_str(got->ndim, got->shape, a, sizeof a),
                 clrt_shape_str(want->ndim, want->shape, b, sizeof b));
        return 0;
    }
    int exact = got->elem_type != 1;
    for (int64_t i = 0; i < numel(want); i++) {
        double g = elem(got, i), w = elem(want, i);
        int ok = exact ? g == w
                       : (isnan(g) && isnan(w)) || (isinf(w) && g == w) ||
                             fabs(g - w) <= tol->atol + tol->rtol * fabs(w);
        if (!ok) {
            snprintf(msg, cap, "element %lld is %.9g, expected %.9g", (long long)i, g, w);
            return 0;
        }
    }
    return 1;
}

/* dir/prefix_i.pb into path; 0 when it does not fit. */
static int data_path(char *path, size_t cap, const char *dir, const char *prefix, int i)
{
    int len = snprintf(path, cap, "%s/%s_%d.pb", dir, prefix, i);
    return len > 0 && (size_t)len < cap;
}

/* The files prefix_0.pb, prefix_1.pb ... in dir: how many there are. */
static int count_files(const char *dir, const char *prefix)
{
    int n = 0;
    char path[4096];
    for (;; n++) {
        if (!data_path(path, sizeof path, dir, prefix, n))
            return n;
        FILE *f = fopen(path, "rb");
        if (!f)
            return n;
        fclose(f);
    }
}

static int read_all(const char *dir, const char *prefix, int n, clrt_onnx_host_tensor *t)
{
    char path[4096];
    for (int i = 0; i < n; i++) {
        if (!data_path(path, sizeof path, dir, prefix, i) ||
            clrt_onnx_tensor_read(path, &t[i]) != CLRT_OK)
            return 0;
    }
    return 1;
}

static outcome run_set(clrt_onnx_model *m, const char *set, const cli_tolerance *tol, char *msg,
                       size_t cap)
{
    int n_in = count_files(set, "input"), n_out = count_files(set, "output");
    clrt_onnx_host_tensor in[64] = {0}, want[64] = {0}, got[64] = {0};
    outcome r = T_FAIL;
    if (n_in > 64 || n_out > 64 || n_out > clrt_onnx_num_outputs(m))
        snprintf(msg, cap, "%d inputs and %d outputs in a data set", n_in, n_out);
    else if (!read_all(set, "input", n_in, in) || !read_all(set, "output", n_out, want))
        snprintf(msg, cap, "%s", clrt_last_error());
    else if (clrt_onnx_run_host(m, n_in, in, n_out, got) != CLRT_OK) {
        r = clrt_last_status() == CLRT_ENOTSUP ? T_SKIP : T_FAIL;
        snprintf(msg, cap, "%s", clrt_last_error());
    } else {
        r = T_PASS;
        for (int i = 0; i < n_out && r == T_PASS; i++) {
            char why[512];
            if (!matches(&got[i], &want[i], tol, why, sizeof why)) {
                snprintf(msg, cap, "output %d: %s", i, why);
                r = T_FAIL;
            }
        }
    }
    for (int i = 0; i < 64; i++)
        clrt_onnx_host_free(&in[i]), clrt_onnx_host_free(&want[i]), clrt_onnx_host_free(&got[i]);
    return r;
}

static int is_data_set(const struct dirent *e)
{
    return strncmp(e->d_name, "test_data_set_", 14) == 0;
}

static outcome run_test(const char *dir, clrt_device *dev, const cli_tolerance *tol, char *msg,
                        size_t cap)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    clrt_onnx_model *m = clrt_onnx_load(path, dev);
    if (!m) {
        snprintf(msg, cap, "%s", clrt_last_error());
        return clrt_last_status() == CLRT_ENOTSUP ? T_SKIP : T_FAIL;
    }
    struct dirent **sets = NULL;
    int n = scandir(dir, &sets, is_data_set, alphasort);
    outcome r = n > 0 ? T_PASS : T_FAIL;
    if (n <= 0)
        snprintf(msg, cap, "no test_data_set_* folders");
    for (int i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, sets[i]->d_name);
        if (r == T_PASS)
            r = run_set(m, path, tol, msg, cap);
        free(sets[i]);
    }
    free(sets);
    clrt_onnx_free(m);
    return r;
}

int cli_test(int n_dirs, char **dirs, clrt_device *dev, const cli_tolerance *tol)
{
    int counts[3] = {0, 0, 0};
    static const char *word[] = {"PASS", "FAIL", "SKIP"};
    for (int i = 0; i < n_dirs; i++) {
        char msg[2048] = "";
        outcome r = run_test(dirs[i], dev, tol, msg, sizeof msg);
        counts[r]++;
        const char *name = strrchr(dirs[i], '/');
        name = name && name[1] ? name + 1 : dirs[i];
        printf("%s %s%s%s\n", word[r], name, msg[0] ? ": " : "", msg);
        fflush(stdout);
    }
    printf("%d passed, %d failed, %d skipped\n", counts[T_PASS], counts[T_FAIL], counts[T_SKIP]);
    return counts[T_FAIL] ? 1 : 0;
}
