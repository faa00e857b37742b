/* The transformer modules (clrt_transformer_encoder_layer,
 * clrt_transformer_encoder, clrt_gpt) beyond their values, which
 * tests/python checks against PyTorch: state names and sizes, dropout in
 * training and evaluation, ids out of range, and bad arguments and inputs
 * refused with errors naming them. */
#include "testutil.h"

#include <math.h>
#include <string.h>

enum { V = 13, BLOCK = 9, D = 16, H = 4, L = 2, FF = 24 };

static clrt_tensor *ids_tensor(const int32_t *ids, int64_t b, int64_t t)
{
    int64_t shape[2] = {b, t};
    return TU_NONNULL(clrt_from_host(tu_device(), CLRT_I32, 2, shape, ids));
}

/* PyTorch's names in PyTorch's order, and every parameter counted. */
START_TEST(gpt_state_names_and_sizes)
{
    static const char *const layer_names[] = {"self_attn.in_proj_weight",
                                              "self_attn.in_proj_bias",
                                              "self_attn.out_proj.weight",
                                              "self_attn.out_proj.bias",
                                              "linear1.weight",
                                              "linear1.bias",
                                              "linear2.weight",
                                              "linear2.bias",
                                              "norm1.weight",
                                              "norm1.bias",
                                              "norm2.weight",
                                              "norm2.bias"};
    clrt_module *gpt = TU_NONNULL(clrt_gpt(V, BLOCK, D, H, L, FF));
    const char *names[64];
    int n = clrt_module_parameters(gpt, names, NULL, NULL, 64);
    ck_assert_int_eq(n, 2 + 12 * L + 3);
    ck_assert_str_eq(names[0], "tok_emb.weight");
    ck_assert_str_eq(names[1], "pos_emb.weight");
    for (int l = 0; l < L; l++)
        for (int i = 0; i < 12; i++)
            ck_assert_str_eq(names[2 + 12 * l + i],
                             tu_fmt("encoder.layers.%d.%s", l, layer_names[i]));
    ck_assert_str_eq(names[n - 3], "norm.weight");
    ck_assert_str_eq(names[n - 2], "norm.bias");
    ck_assert_str_eq(names[n - 1], "head.weight"); /* no head.bias */
    int64_t layer = 3 * D * D + 3 * D + D * D + D + FF * D + FF + D * FF + D + 4 * D;
    ck_assert_int_eq(clrt_module_param_count(gpt), V * D + BLOCK * D + L * layer + 2 * D + V * D);
    ck_assert_str_eq(clrt_module_kind(gpt), "GPT");
    clrt_module_free(gpt);
}
END_TEST

/* Logits [B, T, V] for T < block; an id outside the vocabulary makes the
 * logits of its position and every later one NaN (its row is NaN; no
 * memory out of bounds is read) and leaves the other sequences alone.
 * Earlier positions stay finite on the fused attention, which skips masked
 * keys; the composed ops' 0 * NaN reaches them too, as in PyTorch's. */
START_TEST(gpt_logits_and_ids_out_of_range)
{
    uint64_t rng = tu_seed();
    clrt_module *gpt = TU_NONNULL(clrt_gpt(V, BLOCK, D, H, L, FF));
    TU_OK(clrt_module_init(gpt, rng));
    clrt_module_train(gpt, 0);
    enum { B = 2, T = 6, BAD = 4 };
    int32_t ids[B * T];
    for (int i = 0; i < B * T; i++)
        ids[i] = (int32_t)(tu_next(&rng) % V);
    ids[T + BAD] = V; /* batch 1, position BAD */
    clrt_tensor *it = ids_tensor(ids, B, T);
    clrt_tensor *y = TU_NONNULL(clrt_module_forward(gpt, it));
    ck_assert_int_eq(clrt_tensor_ndim(y), 3);
    ck_assert_int_eq(clrt_tensor_shape(y)[0], B);
    ck_assert_int_eq(clrt_tensor_shape(y)[1], T);
    ck_assert_int_eq(clrt_tensor_shape(y)[2], V);
    float *f = tu_read(y);
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++)
            for (int v = 0; v < V; v++) {
                int nan = isnan(f[(b * T + t) * V + v]) != 0;
                ck_assert_msg(b == 1 && t < BAD ? 1 : nan == (b == 1), "logit [%d, %d, %d] = %g", b,
                              t, v, f[(b * T + t) * V + v]);
            }
    free(f);
    clrt_tensor_release(y);
    clrt_tensor_release(it);
    clrt_module_free(gpt);
}
END_TEST

START_TEST(gpt_bad_input)
{
    clrt_module *gpt = TU_NONNULL(clrt_gpt(V, BLOCK, D, H, L, FF));
    int32_t ids[2 * (BLOCK + 1)] = {0};
    clrt_tensor *longer = ids_tensor(ids, 2, BLOCK + 1);
    ck_assert_ptr_null(clrt_module_forward(gpt, longer));
    tu_assert_error(CLRT_ESHAPE, "GPT(block=9)", "[2, 10]", NULL);
    int64_t flat[1] = {4};
    clrt_tensor *vec = TU_NONNULL(clrt_from_host(tu_device(), CLRT_I32, 1, flat, ids));
    ck_assert_ptr_null(clrt_module_forward(gpt, vec));
    tu_assert_error(CLRT_ESHAPE, "[4]", NULL);
    int64_t shape[2] = {2, 3};
    clrt_tensor *floats = TU_NONNULL(clrt_zeros(tu_device(), CLRT_F32, 2, shape));
    ck_assert_ptr_null(clrt_module_forward(gpt, floats));
    tu_assert_error(CLRT_EDTYPE, "int32", "float32", NULL);
    clrt_tensor_release(longer), clrt_tensor_release(vec), clrt_tensor_release(floats);
    clrt_module_free(gpt);

    ck_assert_ptr_null(clrt_gpt(V, BLOCK, D, 3, L, FF));
    tu_assert_error(CLRT_EINVAL, "clrt_gpt", "d_model 16, nhead 3", NULL);
    ck_assert_ptr_null(clrt_gpt(0, BLOCK, D, H, L, FF));
    tu_assert_error(CLRT_EINVAL, "clrt_gpt(0, 9, 16, 4, 2, 24)", NULL);
    ck_assert_ptr_null(clrt_gpt_ex(V, BLOCK, D, H, L, FF, 1.0));
    tu_assert_error(CLRT_EINVAL, "dropout 1", NULL);
}
END_TEST

START_TEST(encoder_layer_errors)
{
    ck_assert_ptr_null(clrt_transformer_encoder_layer(10, 4, 8, 0.1, CLRT_ACTIVATION_RELU, 0));
    tu_assert_error(CLRT_EINVAL, "clrt_transformer_encoder_layer", "nhead 4", NULL);
    ck_assert_ptr_null(clrt_transformer_encoder_layer(8, 2, 8, -0.5, CLRT_ACTIVATION_RELU, 0));
    tu_assert_error(CLRT_EINVAL, "dropout -0.5", NULL);
    ck_assert_ptr_null(clrt_transformer_encoder_layer(8, 2, 8, 0.1, (clrt_activation)7, 0));
    tu_assert_error(CLRT_EINVAL, "activation 7", NULL);
    ck_assert_ptr_null(clrt_transformer_encoder(0, NULL));
    tu_assert_error(CLRT_EINVAL, "clrt_transformer_encoder(0)", NULL);

    clrt_module *layer =
        TU_NONNULL(clrt_transformer_encoder_layer(8, 2, 12, 0.1, CLRT_ACTIVATION_GELU, 1));
    char desc[1024];
    clrt_module_str(layer, desc, sizeof desc);
    ck_assert_msg(strstr(desc, "TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=12, "
                               "dropout=0.1, activation=gelu, norm_first=True)"),
                  "%s", desc);
    int64_t shape[3] = {2, 3, 7};
    clrt_tensor *x = TU_NONNULL(clrt_zeros(tu_device(), CLRT_F32, 3, shape));
    ck_assert_ptr_null(clrt_module_forward(layer, x));
    tu_assert_error(CLRT_ESHAPE, "d_model=8", "[2, 3, 7]", NULL);
    clrt_tensor *three[3] = {x, x, x};
    ck_assert_ptr_null(clrt_module_forward_n(layer, 3, three));
    tu_assert_error(CLRT_EINVAL, "got 3 inputs", NULL);
    clrt_tensor_release(x);
    clrt_module_free(layer);
}
END_TEST

static float *forward_read(clrt_module *m, clrt_tensor *x)
{
    clrt_tensor *y = TU_NONNULL(clrt_module_forward(m, x));
    float *f = tu_read(y);
    clrt_tensor_release(y);
    return f;
}

/* With dropout p in training, each forward draws new masks; in evaluation
 * the layer is the one without dropout (same seed, same parameters). */
START_TEST(encoder_layer_dropout)
{
    enum { B = 2, T = 5, E = 8, N = B * T * E };
    uint64_t rng = tu_seed();
    clrt_module *plain =
        TU_NONNULL(clrt_transformer_encoder_layer(E, 2, 12, 0.0, CLRT_ACTIVATION_RELU, 0));
    clrt_module *drop =
        TU_NONNULL(clrt_transformer_encoder_layer(E, 2, 12, 0.3, CLRT_ACTIVATION_RELU, 0));
    TU_OK(clrt_module_init(plain, rng));
    TU_OK(clrt_module_init(drop, rng));
    float *xv = tu_random_floats(&rng, N, -1, 1);
    int64_t shape[3] = {B, T, E};
    clrt_tensor *x = TU_NONNULL(clrt_from_host(tu_device(), CLRT_F32, 3, shape, xv));
    float *a = forward_read(drop, x), *b = forward_read(drop, x), *c = forward_read(plain, x);
    ck_assert_msg(tu_rel_diff(a, b, N) > 1e-3, "two training forwards gave the same output");
    ck_assert_msg(tu_rel_diff(a, c, N) > 1e-3, "dropout changed nothing in training");
    clrt_module_train(drop, 0);
    clrt_module_train(plain, 0);
    float *d = forward_read(drop, x), *e = forward_read(plain, x);
    ck_assert_msg(memcmp(d, e, N * sizeof *d) == 0, "evaluation differs from the plain layer");
    for (int i = 0; i < N; i++)
        ck_assert(isfinite(d[i]));
    free(a), free(b), free(c), free(d), free(e), free(xv);
    clrt_tensor_release(x);
    clrt_module_free(plain);
    clrt_module_free(drop);
}
END_TEST

/* Linear without a bias: no "bias" in its state, y = x W^T against
 * float64, and W's gradient of sum(y) = the column sums of x. */
START_TEST(linear_without_bias)
{
    enum { R = 5, IN = 3, OUT = 4 };
    uint64_t rng = tu_seed();
    clrt_module *l = TU_NONNULL(clrt_linear_ex(IN, OUT, 0));
    const char *names[2];
    ck_assert_int_eq(clrt_module_parameters(l, names, NULL, NULL, 2), 1);
    ck_assert_str_eq(names[0], "weight");
    char desc[128];
    ck_assert(strstr(clrt_module_str(l, desc, sizeof desc), "bias=False"));
    float *xv = tu_random_floats(&rng, R * IN, -1, 1);
    int64_t shape[2] = {R, IN};
    clrt_tensor *x = TU_NONNULL(clrt_from_host(tu_device(), CLRT_F32, 2, shape, xv));
    clrt_tensor *y = TU_NONNULL(clrt_module_forward(l, x)), *loss = TU_NONNULL(clrt_sum(y));
    TU_OK(clrt_backward(loss));
    float *w = tu_read(clrt_module_param(l, "weight")), *got = tu_read(y);
    float *gw = tu_read(clrt_module_grad(l, "weight"));
    double want[R * OUT], want_gw[OUT * IN];
    for (int r = 0; r < R; r++)
        for (int o = 0; o < OUT; o++) {
            want[r * OUT + o] = 0;
            for (int i = 0; i < IN; i++)
                want[r * OUT + o] += (double)xv[r * IN + i] * w[o * IN + i];
        }
    for (int o = 0; o < OUT; o++)
        for (int i = 0; i < IN; i++) {
            want_gw[o * IN + i] = 0;
            for (int r = 0; r < R; r++)
                want_gw[o * IN + i] += xv[r * IN + i];
        }
    ck_assert_msg(tu_rel_err(got, want, R * OUT, 1.0) <= 1e-6, "y");
    ck_assert_msg(tu_rel_err(gw, want_gw, OUT * IN, 1.0) <= 1e-6, "grad W");
    free(xv), free(w), free(got), free(gw);
    clrt_tensor_release(x), clrt_tensor_release(y), clrt_tensor_release(loss);
    clrt_module_free(l);
}
END_TEST

START_TEST(attention_dropout_argument)
{
    ck_assert_ptr_null(clrt_multihead_attention_ex(8, 2, 1.0));
    tu_assert_error(CLRT_EINVAL, "dropout 1 is not in [0, 1)", NULL);
    clrt_module *m = TU_NONNULL(clrt_multihead_attention_ex(8, 2, 0.25));
    char desc[256];
    ck_assert(strstr(clrt_module_str(m, desc, sizeof desc), "dropout=0.25"));
    clrt_module_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("transformer");
    TCase *tc = tu_tcase("transformer");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, gpt_state_names_and_sizes);
    tcase_add_test(tc, gpt_logits_and_ids_out_of_range);
    tcase_add_test(tc, gpt_bad_input);
    tcase_add_test(tc, encoder_layer_errors);
    tcase_add_test(tc, encoder_layer_dropout);
    tcase_add_test(tc, linear_without_bias);
    tcase_add_test(tc, attention_dropout_argument);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
