/* Softmax cross-entropy against a float64 reference on fresh random inputs:
 * loss sums, gradients (also against central finite differences), correct
 * counts, accumulation over calls, out-of-range labels, argument errors. */
#include "testutil.h"

#include "runtime/device/device_internal.h"

#include <math.h>

typedef struct {
    int N, K;
    double scale; /* logits uniform in [-scale, scale) */
} loss_case;

/* One row/one class, odd sizes, a batch larger than a work-group, large
 * logits (the max subtraction keeps exp finite). */
static const loss_case cases[] = {
    {1, 1, 5}, {1, 10, 5}, {7, 10, 5}, {256, 10, 5}, {13, 3, 20}, {1000, 37, 10}, {5, 7, 2000},
};
#define N_CASES ((int)(sizeof cases / sizeof cases[0]))

/* Relative error bounds: the loss sums N float terms; a gradient entry is
 * one softmax value. */
#define LOSS_TOL 1e-5
#define GRAD_TOL 1e-6

/* Per-row loss (0 for an out-of-range label) and whether argmax == label. */
static double ref_row(const double *x, int K, int y, double *grad_row, double scale, int *hit)
{
    double m = x[0], s = 0;
    int am = 0;
    for (int j = 1; j < K; j++)
        if (x[j] > m || (isnan(x[j]) && !isnan(m))) /* clrt_argmax's rule */
            m = x[j], am = j;
    for (int j = 0; j < K; j++)
        s += exp(x[j] - m);
    int valid = y >= 0 && y < K;
    *hit = valid && am == y;
    for (int j = 0; grad_row && j < K; j++)
        grad_row[j] = valid ? (exp(x[j] - m) / s - (j == y)) * scale : 0.0;
    return valid ? m + log(s) - x[y] : 0.0;
}

/* Sum of row losses; grad (may be NULL) = (softmax - onehot) / V, V the
 * rows whose label is in range (PyTorch's mean with ignore_index). */
static double ref_loss(const double *x, const int *y, int N, int K, double *grad, int *correct)
{
    double l = 0;
    int valid = 0;
    for (int i = 0; i < N; i++)
        valid += y[i] >= 0 && y[i] < K;
    *correct = 0;
    for (int i = 0; i < N; i++) {
        int hit;
        double *g = grad ? grad + (size_t)i * K : NULL;
        l += ref_row(x + (size_t)i * K, K, y[i], g, valid ? 1.0 / valid : 0.0, &hit);
        *correct += hit;
    }
    return l;
}

typedef struct {
    int N, K;
    float *x;
    double *xd;
    int *y;
    clrt_tensor *logits, *labels;
} batch;

static batch batch_make(loss_case c, uint64_t *rng)
{
    batch b = {c.N,
               c.K,
               tu_random_floats(rng, (size_t)c.N * c.K, -c.scale, c.scale),
               NULL,
               malloc((size_t)c.N * sizeof(int)),
               NULL,
               NULL};
    b.xd = malloc((size_t)c.N * c.K * sizeof(double));
    for (size_t i = 0; i < (size_t)c.N * c.K; i++)
        b.xd[i] = b.x[i];
    for (int i = 0; i < c.N; i++)
        b.y[i] = (int)(tu_next(rng) % (uint64_t)c.K);
    int64_t ls[2] = {c.N, c.K}, ys = c.N;
    b.logits = TU_NONNULL(clrt_from_host(tu_device(), CLRT_F32, 2, ls, b.x));
    b.labels = TU_NONNULL(clrt_from_host(tu_device(), CLRT_I32, 1, &ys, b.y));
    return b;
}

static void batch_free(batch *b)
{
    free(b->x), free(b->xd), free(b->y);
    clrt_tensor_release(b->logits), clrt_tensor_release(b->labels);
}

static double item(const clrt_tensor *t)
{
    double v = 0;
    TU_OK(clrt_item(t, &v));
    return v;
}

static clrt_tensor *scalar(clrt_dtype dt, double v)
{
    return TU_NONNULL(clrt_full(tu_device(), dt, 0, NULL, v));
}

START_TEST(values_grad_counts)
{
    uint64_t rng = tu_seed() + (uint64_t)_i * 17;
    batch b = batch_make(cases[_i], &rng);
    size_t n = (size_t)b.N * b.K;
    double *ref_grad = malloc(n * sizeof *ref_grad);
    int ref_correct;
    double ref = ref_loss(b.xd, b.y, b.N, b.K, ref_grad, &ref_correct);

    clrt_tensor *loss = scalar(CLRT_F32, 0), *correct = scalar(CLRT_I32, 0);
    clrt_tensor *grad =
        TU_NONNULL(clrt_empty(tu_device(), CLRT_F32, 2, clrt_tensor_shape(b.logits)));
    TU_OK(clrt_cross_entropy(b.logits, b.labels, loss, grad, correct));
    double got = item(loss);
    ck_assert_msg(fabs(got - ref) <= LOSS_TOL * fmax(fabs(ref), 1.0),
                  "case %d: loss %.9g, want %.9g", _i, got, ref);
    ck_assert_int_eq((int)item(correct), ref_correct);
    float *g = tu_read(grad);
    /* At least the one-hot term's size, 1/N: where the label is a confident
     * argmax, softmax - 1 and every entry are tiny, and float32's rounding
     * of the 1 (6e-8) is not. */
    double err = tu_rel_err(g, ref_grad, n, 1.0 / b.N);
    ck_assert_msg(err <= GRAD_TOL, "case %d: grad rel err %.3g > %.3g", _i, err, GRAD_TOL);

    /* The conveniences agree: the mean loss and the count alone. */
    clrt_tensor *mean = TU_NONNULL(clrt_cross_entropy_loss(b.logits, b.labels));
    ck_assert_int_eq(clrt_tensor_ndim(mean), 0);
    ck_assert_msg(fabs(item(mean) - ref / b.N) <= LOSS_TOL * fmax(fabs(ref / b.N), 1.0),
                  "mean loss %.9g, want %.9g", item(mean), ref / b.N);
    clrt_tensor *c2 = scalar(CLRT_I32, 0);
    TU_OK(clrt_count_correct(b.logits, b.labels, c2));
    ck_assert_int_eq((int)item(c2), ref_correct);

    free(g), free(ref_grad);
    clrt_tensor_release(loss), clrt_tensor_release(correct), clrt_tensor_release(grad);
    clrt_tensor_release(mean), clrt_tensor_release(c2);
    batch_free(&b);
}
END_TEST

/* Two calls add up, onto whatever the accumulators held; grad is
 * overwritten each time; NULL outputs are skipped. */
START_TEST(accumulates_over_calls)
{
    uint64_t rng = tu_seed() + 99;
    batch b1 = batch_make((loss_case){37, 10, 4}, &rng);
    batch b2 = batch_make((loss_case){300, 10, 4}, &rng);
    int c1, c2;
    double l1 = ref_loss(b1.xd, b1.y, b1.N, b1.K, NULL, &c1);
    double l2 = ref_loss(b2.xd, b2.y, b2.N, b2.K, NULL, &c2);
    clrt_tensor *loss = scalar(CLRT_F32, 1.5), *correct = scalar(CLRT_I32, 7);
    TU_OK(clrt_cross_entropy(b1.logits, b1.labels, loss, NULL, correct));
    TU_OK(clrt_cross_entropy(b2.logits, b2.labels, loss, NULL, NULL));
    TU_OK(clrt_cross_entropy(b2.logits, b2.labels, NULL, NULL, correct));
    double want = 1.5 + l1 + l2;
    ck_assert_msg(fabs(item(loss) - want) <= LOSS_TOL * want, "loss %.9g, want %.9g", item(loss),
                  want);
    ck_assert_int_eq((int)item(correct), 7 + c1 + c2);
    clrt_tensor_release(loss), clrt_tensor_release(correct);
    batch_free(&b1), batch_free(&b2);
}
END_TEST

/* Rows with labels outside 0..K-1 add no loss, no hit and a zero gradient
 * row; the other rows are unaffected. */
START_TEST(out_of_range_labels)
{
    uint64_t rng = tu_seed() + 5;
    batch b = batch_make((loss_case){6, 5, 3}, &rng);
    int bad[4] = {-1, 5, 2147483647, -2147483647 - 1};
    for (int i = 0; i < 4; i++)
        b.y[i] = bad[i];
    TU_OK(clrt_copy_from_host(b.labels, b.y, sizeof(int) * 6));
    double *ref_grad = malloc(30 * sizeof *ref_grad);
    int ref_correct;
    double ref = ref_loss(b.xd, b.y, 6, 5, ref_grad, &ref_correct);
    clrt_tensor *loss = scalar(CLRT_F32, 0), *correct = scalar(CLRT_I32, 0);
    clrt_tensor *grad =
        TU_NONNULL(clrt_empty(tu_device(), CLRT_F32, 2, clrt_tensor_shape(b.logits)));
    TU_OK(clrt_cross_entropy(b.logits, b.labels, loss, grad, correct));
    ck_assert(fabs(item(loss) - ref) <= LOSS_TOL * fmax(ref, 1.0));
    ck_assert_int_eq((int)item(correct), ref_correct);
    float *g = tu_read(grad);
    for (int j = 0; j < 20; j++)
        ck_assert(g[j] == 0.0f);
    /* the mean over the 2 rows that count (issue 36: it was over all 6) */
    double err = tu_rel_err(g, ref_grad, 30, 1.0 / 2);
    ck_assert_msg(err <= GRAD_TOL, "grad with ignored rows: rel err %.3g", err);
    /* The count of ignored rows is there, and the mean is over the others
     * (issue 25: nothing said how many were ignored). */
    clrt_tensor *ignored = scalar(CLRT_I32, 1);
    TU_OK(clrt_cross_entropy_ex(b.logits, b.labels, NULL, NULL, NULL, ignored));
    ck_assert_int_eq((int)item(ignored), 1 + 4);
    clrt_tensor *mean = TU_NONNULL(clrt_cross_entropy_loss(b.logits, b.labels));
    ck_assert_msg(fabs(item(mean) - ref / 2) <= LOSS_TOL * fmax(ref / 2, 1.0), "mean %g, want %g",
                  item(mean), ref / 2);
    clrt_tensor_release(mean);
    /* A batch whose labels are all out of range says so: its mean is NaN. */
    for (int i = 0; i < 6; i++)
        b.y[i] = 5 + i;
    TU_OK(clrt_copy_from_host(b.labels, b.y, sizeof(int) * 6));
    mean = TU_NONNULL(clrt_cross_entropy_loss(b.logits, b.labels));
    ck_assert_msg(isnan(item(mean)), "mean of an all-ignored batch: %g", item(mean));
    TU_OK(clrt_cross_entropy_ex(b.logits, b.labels, NULL, NULL, NULL, ignored));
    ck_assert_int_eq((int)item(ignored), 1 + 4 + 6);
    /* and its gradient is zero, as PyTorch's */
    TU_OK(clrt_fill_(grad, NAN));
    TU_OK(clrt_cross_entropy(b.logits, b.labels, NULL, grad, NULL));
    free(g);
    g = tu_read(grad);
    for (int j = 0; j < 30; j++)
        ck_assert_msg(g[j] == 0.0f, "all-ignored grad[%d] = %g", j, g[j]);
    clrt_tensor_release(mean), clrt_tensor_release(ignored);
    free(g), free(ref_grad);
    clrt_tensor_release(loss), clrt_tensor_release(correct), clrt_tensor_release(grad);
    batch_free(&b);
}
END_TEST

/* Issue 36's case: logits [4, 3], labels {0, 1, -100, -100}: PyTorch's
 * F.cross_entropy(x, y).backward() gives grad[0][0] = -0.4550 (the mean
 * over the 2 rows that count; it was -0.2275, over all 4), and the
 * gradient is that of the mean loss clrt_cross_entropy_loss returns,
 * against central differences of it in float64. */
START_TEST(ignored_rows_pytorch_mean)
{
    float x[12] = {1, 2, 3, 0.5f, -1, 2, 3, 1, 0, 0, 0, 1};
    int y[4] = {0, 1, -100, -100};
    int64_t ls[2] = {4, 3}, ys = 4;
    clrt_tensor *logits = TU_NONNULL(clrt_from_host(tu_device(), CLRT_F32, 2, ls, x));
    clrt_tensor *labels = TU_NONNULL(clrt_from_host(tu_device(), CLRT_I32, 1, &ys, y));
    clrt_tensor *grad = TU_NONNULL(clrt_full(tu_device(), CLRT_F32, 2, ls, NAN));
    TU_OK(clrt_cross_entropy(logits, labels, NULL, grad, NULL));
    float *g = tu_read(grad);
    ck_assert_msg(fabs(g[0] - -0.4550) < 5e-5, "grad[0][0] %.4f, PyTorch -0.4550", g[0]);
    double xd[12], ref[12];
    int hits;
    for (int i = 0; i < 12; i++)
        xd[i] = x[i];
    ref_loss(xd, y, 4, 3, ref, &hits);
    for (int i = 0; i < 12; i++) {
        double keep = xd[i], h = 1e-5;
        xd[i] = keep + h;
        double lp = ref_loss(xd, y, 4, 3, NULL, &hits) / 2;
        xd[i] = keep - h;
        double lm = ref_loss(xd, y, 4, 3, NULL, &hits) / 2;
        xd[i] = keep;
        ck_assert_msg(fabs((lp - lm) / (2 * h) - ref[i]) < 1e-8, "reference %d vs fd", i);
        ck_assert_msg(fabs(g[i] - ref[i]) <= GRAD_TOL, "grad[%d] %.7g, want %.7g", i, g[i], ref[i]);
    }
    clrt_tensor *mean = TU_NONNULL(clrt_cross_entropy_loss(logits, labels));
    double want = ref_loss(xd, y, 4, 3, NULL, &hits) / 2;
    ck_assert_msg(fabs(item(mean) - want) <= LOSS_TOL * want, "mean %g, want %g", item(mean), want);
    free(g);
    clrt_tensor_release(logits), clrt_tensor_release(labels), clrt_tensor_release(grad);
    clrt_tensor_release(mean);
}
END_TEST

/* A row whose maximum is a NaN predicts the NaN's class, as clrt_argmax
 * says (issue 25: it was counted correct for label 0). */
START_TEST(correct_counts_nan_argmax)
{
    float x[2 * 5] = {5, 1, 2, NAN, 0, /* argmax 3 */ NAN, 9, NAN, 1, 1 /* argmax 0 */};
    int y[2] = {0, 0};
    int64_t ls[2] = {2, 5}, ys = 2;
    clrt_tensor *logits = TU_NONNULL(clrt_from_host(tu_device(), CLRT_F32, 2, ls, x));
    clrt_tensor *labels = TU_NONNULL(clrt_from_host(tu_device(), CLRT_I32, 1, &ys, y));
    clrt_tensor *correct = scalar(CLRT_I32, 0);
    clrt_tensor *am = TU_NONNULL(clrt_argmax_dim(logits, 1, 0));
    int32_t a[2];
    TU_OK(clrt_to_host(am, a, sizeof a));
    ck_assert(a[0] == 3 && a[1] == 0);
    TU_OK(clrt_count_correct(logits, labels, correct));
    ck_assert_int_eq((int)item(correct), 1);
    clrt_tensor_release(logits), clrt_tensor_release(labels), clrt_tensor_release(correct);
    clrt_tensor_release(am);
}
END_TEST

/* The reference gradient of the mean loss against central differences in
 * float64, and the device's gradient against the same. */
START_TEST(gradient_vs_finite_differences)
{
    uint64_t rng = tu_seed() + 1234;
    batch b = batch_make((loss_case){9, 6, 3}, &rng);
    size_t n = 54;
    double *ref_grad = malloc(n * sizeof *ref_grad);
    int hits;
    ref_loss(b.xd, b.y, b.N, b.K, ref_grad, &hits);
    clrt_tensor *grad =
        TU_NONNULL(clrt_empty(tu_device(), CLRT_F32, 2, clrt_tensor_shape(b.logits)));
    TU_OK(clrt_cross_entropy(b.logits, b.labels, NULL, grad, NULL));
    float *g = tu_read(grad);
    const double h = 1e-5;
    double diff_ref = 0, diff_dev = 0, max_ref = 1e-3;
    for (size_t i = 0; i < n; i++) {
        double keep = b.xd[i];
        b.xd[i] = keep + h;
        double lp = ref_loss(b.xd, b.y, b.N, b.K, NULL, &hits) / b.N;
        b.xd[i] = keep - h;
        double lm = ref_loss(b.xd, b.y, b.N, b.K, NULL, &hits) / b.N;
        b.xd[i] = keep;
        double fd = (lp - lm) / (2 * h);
        max_ref = fmax(max_ref, fabs(fd));
        diff_ref = fmax(diff_ref, fabs(fd - ref_grad[i]));
        diff_dev = fmax(diff_dev, fabs(fd - g[i]));
    }
    ck_assert_msg(diff_ref / max_ref < 1e-7, "reference vs fd: %g", diff_ref / max_ref);
    ck_assert_msg(diff_dev / max_ref < 1e-5, "device vs fd: %g", diff_dev / max_ref);
    free(g), free(ref_grad);
    clrt_tensor_release(grad);
    batch_free(&b);
}
END_TEST

/* Ties in the argmax: the first maximum is the prediction. */
START_TEST(correct_counts_first_max)
{
    float x[3 * 4] = {1, 3, 3, 0, /* argmax 1 */ 2, 2, 2, 2, /* 0 */ -1, -1, 5, 5 /* 2 */};
    int y[3] = {1, 1, 3};
    int64_t ls[2] = {3, 4}, ys = 3;
    clrt_tensor *logits = TU_NONNULL(clrt_from_host(tu_device(), CLRT_F32, 2, ls, x));
    clrt_tensor *labels = TU_NONNULL(clrt_from_host(tu_device(), CLRT_I32, 1, &ys, y));
    clrt_tensor *correct = scalar(CLRT_I32, 0);
    TU_OK(clrt_count_correct(logits, labels, correct));
    ck_assert_int_eq((int)item(correct), 1);
    clrt_tensor_release(logits), clrt_tensor_release(labels), clrt_tensor_release(correct);
}
END_TEST

START_TEST(bad_arguments)
{
    int64_t ls[2] = {4, 3}, n4 = 4, n5 = 5, two = 2;
    clrt_tensor *logits = TU_NONNULL(clrt_zeros(tu_device(), CLRT_F32, 2, ls));
    clrt_tensor *labels = TU_NONNULL(clrt_zeros(tu_device(), CLRT_I32, 1, &n4));
    clrt_tensor *labels_f = TU_NONNULL(clrt_zeros(tu_device(), CLRT_F32, 1, &n4));
    clrt_tensor *labels5 = TU_NONNULL(clrt_zeros(tu_device(), CLRT_I32, 1, &n5));
    clrt_tensor *loss2 = TU_NONNULL(clrt_zeros(tu_device(), CLRT_F32, 1, &two));
    clrt_tensor *loss = scalar(CLRT_F32, 3.0), *correct_f = scalar(CLRT_F32, 0);
    clrt_tensor *grad_bad = TU_NONNULL(clrt_zeros(tu_device(), CLRT_F32, 1, &n4));

    ck_assert_int_eq(clrt_cross_entropy(logits, labels_f, loss, NULL, NULL), CLRT_EDTYPE);
    tu_assert_error(CLRT_EDTYPE, "labels must be int32", "float32", NULL);
    ck_assert_int_eq(clrt_cross_entropy(logits, labels5, loss, NULL, NULL), CLRT_ESHAPE);
    tu_assert_error(CLRT_ESHAPE, "labels [5]", "[4]", "[4, 3]", NULL);
    ck_assert_int_eq(clrt_cross_entropy(logits, labels, loss2, NULL, NULL), CLRT_ESHAPE);
    tu_assert_error(CLRT_ESHAPE, "loss_sum", "[2]", NULL);
    clrt_tensor *one = TU_NONNULL(clrt_zeros(tu_device(), CLRT_F32, 1, (int64_t[]){1}));
    ck_assert_int_eq(clrt_cross_entropy(logits, labels, one, NULL, NULL), CLRT_ESHAPE);
    tu_assert_error(CLRT_ESHAPE, "loss_sum must be a 0-dim tensor", "[1]", NULL);
    clrt_tensor_release(one);
    ck_assert_int_eq(clrt_count_correct(logits, labels, correct_f), CLRT_EDTYPE);
    tu_assert_error(CLRT_EDTYPE, "correct must be int32", NULL);
    ck_assert_int_eq(clrt_cross_entropy(logits, labels, NULL, grad_bad, NULL), CLRT_ESHAPE);
    tu_assert_error(CLRT_ESHAPE, "[4, 3]", "[4]", NULL);
    ck_assert_int_eq(clrt_cross_entropy(NULL, labels, loss, NULL, NULL), CLRT_EINVAL);
    tu_assert_error(CLRT_EINVAL, "logits is NULL", NULL);
    ck_assert_int_eq(clrt_count_correct(logits, labels, NULL), CLRT_EINVAL);
    ck_assert_ptr_null(clrt_cross_entropy_loss(logits, NULL));
    tu_assert_error(CLRT_EINVAL, "labels is NULL", NULL);
    ck_assert_ptr_null(clrt_cross_entropy_loss(labels, labels));
    tu_assert_error(CLRT_EDTYPE, "logits must be float32", NULL);
    /* Nothing was added by the rejected calls. */
    ck_assert(item(loss) == 3.0);
    clrt_tensor *all[] = {logits, labels, labels_f, labels5, loss2, loss, correct_f, grad_bad};
    for (int k = 0; k < 8; k++)
        clrt_tensor_release(all[k]);
}
END_TEST

/* Mesa's llvmpipe (rusticl's CPU device) ends a work item's loops once
 * they have run 65535 iterations in all (runtime/device/device.c): rows of
 * more classes than xent_rows' three loops over them fit there are refused,
 * not summed in part. Here the cap lowered to what 37 classes take (3 K +
 * 8), then one less. */
START_TEST(loop_cap_refused)
{
    uint64_t rng = tu_seed() + 99;
    batch b = batch_make((loss_case){5, 37, 10}, &rng);
    int ref_correct;
    double ref = ref_loss(b.xd, b.y, b.N, b.K, NULL, &ref_correct);
    clrt_tensor *loss = scalar(CLRT_F32, 0);
    tu_device()->loop_cap = 3 * 37 + 9;
    TU_OK(clrt_cross_entropy(b.logits, b.labels, loss, NULL, NULL));
    ck_assert_msg(fabs(item(loss) - ref) <= LOSS_TOL * fmax(fabs(ref), 1.0), "loss %.9g, want %.9g",
                  item(loss), ref);
    tu_device()->loop_cap = 3 * 37 + 8;
    ck_assert_int_eq(clrt_cross_entropy(b.logits, b.labels, loss, NULL, NULL), CLRT_ENOTSUP);
    tu_assert_error(CLRT_ENOTSUP, "clrt_cross_entropy", "37 classes", "longer loops", NULL);
    clrt_tensor_release(loss);
    batch_free(&b);
}
END_TEST

static Suite *loss_suite(void)
{
    Suite *s = suite_create("loss");
    TCase *tc = tu_tcase("loss");
    tcase_set_timeout(tc, 300);
    tcase_add_loop_test(tc, values_grad_counts, 0, N_CASES);
    tcase_add_test(tc, accumulates_over_calls);
    tcase_add_test(tc, out_of_range_labels);
    tcase_add_test(tc, ignored_rows_pytorch_mean);
    tcase_add_test(tc, gradient_vs_finite_differences);
    tcase_add_test(tc, correct_counts_first_max);
    tcase_add_test(tc, correct_counts_nan_argmax);
    tcase_add_test(tc, bad_arguments);
    tcase_add_test(tc, loop_cap_refused);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return tu_run(loss_suite()); }
