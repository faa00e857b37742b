/* The library side of scripts/probe.py (issues 25 and 36): one misuse of
 * the public API per subcommand, each printing "clean" or "defect: why" and
 * exiting 0 or 1; a crash is the probe's to see (a signal). Functions that
 * a fixed library adds are looked up with dlsym, so this builds against any
 * version of the library and a missing function is reported as a defect.
 * Issue 36's subcommands are in probe_api36.c and probe_numerics.c.
 *   probe_api <name>      (probe_api list: the names) */
#include "probe_api.h"

#include <clrt/clrt.h>

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int clean(void)
{
    printf("clean\n");
    return 0;
}

int defect(const char *why)
{
    printf("defect: %s\n", why);
    return 1;
}

clrt_device *dev(void)
{
    const char *spec = getenv("CLRT_TEST_DEVICE");
    return clrt_device_get(spec ? spec : "cpu");
}

/* clrt_shape_str with a NULL buffer, then a NULL shape: no crash. */
static int shape_str_null_buf(void)
{
    int64_t s[2] = {2, 3};
    clrt_shape_str(2, s, NULL, 10);
    return clean();
}

static int shape_str_null_shape(void)
{
    char buf[64];
    clrt_shape_str(2, NULL, buf, sizeof buf);
    return clean();
}

/* The same child twice: refused (and nothing is freed twice). */
static int sequential_twice(void)
{
    clrt_module *r = clrt_relu();
    clrt_module *mods[2] = {r, r};
    clrt_module *s = clrt_sequential(2, mods);
    if (s) {
        clrt_module_free(s);
        return defect("clrt_sequential accepted the same child twice");
    }
    return clean();
}

/* A child another Sequential owns: refused, and the owner still frees. */
static int sequential_owned(void)
{
    clrt_module *r = clrt_relu();
    clrt_module *a = clrt_sequential(1, &r);
    clrt_module *b = a ? clrt_sequential(1, &r) : NULL;
    if (!a)
        return defect(clrt_last_error());
    if (b) {
        clrt_module_free(b);
        clrt_module_free(a);
        return defect("clrt_sequential accepted a child another Sequential owns");
    }
    clrt_module_free(a);
    return clean();
}

static int norm_large(void)
{
    float v[2] = {3e30f, 4e30f};
    int64_t n = 2;
    double got = 0;
    clrt_tensor *x = clrt_from_host(dev(), CLRT_F32, 1, &n, v);
    clrt_tensor *r = x ? clrt_norm(x) : NULL;
    if (!r || clrt_item(r, &got) != CLRT_OK)
        return defect(clrt_last_error());
    clrt_tensor_release(x);
    clrt_tensor_release(r);
    if (!(fabs(got - 5e30) <= 1e-6 * 5e30)) {
        char why[96];
        snprintf(why, sizeof why, "clrt_norm([3e30, 4e30]) = %g, not 5e30", got);
        return defect(why);
    }
    return clean();
}

/* A row whose argmax is a NaN at index 3: not correct for label 0. */
static int count_correct_nan(void)
{
    float v[5] = {5, 1, 2, NAN, 0};
    int64_t shape[2] = {1, 5}, one = 1;
    int label = 0;
    double count = -1, am = -1;
    clrt_device *d = dev();
    clrt_tensor *x = clrt_from_host(d, CLRT_F32, 2, shape, v);
    clrt_tensor *y = x ? clrt_from_host(d, CLRT_I32, 1, &one, &label) : NULL;
    clrt_tensor *c = y ? clrt_zeros(d, CLRT_I32, 0, NULL) : NULL;
    clrt_tensor *a = c ? clrt_argmax(x) : NULL;
    if (!a || clrt_count_correct(x, y, c) != CLRT_OK || clrt_item(c, &count) != CLRT_OK ||
        clrt_item(a, &am) != CLRT_OK)
        return defect(clrt_last_error());
    if (count != 0 || am != 3) {
        char why[128];
        snprintf(why, sizeof why, "argmax says %g but clrt_count_correct counts %g for label 0", am,
                 count);
        return defect(why);
    }
    return clean();
}

static int lenet_overflow(void)
{
    const int64_t chw[3] = {1, (int64_t)1 << 33, (int64_t)1 << 33};
    clrt_module *m = clrt_lenet(chw, 10);
    if (m) {
        char buf[512];
        clrt_module_str(m, buf, sizeof buf);
        clrt_module_free(m);
        printf("built %.200s\n", buf);
        return defect("clrt_lenet accepted samples of 2^33 x 2^33");
    }
    return clean();
}

/* clrt_cross_entropy with a [1] loss tensor where a 0-dim one is required. */
static int xent_loss_shape(void)
{
    float v[3] = {0, 1, 2};
    int64_t shape[2] = {1, 3}, one = 1;
    int label = 1;
    clrt_device *d = dev();
    clrt_tensor *x = clrt_from_host(d, CLRT_F32, 2, shape, v);
    clrt_tensor *y = clrt_from_host(d, CLRT_I32, 1, &one, &label);
    clrt_tensor *loss = clrt_zeros(d, CLRT_F32, 1, &one);
    if (!x || !y || !loss)
        return defect(clrt_last_error());
    if (clrt_cross_entropy(x, y, loss, NULL, NULL) == CLRT_OK)
        return defect("clrt_cross_entropy accepted a [1] loss_sum (0-dim required)");
    return clean();
}

typedef clrt_status (*xent_ex_fn)(clrt_tensor *, clrt_tensor *, clrt_tensor *, clrt_tensor *,
                                  clrt_tensor *, clrt_tensor *);

/* Labels all out of range: the mean says so (NaN) and the count is there. */
static int xent_ignored(void)
{
    float v[6] = {0, 1, 2, 3, 4, 5};
    int64_t shape[2] = {2, 3}, two = 2;
    int labels[2] = {7, -1};
    double mean = 0, ignored = -1;
    clrt_device *d = dev();
    clrt_tensor *x = clrt_from_host(d, CLRT_F32, 2, shape, v);
    clrt_tensor *y = clrt_from_host(d, CLRT_I32, 1, &two, labels);
    clrt_tensor *m = x && y ? clrt_cross_entropy_loss(x, y) : NULL;
    if (!m || clrt_item(m, &mean) != CLRT_OK)
        return defect(clrt_last_error());
    if (!isnan(mean))
        return defect("the mean loss of a batch whose labels are all out of range is a number");
    xent_ex_fn ex = (xent_ex_fn)(uintptr_t)dlsym(RTLD_DEFAULT, "clrt_cross_entropy_ex");
    if (!ex)
        return defect("no way to count out-of-range labels (clrt_cross_entropy_ex)");
    clrt_tensor *n = clrt_zeros(d, CLRT_I32, 0, NULL);
    if (!n || ex(x, y, NULL, NULL, NULL, n) != CLRT_OK || clrt_item(n, &ignored) != CLRT_OK)
        return defect(clrt_last_error());
    return ignored == 2 ? clean() : defect("the count of out-of-range labels is not 2");
}

/* clrt_tensor_print to a full device. */
static int print_full(void)
{
    int64_t n = 4;
    FILE *f = fopen("/dev/full", "w");
    clrt_tensor *t = clrt_ones(dev(), CLRT_F32, 1, &n);
    if (!f || !t)
        return defect("cannot set up");
    clrt_status st = clrt_tensor_print(f, t);
    fclose(f);
    return st != CLRT_OK ? clean() : defect("clrt_tensor_print to /dev/full returned OK");
}

/* A negative start epoch. */
static int start_epoch_negative(void)
{
    clrt_dataset *ds = clrt_dataset_fashion_mnist(NULL, 1);
    if (!ds || clrt_dataset_limit(ds, 256) != CLRT_OK)
        return defect(clrt_last_error());
    int64_t chw[3];
    clrt_dataset_sample_shape(ds, chw);
    clrt_module *m = clrt_lenet(chw, 10);
    clrt_tensor *p[16], *g[16];
    int n =
        m && clrt_module_to(m, dev()) == CLRT_OK ? clrt_module_parameters(m, NULL, p, g, 16) : -1;
    clrt_optimizer *o = n > 0 ? clrt_sgd(n, p, g, 0.1, 0, 0) : NULL;
    if (!o)
        return defect(clrt_last_error());
    clrt_train_config cfg = clrt_train_defaults();
    cfg.start_epoch = -5;
    clrt_trainer *t = clrt_trainer_new(m, o, ds, NULL, &cfg);
    int bad = t != NULL;
    clrt_trainer_free(t);
    clrt_optimizer_free(o);
    clrt_module_free(m);
    clrt_dataset_free(ds);
    return bad ? defect("clrt_trainer_new accepted start_epoch -5") : clean();
}

static const struct {
    const char *name;
    int (*run)(void);
} probes[] = {{"shape-str-null-buf", shape_str_null_buf},
              {"shape-str-null-shape", shape_str_null_shape},
              {"sequential-twice", sequential_twice},
              {"sequential-owned", sequential_owned},
              {"norm-large", norm_large},
              {"count-correct-nan", count_correct_nan},
              {"lenet-overflow", lenet_overflow},
              {"xent-loss-shape", xent_loss_shape},
              {"xent-ignored", xent_ignored},
              {"print-full", print_full},
              {"start-epoch-negative", start_epoch_negative},
              {"load-many-tensors", probe36_load_many_tensors},
              {"checkpoint-many-tensors", probe36_checkpoint_many_tensors},
              {"clblast-huge-mwg", probe36_clblast_huge_mwg},
              {"child-name-not-utf8", probe36_child_name_not_utf8},
              {"safetensors-nul-name", probe36_safetensors_nul_name},
              {"winograd-not-applicable", probe36_winograd_not_applicable},
              {"residual-broadcast", probe36_residual_broadcast},
              /* issue 36 (probe_numerics.c) */
              {"bn-outlier", probe_bn_outlier},
              {"bn-huge", probe_bn_huge},
              {"xent-ignored-grad", probe_xent_ignored_grad}};

int main(int argc, char **argv)
{
    size_t n = sizeof probes / sizeof *probes;
    if (argc == 2 && strcmp(argv[1], "list") == 0) {
        for (size_t i = 0; i < n; i++)
            printf("%s\n", probes[i].name);
        return 0;
    }
    for (size_t i = 0; argc == 2 && i < n; i++)
        if (strcmp(argv[1], probes[i].name) == 0) {
            int rc = probes[i].run();
            (void)clrt_device_synchronize_all(); /* nothing queued at exit */
            return rc;
        }
    fprintf(stderr, "usage: probe_api list | <probe>\n");
    return 2;
}
