/* fill_, copy_, cast and transpose, all dtypes, against host references. */
#include "test_elementwise_util.h"

#include <limits.h>

static void *read_all(const clrt_tensor *t)
{
    size_t bytes = clrt_tensor_nbytes(t);
    void *p = malloc(bytes ? bytes : 1);
    TU_OK(clrt_to_host(t, p, bytes));
    return p;
}

START_TEST(test_fill_every_dtype)
{
    clrt_device *d = tu_device();
    const int64_t sizes[] = {1, 7, 1009, TU_LARGE};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        int64_t n = sizes[k];
        clrt_tensor *f = TU_NONNULL(clrt_empty(d, CLRT_F32, 1, &n));
        clrt_tensor *i = TU_NONNULL(clrt_empty(d, CLRT_I32, 1, &n));
        clrt_tensor *u = TU_NONNULL(clrt_empty(d, CLRT_U8, 1, &n));
        TU_OK(clrt_fill_(f, -2.5));
        TU_OK(clrt_fill_(i, -7.9)); /* truncates toward zero, like PyTorch */
        TU_OK(clrt_fill_(u, 200.7));
        float *gf = read_all(f);
        int32_t *gi = read_all(i);
        uint8_t *gu = read_all(u);
        int64_t bad = 0; /* one check per tensor: a ck_assert per element is slow */
        for (int64_t j = 0; j < n; j++)
            bad += gf[j] != -2.5f || gi[j] != -7 || gu[j] != 200;
        ck_assert_msg(bad == 0, "fill_: %lld of %lld elements wrong", (long long)bad, (long long)n);
        free(gf);
        free(gi);
        free(gu);
        clrt_tensor_release(f);
        clrt_tensor_release(i);
        clrt_tensor_release(u);
    }
}
END_TEST

START_TEST(test_fill_rejects_unrepresentable)
{
    clrt_device *d = tu_device();
    clrt_tensor *i = TU_NONNULL(clrt_zeros(d, CLRT_I32, 1, EU_SHAPE(3)));
    clrt_tensor *u = TU_NONNULL(clrt_zeros(d, CLRT_U8, 1, EU_SHAPE(3)));
    ck_assert_int_eq(clrt_fill_(i, 3e9), CLRT_EINVAL);
    tu_assert_error(CLRT_EINVAL, "clrt_fill_", "int32", NULL);
    ck_assert_int_eq(clrt_fill_(i, NAN), CLRT_EINVAL);
    ck_assert_int_eq(clrt_fill_(u, 256), CLRT_EINVAL);
    tu_assert_error(CLRT_EINVAL, "uint8", NULL);
    ck_assert_int_eq(clrt_fill_(u, -1), CLRT_EINVAL);
    ck_assert_int_eq(clrt_fill_(NULL, 0), CLRT_EINVAL);
    int32_t gi[3];
    TU_OK(clrt_to_host(i, gi, sizeof gi));
    ck_assert_int_eq(gi[0] | gi[1] | gi[2], 0); /* untouched */
    clrt_tensor_release(i);
    clrt_tensor_release(u);
}
END_TEST

START_TEST(test_copy)
{
    clrt_device *d = tu_device();
    uint64_t rng = tu_seed() + 303;
    const int64_t sizes[] = {1, 97, TU_LARGE};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        int64_t n = sizes[k];
        float *hx;
        clrt_tensor *src = eu_random(d, &rng, 1, &n, -1, 1, &hx);
        clrt_tensor *dst = eu_poisoned(d, CLRT_F32, 1, &n);
        TU_OK(clrt_copy_(dst, src));
        float *got = tu_read(dst);
        ck_assert(memcmp(got, hx, (size_t)n * sizeof *got) == 0);
        free(got);
        free(hx);
        clrt_tensor_release(src);
        clrt_tensor_release(dst);
    }
    clrt_tensor *a = TU_NONNULL(clrt_zeros(d, CLRT_F32, 2, EU_SHAPE(2, 3)));
    clrt_tensor *b = TU_NONNULL(clrt_zeros(d, CLRT_F32, 2, EU_SHAPE(3, 2)));
    clrt_tensor *c = TU_NONNULL(clrt_zeros(d, CLRT_I32, 2, EU_SHAPE(2, 3)));
    ck_assert_int_eq(clrt_copy_(a, b), CLRT_ESHAPE);
    tu_assert_error(CLRT_ESHAPE, "clrt_copy_", "[2, 3]", "[3, 2]", NULL);
    ck_assert_int_eq(clrt_copy_(a, c), CLRT_EDTYPE);
    tu_assert_error(CLRT_EDTYPE, "clrt_copy_", "float32", "int32", NULL);
    ck_assert_int_eq(clrt_copy_(a, NULL), CLRT_EINVAL);
    TU_OK(clrt_copy_(a, a)); /* same storage: nothing to do */
    clrt_tensor_release(a);
    clrt_tensor_release(b);
    clrt_tensor_release(c);
}
END_TEST

/* Host references for the casts. */
static int32_t f32_to_i32(float v)
{
    if (isnan(v))
        return 0;
    if (v >= 2147483648.0f)
        return INT32_MAX;
    if (v <= -2147483648.0f)
        return INT32_MIN;
    return (int32_t)v; /* C truncates toward zero */
}

static uint8_t sat_u8(double v) { return isnan(v) || v <= 0 ? 0 : v >= 255 ? 255 : (uint8_t)v; }

START_TEST(test_cast_float_to_int)
{
    clrt_device *d = tu_device();
    uint64_t rng = tu_seed() + 404;
    const float special[] = {-2.7f, 2.7f,     -0.5f,    0.99f,  255.9f,        256,
                             -1,    300,      1e10f,    -1e10f, 2147483520.0f, -2147483648.0f,
                             NAN,   INFINITY, -INFINITY};
    enum { NS = sizeof special / sizeof special[0], N = 1009 };
    float h[N];
    for (int i = 0; i < N; i++)
        h[i] = i < NS ? special[i] : (float)tu_uniform(&rng, -400, 400);
    clrt_tensor *x = eu_upload(d, 1, EU_SHAPE(N), h);
    clrt_tensor *ti = TU_NONNULL(clrt_cast(x, CLRT_I32)), *tu = TU_NONNULL(clrt_cast(x, CLRT_U8));
    ck_assert_int_eq(clrt_tensor_dtype(ti), CLRT_I32);
    ck_assert_int_eq(clrt_tensor_dtype(tu), CLRT_U8);
    int32_t *gi = read_all(ti);
    uint8_t *gu = read_all(tu);
    for (int i = 0; i < N; i++) {
        ck_assert_msg(gi[i] == f32_to_i32(h[i]), "(int32)%g = %d", h[i], gi[i]);
        ck_assert_msg(gu[i] == sat_u8(h[i]), "(uint8)%g = %d", h[i], gu[i]);
    }
    free(gi);
    free(gu);
    clrt_tensor_release(x);
    clrt_tensor_release(ti);
    clrt_tensor_release(tu);
}
END_TEST

START_TEST(test_cast_round_trips)
{
    clrt_device *d = tu_device();
    uint64_t rng = tu_seed() + 505;
    const int N = TU_LARGE;
    int32_t *hi = malloc(N * sizeof *hi);
    for (int i = 0; i < N; i++)
        hi[i] = (int32_t)(tu_next(&rng) % 2000001) - 1000000; /* exact in float32 */
    hi[0] = 16777217;                                         /* rounds to 16777216 */
    hi[1] = -1;
    hi[2] = 256;
    clrt_tensor *i = TU_NONNULL(clrt_from_host(d, CLRT_I32, 1, EU_SHAPE(N), hi));
    clrt_tensor *f = TU_NONNULL(clrt_cast(i, CLRT_F32));
    clrt_tensor *back = TU_NONNULL(clrt_cast(f, CLRT_I32));
    clrt_tensor *u = TU_NONNULL(clrt_cast(i, CLRT_U8)); /* saturates */
    clrt_tensor *uf = TU_NONNULL(clrt_cast(u, CLRT_F32)), *ui = TU_NONNULL(clrt_cast(u, CLRT_I32));
    clrt_tensor *same = TU_NONNULL(clrt_cast(i, CLRT_I32)); /* a copy */
    ck_assert_ptr_ne(same, i);
    float *gf = read_all(f), *guf = read_all(uf);
    int32_t *gb = read_all(back), *gui = read_all(ui), *gs = read_all(same);
    uint8_t *gu = read_all(u);
    int first_bad = -1;
    for (int k = 0; k < N && first_bad < 0; k++)
        if (gf[k] != (float)hi[k] || gb[k] != (int32_t)(float)hi[k] || gu[k] != sat_u8(hi[k]) ||
            guf[k] != (float)sat_u8(hi[k]) || gui[k] != sat_u8(hi[k]) || gs[k] != hi[k])
            first_bad = k;
    ck_assert_msg(first_bad < 0, "round trip of %d: f32 %g, back %d, u8 %d, u8->f32 %g, u8->i32 %d",
                  first_bad < 0 ? 0 : hi[first_bad], first_bad < 0 ? 0 : gf[first_bad],
                  first_bad < 0 ? 0 : gb[first_bad], first_bad < 0 ? 0 : gu[first_bad],
                  first_bad < 0 ? 0 : guf[first_bad], first_bad < 0 ? 0 : gui[first_bad]);
    ck_assert_int_eq(gb[0], 16777216);
    ck_assert_int_eq(gu[1], 0);
    ck_assert_int_eq(gu[2], 255);
    free(gf);
    free(guf);
    free(gb);
    free(gui);
    free(gs);
    free(gu);
    free(hi);
    clrt_tensor *all[] = {i, f, back, u, uf, ui, same};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
        clrt_tensor_release(all[k]);
    ck_assert_ptr_null(clrt_cast(NULL, CLRT_F32));
    tu_assert_error(CLRT_EINVAL, "clrt_cast", NULL);
}
END_TEST

/* --- transpose --- */

/* Host reference: element-by-element index mapping, any element size. */
static void ref_transpose(const unsigned char *src, unsigned char *dst, int ndim,
                          const int64_t *shape, int d0, int d1, size_t esize)
{
    int64_t n = eu_numel(ndim, shape), oshape[CLRT_MAX_DIMS], coord[CLRT_MAX_DIMS];
    for (int i = 0; i < ndim; i++)
        oshape[i] = shape[i == d0 ? d1 : i == d1 ? d0 : i];
    for (int64_t o = 0; o < n; o++) {
        int64_t rest = o, src_index = 0;
        for (int i = ndim - 1; i >= 0; i--) {
            coord[i] = rest % oshape[i];
            rest /= oshape[i];
        }
        int64_t t = coord[d0];
        coord[d0] = coord[d1];
        coord[d1] = t;
        for (int i = 0; i < ndim; i++)
            src_index = src_index * shape[i] + coord[i];
        memcpy(dst + o * (int64_t)esize, src + src_index * (int64_t)esize, esize);
    }
}

static void check_transpose(clrt_dtype t, int ndim, const int64_t *shape, int dim0, int dim1,
                            uint64_t *rng)
{
    clrt_device *d = tu_device();
    size_t esize = clrt_dtype_size(t), n = (size_t)eu_numel(ndim, shape);
    unsigned char *h = malloc(n * esize + 1), *want = malloc(n * esize + 1);
    for (size_t i = 0; i < n * esize; i++)
        h[i] = (unsigned char)tu_next(rng);
    if (t == CLRT_F32) /* keep every float finite so NaN poisoning shows */
        for (size_t i = 0; i < n; i++)
            ((float *)h)[i] = (float)tu_uniform(rng, -1, 1);
    clrt_tensor *x = TU_NONNULL(clrt_from_host(d, t, ndim, shape, h));
    clrt_tensor *y = TU_NONNULL(clrt_transpose(x, dim0, dim1));
    int n0 = dim0 < 0 ? dim0 + ndim : dim0, n1 = dim1 < 0 ? dim1 + ndim : dim1;
    ref_transpose(h, want, ndim, shape, n0, n1, esize);
    ck_assert_int_eq(clrt_tensor_ndim(y), ndim);
    ck_assert_int_eq(clrt_tensor_dtype(y), t);
    for (int i = 0; i < ndim; i++)
        ck_assert_int_eq(clrt_tensor_shape(y)[i], shape[i == n0 ? n1 : i == n1 ? n0 : i]);
    unsigned char *got = read_all(y);
    char s[128];
    ck_assert_msg(memcmp(got, want, n * esize) == 0, "transpose(%s, %d, %d) of %s differs",
                  clrt_shape_str(ndim, shape, s, sizeof s), dim0, dim1, clrt_dtype_str(t));
    free(got);
    free(h);
    free(want);
    clrt_tensor_release(x);
    clrt_tensor_release(y);
}

START_TEST(test_transpose_2d)
{
    uint64_t rng = tu_seed() + 606;
    const int64_t shapes[][2] = {{1, 1},   {1, 7}, {7, 1}, {37, 129}, {TU_SIZED(256, 9), 1000},
                                 {1009, 3}};
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
        check_transpose(CLRT_F32, 2, shapes[k], 0, 1, &rng);
        check_transpose(CLRT_U8, 2, shapes[k], 1, 0, &rng);
        check_transpose(CLRT_I32, 2, shapes[k], -1, -2, &rng);
    }
}
END_TEST

START_TEST(test_transpose_3d_4d)
{
    uint64_t rng = tu_seed() + 707;
    const int64_t s3[3] = {5, 17, 33}, s4[4] = {3, 5, 7, 11};
    for (int a = 0; a < 3; a++)
        for (int b = a + 1; b < 3; b++) {
            check_transpose(CLRT_F32, 3, s3, a, b, &rng);
            check_transpose(CLRT_U8, 3, s3, b, a, &rng);
        }
    for (int a = 0; a < 4; a++)
        for (int b = a + 1; b < 4; b++) {
            check_transpose(CLRT_F32, 4, s4, a, b, &rng);
            check_transpose(CLRT_I32, 4, s4, a, b, &rng);
            check_transpose(CLRT_U8, 4, s4, b, a, &rng);
        }
    /* 8 dims, and same-dim / empty cases. */
    const int64_t s8[8] = {2, 3, 1, 2, 3, 2, 1, 5};
    check_transpose(CLRT_F32, 8, s8, 1, 6, &rng);
    check_transpose(CLRT_F32, 8, s8, 0, 7, &rng);
    check_transpose(CLRT_F32, 3, s3, 1, 1, &rng);
    check_transpose(CLRT_F32, 3, EU_SHAPE(4, 0, 3), 0, 2, &rng);
}
END_TEST

START_TEST(test_transpose_errors)
{
    clrt_device *d = tu_device();
    clrt_tensor *x = TU_NONNULL(clrt_zeros(d, CLRT_F32, 2, EU_SHAPE(2, 3)));
    ck_assert_ptr_null(clrt_transpose(x, 0, 2));
    tu_assert_error(CLRT_EINVAL, "clrt_transpose", "[2, 3]", NULL);
    ck_assert_ptr_null(clrt_transpose(x, -3, 0));
    tu_assert_error(CLRT_EINVAL, "clrt_transpose", NULL);
    ck_assert_ptr_null(clrt_transpose(NULL, 0, 1));
    tu_assert_error(CLRT_EINVAL, "NULL", NULL);
    clrt_tensor_release(x);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("elementwise_cast");
    TCase *tc = tu_tcase("cast");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_fill_every_dtype);
    tcase_add_test(tc, test_fill_rejects_unrepresentable);
    tcase_add_test(tc, test_copy);
    tcase_add_test(tc, test_cast_float_to_int);
    tcase_add_test(tc, test_cast_round_trips);
    tcase_add_test(tc, test_transpose_2d);
    tcase_add_test(tc, test_transpose_3d_4d);
    tcase_add_test(tc, test_transpose_errors);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
