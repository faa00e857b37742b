/* Modules written outside the library (clrt/module.h), defined here as a
 * user would: a block with five parameters of its own and two Linear
 * children, y = (relu(fc1(x) * s + t) . fc2) + x * u + v * w[0] (any number
 * of parameters, broadcast ones among them). Its gradients through
 * clrt_backward and through the explicit clrt_module_backward (inside a
 * Sequential) against float64; its state under PyTorch's names, saved and
 * loaded; clone and to; errors of registration. Training it with
 * clrt_train and loading its state into PyTorch: tests/python. */
#include "testutil.h"

#include <math.h>
#include <string.h>
#include <unistd.h>

enum { N = 3, D = 5, H = 7 };
#define TOL 2e-5

/* The user data: a setting of the kind (parameters are looked up by name,
 * so that a clone's forward finds its own). */
typedef struct {
    int d;
} block;

/* y = fc2(relu(fc1(x) * s + t)) + x * u + v * w[0], each op recorded */
static clrt_tensor *block_forward(clrt_module *m, int n, clrt_tensor *const *in, void *user)
{
    (void)n, (void)user;
    clrt_tensor *s = clrt_module_param(m, "s"), *t = clrt_module_param(m, "t");
    clrt_tensor *u = clrt_module_param(m, "u"), *v = clrt_module_param(m, "v");
    clrt_tensor *w = clrt_module_param(m, "w");
    clrt_tensor *h = clrt_module_forward(clrt_module_child_named(m, "fc1"), in[0]);
    clrt_tensor *hs = h ? clrt_mul(h, s) : NULL, *ht = hs ? clrt_add(hs, t) : NULL;
    clrt_tensor *a = ht ? clrt_f_relu(ht) : NULL;
    clrt_tensor *o = a ? clrt_module_forward(clrt_module_child_named(m, "fc2"), a) : NULL;
    clrt_tensor *xu = o ? clrt_mul(in[0], u) : NULL, *p = xu ? clrt_add(o, xu) : NULL;
    clrt_tensor *vw = p ? clrt_mul(v, w) : NULL, *y = vw ? clrt_add(p, vw) : NULL;
    clrt_tensor *all[] = {h, hs, ht, a, o, xu, p, vw};
    for (int i = 0; i < 8; i++)
        clrt_tensor_release(all[i]);
    return y;
}

static void block_describe(const clrt_module *m, const void *user, char *buf, size_t cap)
{
    (void)m;
    snprintf(buf, cap, "(d=%d)", ((const block *)user)->d);
}

static void *block_clone(const void *user)
{
    block *b = malloc(sizeof *b);
    memcpy(b, user, sizeof *b);
    return b;
}

static const clrt_module_def block_def = {.kind = "Block",
                                          .forward = block_forward,
                                          .describe = block_describe,
                                          .clone_user = block_clone,
                                          .free_user = free};

/* Adds parameter `name` to m, with fresh values from rng. */
static void param(clrt_module *m, const char *name, int ndim, const int64_t *shape, uint64_t *rng)
{
    size_t n = 1;
    for (int i = 0; i < ndim; i++)
        n *= (size_t)shape[i];
    float *v = tu_random_floats(rng, n, -1, 1);
    clrt_tensor *t = TU_NONNULL(clrt_from_host(tu_device(), CLRT_F32, ndim, shape, v));
    free(v);
    TU_OK(clrt_module_add_parameter(m, name, t));
    clrt_tensor_release(t); /* the module's now */
}

static clrt_module *make_block(uint64_t *rng)
{
    block *b = malloc(sizeof *b);
    b->d = D;
    clrt_module *m = TU_NONNULL(clrt_module_new(&block_def, b));
    int64_t sh[1] = {H}, sd[1] = {D}, s1[1] = {1}, s3[2] = {N, 1};
    param(m, "s", 1, sh, rng);
    param(m, "t", 1, sh, rng);
    param(m, "u", 1, sd, rng);
    param(m, "v", 2, s3, rng);
    param(m, "w", 1, s1, rng);
    TU_OK(clrt_module_add_child(m, "fc1", clrt_linear(D, H)));
    TU_OK(clrt_module_add_child(m, "fc2", clrt_linear(H, D)));
    return m;
}

/* The block's parameters on the host, float64, in state order. */
typedef struct {
    double *p[9]; /* fc1.weight, fc1.bias, fc2.weight, fc2.bias, s, t, u, v, w */
    size_t n[9];
} block_ref;

static const char *const pnames[9] = {"s",          "t",        "u",          "v",       "w",
                                      "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"};

static void ref_params(clrt_module *m, block_ref *r)
{
    for (int i = 0; i < 9; i++) {
        clrt_tensor *t = TU_NONNULL(clrt_module_param(m, pnames[i]));
        float *f = tu_read(t);
        r->n[i] = (size_t)clrt_tensor_numel(t);
        r->p[i] = malloc(r->n[i] * sizeof(double));
        for (size_t k = 0; k < r->n[i]; k++)
            r->p[i][k] = f[k];
        free(f);
    }
}

/* sum(y * g) in float64 for x [N, D]. */
static double ref_loss(const block_ref *r, const double *x, const double *g)
{
    const double *s = r->p[0], *t = r->p[1], *u = r->p[2], *v = r->p[3], *w = r->p[4];
    const double *w1 = r->p[5], *b1 = r->p[6], *w2 = r->p[7], *b2 = r->p[8];
    double l = 0;
    for (int i = 0; i < N; i++) {
        double a[H];
        for (int j = 0; j < H; j++) {
            double z = b1[j];
            for (int k = 0; k < D; k++)
                z += w1[j * D + k] * x[i * D + k];
            z = z * s[j] + t[j];
            a[j] = z > 0 ? z : 0;
        }
        for (int k = 0; k < D; k++) {
            double y = b2[k] + x[i * D + k] * u[k] + v[i] * w[0];
            for (int j = 0; j < H; j++)
                y += w2[k * H + j] * a[j];
            l += y * g[i * D + k];
        }
    }
    return l;
}

/* Every parameter's gradient (and x's when gx) against central
 * differences of the reference. */
static void check_grads(clrt_module *m, block_ref *r, double *x, const double *g, const float *gx)
{
    for (int i = 0; i < 10; i++) {
        double *v = i < 9 ? r->p[i] : x;
        size_t n = i < 9 ? r->n[i] : N * D;
        if (i == 9 && !gx)
            break;
        float *got = i < 9 ? tu_read(TU_NONNULL(clrt_module_grad(m, pnames[i]))) : NULL;
        double err = 0, norm = 0;
        for (size_t k = 0; k < n; k++) {
            double keep = v[k];
            v[k] = keep + 1e-6;
            double up = ref_loss(r, x, g);
            v[k] = keep - 1e-6;
            double down = ref_loss(r, x, g), fd = (up - down) / 2e-6;
            v[k] = keep;
            double have = i < 9 ? got[k] : gx[k];
            err += (have - fd) * (have - fd), norm += fd * fd;
        }
        double rel = sqrt(err / (norm > 0 ? norm : 1));
        ck_assert_msg(rel <= 1e-4, "%s: gradient error %.3g", i < 9 ? pnames[i] : "x", rel);
        free(got);
    }
}

static double *to_double(const float *f, size_t n)
{
    double *d = malloc(n * sizeof *d);
    for (size_t i = 0; i < n; i++)
        d[i] = f[i];
    return d;
}

/* Through clrt_backward: the user's forward recorded op by op. */
START_TEST(gradients_through_autograd)
{
    uint64_t rng = tu_seed();
    clrt_module *m = make_block(&rng);
    block_ref r;
    ref_params(m, &r);
    float *fx = tu_random_floats(&rng, N * D, -1, 1), *fg = tu_random_floats(&rng, N * D, -1, 1);
    double *x = to_double(fx, N * D), *g = to_double(fg, N * D);
    int64_t s[2] = {N, D};
    clrt_tensor *xt = TU_NONNULL(clrt_from_host(tu_device(), CLRT_F32, 2, s, fx));
    clrt_tensor *gt = TU_NONNULL(clrt_from_host(tu_device(), CLRT_F32, 2, s, fg));
    clrt_tensor *y = TU_NONNULL(clrt_module_forward(m, xt));
    ck_assert(clrt_tensor_requires_grad(y));
    TU_OK(clrt_backward_with(y, gt));
    check_grads(m, &r, x, g, NULL);
    clrt_tensor *all[] = {xt, gt, y};
    for (int i = 0; i < 3; i++)
        clrt_tensor_release(all[i]);
    for (int i = 0; i < 9; i++)
        free(r.p[i]);
    free(fx), free(fg), free(x), free(g);
    clrt_module_free(m);
}
END_TEST

/* Inside a Sequential, through the explicit backward (what containers and
 * the trainer call): parameters' and the input's gradients. */
START_TEST(gradients_through_the_explicit_backward)
{
    uint64_t rng = tu_seed() + 1;
    clrt_module *blk = make_block(&rng);
    block_ref r;
    ref_params(blk, &r);
    clrt_module *mods[1] = {blk};
    clrt_module *seq = TU_NONNULL(clrt_sequential(1, mods));
    float *fx = tu_random_floats(&rng, N * D, -1, 1), *fg = tu_random_floats(&rng, N * D, -1, 1);
    double *x = to_double(fx, N * D), *g = to_double(fg, N * D);
    int64_t s[2] = {N, D};
    clrt_tensor *xt = TU_NONNULL(clrt_from_host(tu_device(), CLRT_F32, 2, s, fx));
    clrt_tensor *gt = TU_NONNULL(clrt_from_host(tu_device(), CLRT_F32, 2, s, fg));
    clrt_set_grad_enabled(0); /* the explicit path, as a trainer runs it */
    clrt_tensor *y = TU_NONNULL(clrt_module_forward(seq, xt));
    clrt_set_grad_enabled(1);
    TU_OK(clrt_module_zero_grad(seq));
    clrt_tensor *gxt = TU_NONNULL(clrt_module_backward(seq, gt));
    float *gx = tu_read(gxt);
    check_grads(blk, &r, x, g, gx);
    clrt_tensor *all[] = {xt, gt, y, gxt};
    for (int i = 0; i < 4; i++)
        clrt_tensor_release(all[i]);
    for (int i = 0; i < 9; i++)
        free(r.p[i]);
    free(fx), free(fg), free(x), free(g), free(gx);
    clrt_module_free(seq);
}
END_TEST

/* Its state: PyTorch's attribute order and names, saved and loaded,
 * described, cloned with its user data, moved. */
START_TEST(state_save_load_clone)
{
    uint64_t rng = tu_seed() + 2;
    clrt_module *m = make_block(&rng);
    const char *names[9];
    ck_assert_int_eq(clrt_module_parameters(m, names, NULL, NULL, 9), 9);
    for (int i = 0; i < 9; i++)
        ck_assert_str_eq(names[i], pnames[i]);
    char desc[512];
    clrt_module_str(m, desc, sizeof desc);
    ck_assert_msg(strstr(desc, "Block(d=5)") == desc, "%s", desc);
    char path[] = "/tmp/clrt-custom-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    TU_OK(clrt_module_save(m, path));
    uint64_t rng2 = tu_seed() + 99;
    clrt_module *other = make_block(&rng2);
    TU_OK(clrt_module_load(other, path));
    for (int i = 0; i < 9; i++) {
        float *a = tu_read(clrt_module_param(m, pnames[i]));
        float *b = tu_read(clrt_module_param(other, pnames[i]));
        size_t n = (size_t)clrt_tensor_numel(clrt_module_param(m, pnames[i]));
        ck_assert_int_eq(memcmp(a, b, n * sizeof *a), 0);
        free(a), free(b);
    }
    clrt_module *c = TU_NONNULL(clrt_module_clone(m, tu_device()));
    ck_assert_ptr_ne(clrt_module_user(c), clrt_module_user(m)); /* clone_user's copy */
    ck_assert_ptr_ne(clrt_module_param(c, "s"), clrt_module_param(m, "s"));
    TU_OK(clrt_module_to(c, tu_device()));
    remove(path);
    clrt_module_free(c);
    clrt_module_free(other);
    clrt_module_free(m);
}
END_TEST

START_TEST(registration_errors)
{
    block *b = calloc(1, sizeof *b);
    clrt_module *m = TU_NONNULL(clrt_module_new(&block_def, b));
    int64_t s[1] = {3};
    clrt_tensor *t = TU_NONNULL(clrt_zeros(tu_device(), CLRT_F32, 1, s));
    TU_OK(clrt_module_add_parameter(m, "a", t));
    ck_assert_int_eq(clrt_module_add_parameter(m, "a", t), CLRT_EINVAL);
    tu_assert_error(CLRT_EINVAL, "already has", "'a'", NULL);
    ck_assert_int_eq(clrt_module_add_buffer(m, "b.c", t), CLRT_EINVAL);
    tu_assert_error(CLRT_EINVAL, "without dots", NULL);
    ck_assert_int_eq(clrt_module_add_child(m, "a", clrt_relu()), CLRT_EINVAL);
    clrt_tensor *ints = TU_NONNULL(clrt_zeros(tu_device(), CLRT_I32, 1, s));
    ck_assert_int_eq(clrt_module_add_parameter(m, "i", ints), CLRT_EDTYPE);
    clrt_tensor *x = TU_NONNULL(clrt_ones(tu_device(), CLRT_F32, 1, s));
    TU_OK(clrt_requires_grad_(x, 1));
    clrt_tensor *computed = TU_NONNULL(clrt_mul(x, x));
    ck_assert_int_eq(clrt_module_add_parameter(m, "c", computed), CLRT_EINVAL);
    tu_assert_error(CLRT_EINVAL, "recorded op", "clrt_detach", NULL);
    ck_assert_ptr_null(clrt_module_child_named(m, "nope"));
    ck_assert_ptr_null(clrt_module_new(NULL, NULL));
    clrt_tensor *all[] = {t, ints, x, computed};
    for (int i = 0; i < 4; i++)
        clrt_tensor_release(all[i]);
    clrt_module_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("module_custom");
    TCase *tc = tu_tcase("module_custom");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, gradients_through_autograd);
    tcase_add_test(tc, gradients_through_the_explicit_backward);
    tcase_add_test(tc, state_save_load_clone);
    tcase_add_test(tc, registration_errors);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
