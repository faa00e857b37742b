/* The Embedding and LayerNorm modules (nn.Embedding, nn.LayerNorm):
 * forward and the gradients clrt_backward gives against float64, repeated
 * ids included; PyTorch's initial values and state names; errors. */
#include "testutil.h"

#include <math.h>
#include <string.h>

#define TOL 2e-5

static clrt_tensor *upload(const float *v, int ndim, const int64_t *shape)
{
    return TU_NONNULL(clrt_from_host(tu_device(), CLRT_F32, ndim, shape, v));
}

/* sum(y * r) backward: r random, the loss's gradient w.r.t. y is r. */
static void backward_through(clrt_tensor *y, const float *r)
{
    int64_t shape[CLRT_MAX_DIMS];
    int ndim = clrt_tensor_ndim(y);
    for (int i = 0; i < ndim; i++)
        shape[i] = clrt_tensor_shape(y)[i];
    clrt_tensor *rt = upload(r, ndim, shape);
    clrt_tensor *yr = TU_NONNULL(clrt_mul(y, rt));
    clrt_tensor *loss = TU_NONNULL(clrt_sum(yr));
    TU_OK(clrt_backward(loss));
    clrt_tensor_release(loss);
    clrt_tensor_release(yr);
    clrt_tensor_release(rt);
}

static void check_close(const char *what, const clrt_tensor *t, const double *want, size_t n)
{
    float *got = tu_read(t);
    double err = tu_rel_err(got, want, n, 1.0);
    ck_assert_msg(err <= TOL, "%s: relative error %.3g", what, err);
    free(got);
}

enum { V = 11, D = 6, B = 3, T = 5 };

/* Rows of the weight, and the weight's gradient as float64 sums of the
 * upstream rows over every position of each id (ids repeat). */
START_TEST(embedding_matches_reference)
{
    uint64_t rng = tu_seed();
    clrt_module *m = TU_NONNULL(clrt_embedding(V, D));
    int32_t ids[B * T];
    for (int i = 0; i < B * T; i++)
        ids[i] = (int32_t)(tu_next(&rng) % 4) * 3; /* 0, 3, 6, 9: repeats */
    int64_t ishape[2] = {B, T};
    clrt_tensor *it = TU_NONNULL(clrt_from_host(tu_device(), CLRT_I32, 2, ishape, ids));
    clrt_tensor *w = clrt_module_param(m, "weight");
    float *fw = tu_read(w);
    clrt_tensor *y = TU_NONNULL(clrt_module_forward(m, it));
    ck_assert_int_eq(clrt_tensor_ndim(y), 3);
    ck_assert_int_eq(clrt_tensor_shape(y)[2], D);
    float *fy = tu_read(y);
    for (int i = 0; i < B * T; i++)
        ck_assert_msg(memcmp(fy + i * D, fw + ids[i] * D, D * sizeof(float)) == 0,
                      "row %d is not weight's row %d", i, ids[i]);
    float *r = tu_random_floats(&rng, B * T * D, -1, 1);
    backward_through(y, r);
    double gw[V * D] = {0};
    for (int i = 0; i < B * T; i++)
        for (int j = 0; j < D; j++)
            gw[ids[i] * D + j] += r[i * D + j];
    clrt_tensor *g = TU_NONNULL(clrt_tensor_grad(w));
    check_close("weight.grad", g, gw, V * D);
    clrt_tensor_release(g);
    free(r), free(fy), free(fw);
    clrt_tensor_release(y);
    clrt_tensor_release(it);
    clrt_module_free(m);
}
END_TEST

/* nn.Embedding's N(0, 1), the same values for the same seed. */
START_TEST(embedding_init_is_standard_normal)
{
    clrt_module *a = TU_NONNULL(clrt_embedding(2000, 64));
    clrt_module *b = TU_NONNULL(clrt_embedding(2000, 64));
    TU_OK(clrt_module_init(a, 7));
    TU_OK(clrt_module_init(b, 7));
    float *fa = tu_read(clrt_module_param(a, "weight"));
    float *fb = tu_read(clrt_module_param(b, "weight"));
    double sum = 0, sq = 0;
    for (int i = 0; i < 2000 * 64; i++)
        sum += fa[i], sq += (double)fa[i] * fa[i];
    double mean = sum / (2000 * 64), sd = sqrt(sq / (2000 * 64) - mean * mean);
    ck_assert_msg(fabs(mean) < 0.01 && fabs(sd - 1) < 0.01, "mean %g, sd %g", mean, sd);
    ck_assert(memcmp(fa, fb, 2000 * 64 * sizeof(float)) == 0);
    free(fa), free(fb);
    clrt_module_free(a);
    clrt_module_free(b);
}
END_TEST

/* y = (x - mean) / sqrt(var + eps) * w + b over the last dim, and the
 * gradients of x, weight and bias, in float64. */
START_TEST(layernorm_matches_reference)
{
    enum { R = 12, C = 10 };
    uint64_t rng = tu_seed() + 1;
    clrt_module *m = TU_NONNULL(clrt_layernorm(C));
    float *fx = tu_random_floats(&rng, R * C, -2, 3), *fw = tu_random_floats(&rng, C, 0.5, 1.5);
    float *fb = tu_random_floats(&rng, C, -1, 1), *r = tu_random_floats(&rng, R * C, -1, 1);
    TU_OK(clrt_copy_from_host(clrt_module_param(m, "weight"), fw, C * sizeof(float)));
    TU_OK(clrt_copy_from_host(clrt_module_param(m, "bias"), fb, C * sizeof(float)));
    int64_t xshape[3] = {3, 4, C};
    clrt_tensor *x = upload(fx, 3, xshape);
    TU_OK(clrt_requires_grad_(x, 1));
    clrt_tensor *y = TU_NONNULL(clrt_module_forward(m, x));
    double want[R * C], gx[R * C], gw[C] = {0}, gb[C] = {0};
    for (int i = 0; i < R; i++) {
        const float *row = fx + i * C;
        double mean = 0, var = 0, xhat[C], gh[C], s1 = 0, s2 = 0;
        for (int j = 0; j < C; j++)
            mean += row[j] / (double)C;
        for (int j = 0; j < C; j++)
            var += (row[j] - mean) * (row[j] - mean) / C;
        double inv = 1 / sqrt(var + 1e-5);
        for (int j = 0; j < C; j++) {
            xhat[j] = (row[j] - mean) * inv;
            want[i * C + j] = xhat[j] * fw[j] + fb[j];
            gw[j] += r[i * C + j] * xhat[j];
            gb[j] += r[i * C + j];
            gh[j] = r[i * C + j] * fw[j];
            s1 += gh[j], s2 += gh[j] * xhat[j];
        }
        for (int j = 0; j < C; j++)
            gx[i * C + j] = inv * (gh[j] - s1 / C - xhat[j] * s2 / C);
    }
    check_close("y", y, want, R * C);
    backward_through(y, r);
    clrt_tensor *g[3] = {TU_NONNULL(clrt_tensor_grad(x)),
                         TU_NONNULL(clrt_tensor_grad(clrt_module_param(m, "weight"))),
                         TU_NONNULL(clrt_tensor_grad(clrt_module_param(m, "bias")))};
    check_close("x.grad", g[0], gx, R * C);
    check_close("weight.grad", g[1], gw, C);
    check_close("bias.grad", g[2], gb, C);
    for (int i = 0; i < 3; i++)
        clrt_tensor_release(g[i]);
    free(fx), free(fw), free(fb), free(r);
    clrt_tensor_release(y);
    clrt_tensor_release(x);
    clrt_module_free(m);
}
END_TEST

/* PyTorch's state names and initial values; clear errors. */
START_TEST(state_names_init_and_errors)
{
    clrt_module *ln = TU_NONNULL(clrt_layernorm(4));
    const char *names[2];
    clrt_tensor *p[2];
    ck_assert_int_eq(clrt_module_parameters(ln, names, p, NULL, 2), 2);
    ck_assert_str_eq(names[0], "weight");
    ck_assert_str_eq(names[1], "bias");
    float *w = tu_read(p[0]), *b = tu_read(p[1]);
    for (int i = 0; i < 4; i++)
        ck_assert(w[i] == 1 && b[i] == 0);
    free(w), free(b);
    ck_assert_str_eq(clrt_module_kind(ln), "LayerNorm");
    int64_t bad[2] = {2, 5};
    clrt_tensor *x = TU_NONNULL(clrt_zeros(tu_device(), CLRT_F32, 2, bad));
    ck_assert_ptr_null(clrt_module_forward(ln, x));
    tu_assert_error(CLRT_ESHAPE, "[2, 5]", NULL);

    clrt_module *emb = TU_NONNULL(clrt_embedding(5, 3));
    ck_assert_str_eq(clrt_module_kind(emb), "Embedding");
    ck_assert_int_eq(clrt_module_parameters(emb, names, p, NULL, 2), 1);
    ck_assert_str_eq(names[0], "weight");
    ck_assert_ptr_null(clrt_module_forward(emb, x)); /* float ids */
    tu_assert_error(CLRT_EDTYPE, "int32", NULL);

    ck_assert_ptr_null(clrt_embedding(0, 3));
    tu_assert_error(CLRT_EINVAL, "clrt_embedding(0, 3)", NULL);
    ck_assert_ptr_null(clrt_layernorm(-1));
    tu_assert_error(CLRT_EINVAL, "clrt_layernorm(-1)", NULL);
    clrt_tensor_release(x);
    clrt_module_free(ln);
    clrt_module_free(emb);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("embedding_layernorm");
    TCase *tc = tu_tcase("embedding_layernorm");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, embedding_matches_reference);
    tcase_add_test(tc, embedding_init_is_standard_normal);
    tcase_add_test(tc, layernorm_matches_reference);
    tcase_add_test(tc, state_names_init_and_errors);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
