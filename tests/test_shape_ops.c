/* The ops of issue 35's first attention part at kernel level, against
 * host references (bit for bit where they copy or choose, float64 where
 * they compute): permute, narrow and cat for every dtype; torch.matmul's
 * broadcasting; comparisons, where, masked_fill, clamp, pow_scalar; max
 * and max_dim's gradients at ties and NaN. Sizes 1, primes, past a
 * work-group, empty and large; the 64-bit index kernels forced on small
 * tensors (clrt__index64_force); error messages. Outputs start poisoned
 * (CLRT_POISON=1: 0xFF bytes), so an element an op leaves unwritten
 * shows. Gradients through the tape where the rule has a case gradcheck
 * cannot draw (ties). */
#include "test_elementwise_util.h"

#include "runtime/ops/layout/layout_internal.h"

#include <math.h>
#include <string.h>

/* --- helpers --- */

static size_t esize_of(clrt_dtype t) { return t == CLRT_U8 ? 1 : 4; }

/* n random elements of dtype t (floats in [-4, 4), int32 any, uint8 below
 * 255 so that a poisoned 0xFF byte never passes for one). */
static void *random_bytes(uint64_t *rng, clrt_dtype t, size_t n)
{
    unsigned char *b = malloc(n * esize_of(t) + 1);
    for (size_t i = 0; i < n; i++) {
        if (t == CLRT_F32) {
            float f = (float)tu_uniform(rng, -4, 4);
            memcpy(b + 4 * i, &f, 4);
        } else if (t == CLRT_I32) {
            int32_t v = (int32_t)tu_next(rng);
            memcpy(b + 4 * i, &v, 4);
        } else
            b[i] = (unsigned char)(tu_next(rng) % 255);
    }
    return b;
}

static clrt_tensor *upload(clrt_dtype t, int nd, const int64_t *shape, const void *data)
{
    return TU_NONNULL(clrt_from_host(tu_device(), t, nd, shape, data));
}

static void *download(const clrt_tensor *t)
{
    size_t bytes = clrt_tensor_nbytes(t);
    void *b = malloc(bytes + 1);
    TU_OK(clrt_to_host(t, b, bytes));
    return b;
}

static void assert_shape(const clrt_tensor *t, int nd, const int64_t *shape)
{
    char got[128], want[128];
    int same = clrt_tensor_ndim(t) == nd;
    for (int i = 0; same && i < nd; i++)
        same = clrt_tensor_shape(t)[i] == shape[i];
    ck_assert_msg(same, "shape %s, expected %s",
                  clrt_shape_str(clrt_tensor_ndim(t), clrt_tensor_shape(t), got, sizeof got),
                  clrt_shape_str(nd, shape, want, sizeof want));
}

/* t holds exactly the bytes want. */
static void assert_bytes(const char *what, const clrt_tensor *t, const void *want)
{
    size_t n = clrt_tensor_nbytes(t), i = 0;
    unsigned char *got = download(t);
    const unsigned char *w = want;
    while (i < n && got[i] == w[i]) /* one assertion: each passing one writes to check's pipe */
        i++;
    ck_assert_msg(i == n, "%s: byte %zu of %zu is 0x%02x, expected 0x%02x", what, i, n,
                  i < n ? got[i] : 0, i < n ? w[i] : 0);
    free(got);
}

static void coords(int64_t k, int nd, const int64_t *shape, int64_t *idx)
{
    for (int i = nd - 1; i >= 0; i--) {
        idx[i] = shape[i] ? k % shape[i] : 0;
        k = shape[i] ? k / shape[i] : 0;
    }
}

static int64_t flat(const int64_t *idx, int nd, const int64_t *shape)
{
    int64_t k = 0;
    for (int i = 0; i < nd; i++)
        k = k * shape[i] + idx[i];
    return k;
}

static int wrapd(int d, int nd) { return d < 0 ? d + nd : d; }

/* --- permute --- */

static void check_permute(clrt_dtype t, int nd, const int64_t *shape, const int *perm,
                          uint64_t *rng)
{
    size_t es = esize_of(t);
    int64_t n = eu_numel(nd, shape), oshape[8], idx[8], xidx[8];
    for (int i = 0; i < nd; i++)
        oshape[i] = shape[wrapd(perm[i], nd)];
    unsigned char *h = random_bytes(rng, t, (size_t)n), *want = malloc((size_t)n * es + 1);
    for (int64_t k = 0; k < n; k++) {
        coords(k, nd, oshape, idx);
        for (int i = 0; i < nd; i++)
            xidx[wrapd(perm[i], nd)] = idx[i];
        memcpy(want + k * (int64_t)es, h + flat(xidx, nd, shape) * (int64_t)es, es);
    }
    clrt_tensor *x = upload(t, nd, shape, h);
    clrt_tensor *y = TU_NONNULL(clrt_permute(x, perm));
    assert_shape(y, nd, oshape);
    char s[128];
    assert_bytes(
        tu_fmt("permute of %s (%s)", clrt_shape_str(nd, shape, s, sizeof s), clrt_dtype_str(t)), y,
        want);
    clrt_tensor_release(x);
    clrt_tensor_release(y);
    free(h);
    free(want);
}

static void permute_sweep(uint64_t *rng)
{
    static const clrt_dtype types[3] = {CLRT_F32, CLRT_I32, CLRT_U8};
    for (int ti = 0; ti < 3; ti++) {
        clrt_dtype t = types[ti];
        check_permute(t, 1, EU_SHAPE(1), (const int[]){0}, rng);
        check_permute(t, 2, EU_SHAPE(1, 1), (const int[]){1, 0}, rng);
        check_permute(t, 2, EU_SHAPE(257, 3), (const int[]){1, 0}, rng);
        check_permute(t, 2, EU_SHAPE(31, 37), (const int[]){-1, -2}, rng);
        check_permute(t, 3, EU_SHAPE(3, 5, 7), (const int[]){2, 0, 1}, rng);
        check_permute(t, 3, EU_SHAPE(3, 5, 7), (const int[]){0, 1, 2}, rng); /* a copy */
        check_permute(t, 3, EU_SHAPE(3, 5, 7), (const int[]){1, 0, 2}, rng); /* rows move */
        /* [A, D0, B, D1] -> [A, D1, B, D0]: the tiled transpose */
        check_permute(t, 4, EU_SHAPE(3, 17, 5, 19), (const int[]){0, 3, 2, 1}, rng);
        check_permute(t, 4, EU_SHAPE(2, 13, 3, 8), (const int[]){0, 2, 1, 3}, rng);
        check_permute(t, 4, EU_SHAPE(2, 1, 3, 1), (const int[]){3, 1, 2, 0}, rng);
        check_permute(t, 5, EU_SHAPE(2, 3, 1, 5, 7), (const int[]){4, -4, 0, 2, 3}, rng);
        check_permute(t, 8, EU_SHAPE(2, 3, 2, 1, 3, 2, 5, 2), (const int[]){7, 0, 6, 1, 5, 2, 4, 3},
                      rng);
        check_permute(t, 3, EU_SHAPE(3, 0, 5), (const int[]){2, 1, 0}, rng); /* empty */
    }
}

START_TEST(test_permute)
{
    uint64_t rng = tu_seed();
    permute_sweep(&rng);
    /* 0-dim: a copy; dims may be NULL */
    float v = 2.5f;
    clrt_tensor *x = upload(CLRT_F32, 0, NULL, &v), *y = TU_NONNULL(clrt_permute(x, NULL));
    assert_shape(y, 0, NULL);
    assert_bytes("permute of a 0-dim tensor", y, &v);
    clrt_tensor_release(x);
    clrt_tensor_release(y);
}
END_TEST

START_TEST(test_permute_large)
{
    uint64_t rng = tu_seed() + 1;
    int64_t third = TU_SIZED(333337, 6673);
    check_permute(CLRT_F32, 3, EU_SHAPE(3, third, 1), (const int[]){1, 2, 0}, &rng);
    check_permute(CLRT_U8, 3, EU_SHAPE(third, 3, 1), (const int[]){2, 1, 0}, &rng);
    check_permute(CLRT_I32, 4, EU_SHAPE(7, 11, 13, TU_SIZED(997, 19)), (const int[]){2, 0, 3, 1},
                  &rng);
}
END_TEST

START_TEST(test_permute_wide_kernels)
{
    clrt__index64_force = 1;
    uint64_t rng = tu_seed() + 2;
    permute_sweep(&rng);
}
END_TEST

START_TEST(test_permute_errors)
{
    int64_t s[3] = {2, 3, 4};
    float h[24] = {0};
    clrt_tensor *x = upload(CLRT_F32, 3, s, h);
    ck_assert_ptr_null(clrt_permute(x, (const int[]){0, 3, 1}));
    tu_assert_error(CLRT_EINVAL, "clrt_permute", "(0, 3, 1)", "[2, 3, 4]", "dim 3 out of range",
                    NULL);
    ck_assert_ptr_null(clrt_permute(x, (const int[]){0, -3, 1}));
    tu_assert_error(CLRT_EINVAL, "clrt_permute", "(0, -3, 1)", "dim -3 repeated", NULL);
    ck_assert_ptr_null(clrt_permute(x, NULL));
    tu_assert_error(CLRT_EINVAL, "clrt_permute", "dims is NULL", "3 dims", NULL);
    ck_assert_ptr_null(clrt_permute(NULL, (const int[]){0}));
    tu_assert_error(CLRT_EINVAL, "clrt_permute", "x is NULL", NULL);
    ck_assert_ptr_null(clrt_transpose(x, 0, 3));
    tu_assert_error(CLRT_EINVAL, "clrt_transpose", "(0, 3)", "[2, 3, 4]", NULL);
    ck_assert_int_eq(clrt_tensor_refcount(x), 1);
    clrt_tensor_release(x);
}
END_TEST

/* --- narrow --- */

static void check_narrow(clrt_dtype t, int nd, const int64_t *shape, int dim, int64_t start,
                         int64_t len, uint64_t *rng)
{
    size_t es = esize_of(t);
    int d = wrapd(dim, nd);
    int64_t s0 = start < 0 ? start + shape[d] : start;
    int64_t n = eu_numel(nd, shape), oshape[8], idx[8];
    memcpy(oshape, shape, (size_t)nd * sizeof *shape);
    oshape[d] = len;
    int64_t on = eu_numel(nd, oshape);
    unsigned char *h = random_bytes(rng, t, (size_t)n), *want = malloc((size_t)on * es + 1);
    for (int64_t k = 0; k < on; k++) {
        coords(k, nd, oshape, idx);
        idx[d] += s0;
        memcpy(want + k * (int64_t)es, h + flat(idx, nd, shape) * (int64_t)es, es);
    }
    clrt_tensor *x = upload(t, nd, shape, h);
    clrt_tensor *y = TU_NONNULL(clrt_narrow(x, dim, start, len));
    assert_shape(y, nd, oshape);
    char s[128];
    assert_bytes(tu_fmt("narrow(%s, %d, %lld, %lld) of %s", clrt_shape_str(nd, shape, s, sizeof s),
                        dim, (long long)start, (long long)len, clrt_dtype_str(t)),
                 y, want);
    clrt_tensor_release(x);
    clrt_tensor_release(y);
    free(h);
    free(want);
}

static void narrow_sweep(uint64_t *rng)
{
    static const clrt_dtype types[3] = {CLRT_F32, CLRT_I32, CLRT_U8};
    for (int ti = 0; ti < 3; ti++) {
        clrt_dtype t = types[ti];
        check_narrow(t, 1, EU_SHAPE(1), 0, 0, 1, rng);
        check_narrow(t, 1, EU_SHAPE(13), 0, 3, 7, rng);     /* one contiguous run */
        check_narrow(t, 2, EU_SHAPE(7, 13), 0, -4, 3, rng); /* rows: contiguous too */
        check_narrow(t, 2, EU_SHAPE(7, 13), 1, 5, 8, rng);
        check_narrow(t, 2, EU_SHAPE(7, 13), -1, 0, 13, rng); /* all of it */
        check_narrow(t, 3, EU_SHAPE(3, 257, 5), 1, 100, 131, rng);
        check_narrow(t, 3, EU_SHAPE(3, 5, 7), 2, 7, 0, rng); /* empty, at the end */
        check_narrow(t, 3, EU_SHAPE(3, 0, 7), 2, 2, 3, rng); /* empty input */
        check_narrow(t, 4, EU_SHAPE(2, 3, 5, 7), -3, -3, 2, rng);
    }
}

START_TEST(test_narrow)
{
    uint64_t rng = tu_seed() + 3;
    narrow_sweep(&rng);
    check_narrow(CLRT_F32, 2, EU_SHAPE(3, TU_LARGE), 1, 17, TU_LARGE - 40, &rng);
    check_narrow(CLRT_U8, 2, EU_SHAPE(TU_LARGE, 3), 1, 1, 1, &rng);
}
END_TEST

START_TEST(test_narrow_wide_kernels)
{
    clrt__index64_force = 1;
    uint64_t rng = tu_seed() + 4;
    narrow_sweep(&rng);
}
END_TEST

START_TEST(test_narrow_errors)
{
    int64_t s[2] = {2, 5};
    float h[10] = {0}, v = 1;
    clrt_tensor *x = upload(CLRT_F32, 2, s, h), *z = upload(CLRT_F32, 0, NULL, &v);
    ck_assert_ptr_null(clrt_narrow(x, 2, 0, 1));
    tu_assert_error(CLRT_EINVAL, "clrt_narrow", "dim 2 out of range", "[2, 5]", NULL);
    ck_assert_ptr_null(clrt_narrow(x, -3, 0, 1));
    tu_assert_error(CLRT_EINVAL, "clrt_narrow", "dim -3 out of range", NULL);
    ck_assert_ptr_null(clrt_narrow(x, 1, 3, 3));
    tu_assert_error(CLRT_EINVAL, "clrt_narrow", "start 3 + length 3 exceeds dim 1", "[2, 5]",
                    "size 5", NULL);
    ck_assert_ptr_null(clrt_narrow(x, 1, 6, 0));
    tu_assert_error(CLRT_EINVAL, "clrt_narrow", "start 6 out of range", NULL);
    ck_assert_ptr_null(clrt_narrow(x, 1, -6, 1));
    tu_assert_error(CLRT_EINVAL, "clrt_narrow", "start -6 out of range", NULL);
    ck_assert_ptr_null(clrt_narrow(x, 0, 0, -1));
    tu_assert_error(CLRT_EINVAL, "clrt_narrow", "length -1 is negative", NULL);
    ck_assert_ptr_null(clrt_narrow(z, 0, 0, 1));
    tu_assert_error(CLRT_EINVAL, "clrt_narrow", "0-dim", NULL);
    ck_assert_ptr_null(clrt_narrow(NULL, 0, 0, 1));
    tu_assert_error(CLRT_EINVAL, "clrt_narrow", "x is NULL", NULL);
    clrt_tensor_release(x);
    clrt_tensor_release(z);
}
END_TEST

/* --- cat --- */

/* The n tensors of shapes[i] (nd dims each, or a legacy [0] where
 * nds[i] is 1 and the shape {0}) joined along dim. */
static void check_cat(clrt_dtype t, int n, const int *nds, const int64_t (*shapes)[8], int dim,
                      uint64_t *rng)
{
    size_t es = esize_of(t);
    int ref = 0;
    while (ref < n - 1 && nds[ref] == 1 && shapes[ref][0] == 0)
        ref++;
    int nd = nds[ref], d = wrapd(dim, nd);
    int64_t oshape[8], idx[8];
    memcpy(oshape, shapes[ref], sizeof oshape);
    oshape[d] = 0;
    clrt_tensor *ts[16];
    unsigned char *h[16];
    for (int i = 0; i < n; i++) {
        int64_t m = eu_numel(nds[i], shapes[i]);
        h[i] = random_bytes(rng, t, (size_t)m);
        ts[i] = upload(t, nds[i], shapes[i], h[i]);
        if (!(nds[i] == 1 && shapes[i][0] == 0 && nd != 1))
            oshape[d] += shapes[i][d];
    }
    int64_t on = eu_numel(nd, oshape), at = 0;
    unsigned char *want = malloc((size_t)on * es + 1);
    for (int i = 0; i < n; i++) {
        if (nds[i] == 1 && shapes[i][0] == 0 && nd != 1)
            continue;
        int64_t m = eu_numel(nd, shapes[i]);
        for (int64_t k = 0; k < m; k++) {
            coords(k, nd, shapes[i], idx);
            idx[d] += at;
            memcpy(want + flat(idx, nd, oshape) * (int64_t)es, h[i] + k * (int64_t)es, es);
        }
        at += shapes[i][d];
    }
    clrt_tensor *y = TU_NONNULL(clrt_cat(ts, n, dim));
    assert_shape(y, nd, oshape);
    char s[128];
    assert_bytes(tu_fmt("cat of %d along %d into %s (%s)", n, dim,
                        clrt_shape_str(nd, oshape, s, sizeof s), clrt_dtype_str(t)),
                 y, want);
    for (int i = 0; i < n; i++) {
        ck_assert_int_eq(clrt_tensor_refcount(ts[i]), 1);
        clrt_tensor_release(ts[i]);
        free(h[i]);
    }
    clrt_tensor_release(y);
    free(want);
}

static void cat_sweep(uint64_t *rng)
{
    static const clrt_dtype types[3] = {CLRT_F32, CLRT_I32, CLRT_U8};
    for (int ti = 0; ti < 3; ti++) {
        clrt_dtype t = types[ti];
        check_cat(t, 1, (const int[]){2}, (const int64_t[][8]){{3, 5}}, 0, rng);
        check_cat(t, 2, (const int[]){1, 1}, (const int64_t[][8]){{1}, {1}}, 0, rng);
        check_cat(t, 3, (const int[]){2, 2, 2}, (const int64_t[][8]){{2, 3}, {2, 1}, {2, 257}}, -1,
                  rng);
        check_cat(t, 3, (const int[]){3, 3, 3},
                  (const int64_t[][8]){{2, 3, 5}, {2, 0, 5}, {2, 7, 5}}, 1, rng);
        check_cat(t, 2, (const int[]){3, 3}, (const int64_t[][8]){{1, 3, 5}, {4, 3, 5}}, 0,
                  rng); /* contiguous runs */
        check_cat(t, 3, (const int[]){2, 1, 2}, (const int64_t[][8]){{3, 2}, {0}, {3, 5}}, 1,
                  rng); /* a legacy [0] */
        check_cat(t, 2, (const int[]){1, 1}, (const int64_t[][8]){{0}, {0}}, 0, rng);
        check_cat(t, 2, (const int[]){2, 2}, (const int64_t[][8]){{0, 3}, {0, 3}}, 1, rng);
        int nds[11];
        int64_t shapes[11][8];
        for (int i = 0; i < 11; i++) {
            nds[i] = 4;
            int64_t s[8] = {2, 1 + i % 3, 3, 5};
            memcpy(shapes[i], s, sizeof s);
        }
        check_cat(t, 11, nds, (const int64_t(*)[8])shapes, -3, rng);
    }
}

START_TEST(test_cat)
{
    uint64_t rng = tu_seed() + 5;
    cat_sweep(&rng);
    check_cat(CLRT_F32, 2, (const int[]){2, 2},
              (const int64_t[][8]){{TU_SIZED(1009, 41), 991}, {TU_SIZED(1009, 41), 1}}, 1, &rng);
}
END_TEST

START_TEST(test_cat_wide_kernels)
{
    clrt__index64_force = 1;
    uint64_t rng = tu_seed() + 6;
    cat_sweep(&rng);
}
END_TEST

START_TEST(test_cat_errors)
{
    float h[64] = {0};
    int32_t hi[8] = {0};
    clrt_tensor *a = upload(CLRT_F32, 2, EU_SHAPE(2, 3), h);
    clrt_tensor *b = upload(CLRT_F32, 2, EU_SHAPE(3, 3), h);
    clrt_tensor *c = upload(CLRT_I32, 2, EU_SHAPE(2, 3), hi);
    clrt_tensor *z = upload(CLRT_F32, 0, NULL, h);
    clrt_tensor *v = upload(CLRT_F32, 1, EU_SHAPE(6), h);
    clrt_tensor *ab[2] = {a, b}, *ac[2] = {a, c}, *az[2] = {a, z}, *an[2] = {a, NULL};
    clrt_tensor *av[2] = {a, v};
    ck_assert_ptr_null(clrt_cat(ab, 2, 1));
    tu_assert_error(CLRT_ESHAPE, "clrt_cat", "ts[0] of shape [2, 3]", "ts[1] of shape [3, 3]",
                    "differ outside dim 1", NULL);
    ck_assert_ptr_null(clrt_cat(av, 2, 0));
    tu_assert_error(CLRT_ESHAPE, "clrt_cat", "[2, 3]", "[6]", NULL);
    ck_assert_ptr_null(clrt_cat(ab, 2, 2));
    tu_assert_error(CLRT_EINVAL, "clrt_cat", "dim 2 out of range", "[2, 3]", NULL);
    ck_assert_ptr_null(clrt_cat(ab, 2, -3));
    tu_assert_error(CLRT_EINVAL, "clrt_cat", "dim -3 out of range", NULL);
    ck_assert_ptr_null(clrt_cat(ac, 2, 0));
    tu_assert_error(CLRT_EDTYPE, "clrt_cat", "float32", "ts[1] is int32", NULL);
    ck_assert_ptr_null(clrt_cat(az, 2, 0));
    tu_assert_error(CLRT_EINVAL, "clrt_cat", "ts[1] is 0-dim", NULL);
    ck_assert_ptr_null(clrt_cat(an, 2, 0));
    tu_assert_error(CLRT_EINVAL, "clrt_cat", "ts[1] is NULL", NULL);
    ck_assert_ptr_null(clrt_cat(ab, 0, 0));
    tu_assert_error(CLRT_EINVAL, "clrt_cat", "at least one tensor", NULL);
    ck_assert_ptr_null(clrt_cat(NULL, 2, 0));
    tu_assert_error(CLRT_EINVAL, "clrt_cat", "ts is NULL", NULL);
    /* a works along dim 0 with b */
    clrt_tensor *y = TU_NONNULL(clrt_cat(ab, 2, 0));
    assert_shape(y, 2, EU_SHAPE(5, 3));
    clrt_tensor *ts[6] = {a, b, c, z, v, y};
    for (int i = 0; i < 6; i++) {
        ck_assert_int_eq(clrt_tensor_refcount(ts[i]), 1);
        clrt_tensor_release(ts[i]);
    }
}
END_TEST

/* --- gradients through the layout ops on the tape --- */

static clrt_tensor *leaf(int nd, const int64_t *shape, uint64_t *rng, float **host)
{
    clrt_tensor *t = eu_random(tu_device(), rng, nd, shape, -1, 1, host);
    TU_OK(clrt_requires_grad_(t, 1));
    return t;
}

/* narrow, cat and permute of one leaf, summed with weights: the leaf's
 * gradient is the weights routed back, zeros where no slice took it. */
START_TEST(test_layout_gradients)
{
    uint64_t rng = tu_seed() + 7;
    float *hx;
    clrt_tensor *x = leaf(3, EU_SHAPE(2, 7, 3), &rng, &hx);
    clrt_tensor *n1 = TU_NONNULL(clrt_narrow(x, 1, 1, 2));  /* [2, 2, 3] rows 1, 2 */
    clrt_tensor *n2 = TU_NONNULL(clrt_narrow(x, 1, -2, 2)); /* rows 5, 6 */
    clrt_tensor *parts[2] = {n1, n2};
    clrt_tensor *c = TU_NONNULL(clrt_cat(parts, 2, 1));                   /* [2, 4, 3] */
    clrt_tensor *p = TU_NONNULL(clrt_permute(c, (const int[]){2, 0, 1})); /* [3, 2, 4] */
    float *hw;
    clrt_tensor *w = eu_random(tu_device(), &rng, 3, EU_SHAPE(3, 2, 4), -1, 1, &hw);
    TU_OK(clrt_backward_with(p, w));
    clrt_tensor *g = TU_NONNULL(clrt_tensor_grad(x));
    float *got = tu_read(g);
    static const int row_of[4] = {1, 2, 5, 6};
    double want[42] = {0};
    for (int k = 0; k < 3; k++)
        for (int b = 0; b < 2; b++)
            for (int j = 0; j < 4; j++)
                want[(b * 7 + row_of[j]) * 3 + k] += hw[(k * 2 + b) * 4 + j];
    eu_assert_close("gradient through narrow, cat, permute", got, want, 42, 0, 0);
    free(got);
    free(hx);
    free(hw);
    clrt_tensor *ts[7] = {x, n1, n2, c, p, w, g};
    for (int i = 0; i < 7; i++)
        clrt_tensor_release(ts[i]);
}
END_TEST

/* --- matmul --- */

/* torch.matmul of float32 a (na dims) and b against float64, bound
 * relative to the sum of |terms|. */
static void check_matmul(int na, const int64_t *sa, int nb, const int64_t *sb, uint64_t *rng)
{
    float *ha, *hb;
    clrt_tensor *a = eu_random(tu_device(), rng, na, sa, -1, 1, &ha);
    clrt_tensor *b = eu_random(tu_device(), rng, nb, sb, -1, 1, &hb);
    int64_t va[8], vb[8], batch[8], idx[8], oshape[8];
    int nva = na == 1 ? 2 : na, nvb = nb == 1 ? 2 : nb;
    memcpy(va, sa, (size_t)na * sizeof *sa);
    memcpy(vb, sb, (size_t)nb * sizeof *sb);
    if (na == 1)
        va[0] = 1, va[1] = sa[0];
    if (nb == 1)
        vb[0] = sb[0], vb[1] = 1;
    int nbt = (nva > nvb ? nva : nvb) - 2, no = 0;
    for (int i = 0; i < nbt; i++) {
        int ia = i - (nbt - (nva - 2)), ib = i - (nbt - (nvb - 2));
        int64_t da = ia >= 0 ? va[ia] : 1, db = ib >= 0 ? vb[ib] : 1;
        oshape[no++] = batch[i] = da == 1 ? db : da;
    }
    int64_t m = va[nva - 2], k = va[nva - 1], n = vb[nvb - 1], B = eu_numel(nbt, batch);
    if (na > 1)
        oshape[no++] = m;
    if (nb > 1)
        oshape[no++] = n;
    double *ref = malloc((size_t)(B * m * n + 1) * sizeof *ref);
    double *scale = malloc((size_t)(B * m * n + 1) * sizeof *scale);
    for (int64_t t = 0; t < B; t++) {
        coords(t, nbt, batch, idx);
        int64_t ta = 0, tb = 0;
        for (int i = 0; i < nva - 2; i++)
            ta = ta * va[i] + (va[i] == 1 ? 0 : idx[i + nbt - (nva - 2)]);
        for (int i = 0; i < nvb - 2; i++)
            tb = tb * vb[i] + (vb[i] == 1 ? 0 : idx[i + nbt - (nvb - 2)]);
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                double acc = 0, abs_sum = 0;
                for (int64_t p = 0; p < k; p++) {
                    double term = (double)ha[(ta * m + i) * k + p] * hb[(tb * k + p) * n + j];
                    acc += term;
                    abs_sum += fabs(term);
                }
                ref[(t * m + i) * n + j] = acc;
                scale[(t * m + i) * n + j] = abs_sum;
            }
    }
    clrt_tensor *y = TU_NONNULL(clrt_matmul(a, b));
    assert_shape(y, no, oshape);
    float *got = tu_read(y);
    char s1[128], s2[128];
    int64_t i = 0;
    while (i < B * m * n && fabs(got[i] - ref[i]) <= 1e-6 * scale[i] + 1e-30)
        i++;
    ck_assert_msg(i == B * m * n, "matmul of %s by %s: element %lld is %.9g, reference %.12g",
                  clrt_shape_str(na, sa, s1, sizeof s1), clrt_shape_str(nb, sb, s2, sizeof s2),
                  (long long)i, i < B * m * n ? (double)got[i] : 0.0, i < B * m * n ? ref[i] : 0.0);
    free(got);
    free(ref);
    free(scale);
    free(ha);
    free(hb);
    clrt_tensor_release(a);
    clrt_tensor_release(b);
    clrt_tensor_release(y);
}

START_TEST(test_matmul_broadcast)
{
    uint64_t rng = tu_seed() + 8;
    check_matmul(4, EU_SHAPE(2, 3, 17, 8), 4, EU_SHAPE(2, 3, 8, 17), &rng); /* q k^T */
    check_matmul(4, EU_SHAPE(2, 1, 5, 4), 3, EU_SHAPE(3, 4, 6), &rng);      /* [B,1,T,D] [H,D,E] */
    check_matmul(4, EU_SHAPE(1, 3, 5, 4), 4, EU_SHAPE(2, 1, 4, 6), &rng);   /* both partial */
    check_matmul(3, EU_SHAPE(67, 3, 5), 2, EU_SHAPE(5, 7), &rng);           /* folded */
    check_matmul(2, EU_SHAPE(3, 5), 3, EU_SHAPE(67, 5, 7), &rng);           /* shared left */
    check_matmul(5, EU_SHAPE(2, 1, 3, 2, 5), 3, EU_SHAPE(1, 5, 4), &rng);
    check_matmul(1, EU_SHAPE(13), 1, EU_SHAPE(13), &rng); /* dot */
    check_matmul(1, EU_SHAPE(5), 3, EU_SHAPE(4, 5, 3), &rng);
    check_matmul(4, EU_SHAPE(2, 2, 3, 5), 1, EU_SHAPE(5), &rng);
    check_matmul(2, EU_SHAPE(1, 1), 2, EU_SHAPE(1, 1), &rng);
    check_matmul(3, EU_SHAPE(2, TU_SIZED(131, 33), TU_SIZED(257, 17)), 3,
                 EU_SHAPE(2, TU_SIZED(257, 17), TU_SIZED(127, 31)), &rng);
}
END_TEST

START_TEST(test_matmul_empty)
{
    /* k = 0: zeros (over the poisoned output); an empty batch or m: empty */
    int64_t sa[3] = {2, 3, 0}, sb[2] = {0, 4}, s0[4] = {0, 3, 2, 5}, sc[2] = {5, 4};
    clrt_tensor *a = TU_NONNULL(clrt_zeros(tu_device(), CLRT_F32, 3, sa));
    clrt_tensor *b = TU_NONNULL(clrt_zeros(tu_device(), CLRT_F32, 2, sb));
    clrt_tensor *y = TU_NONNULL(clrt_matmul(a, b));
    assert_shape(y, 3, EU_SHAPE(2, 3, 4));
    float *got = tu_read(y);
    for (int i = 0; i < 24; i++)
        ck_assert_msg(got[i] == 0.0f, "element %d is %g", i, (double)got[i]);
    free(got);
    clrt_tensor *e = TU_NONNULL(clrt_zeros(tu_device(), CLRT_F32, 4, s0));
    clrt_tensor *c = TU_NONNULL(clrt_zeros(tu_device(), CLRT_F32, 2, sc));
    clrt_tensor *y2 = TU_NONNULL(clrt_matmul(e, c));
    assert_shape(y2, 4, EU_SHAPE(0, 3, 2, 4));
    clrt_tensor *ts[6] = {a, b, y, e, c, y2};
    for (int i = 0; i < 6; i++)
        clrt_tensor_release(ts[i]);
}
END_TEST

START_TEST(test_matmul_errors)
{
    float h[64] = {0};
    clrt_tensor *z = upload(CLRT_F32, 0, NULL, h);
    clrt_tensor *a = upload(CLRT_F32, 4, EU_SHAPE(2, 3, 2, 4), h);
    clrt_tensor *b = upload(CLRT_F32, 3, EU_SHAPE(2, 4, 5), h);
    clrt_tensor *v = upload(CLRT_F32, 1, EU_SHAPE(3), h);
    ck_assert_ptr_null(clrt_matmul(z, a));
    tu_assert_error(CLRT_ESHAPE, "clrt_matmul", "at least 1 dim", "a []", NULL);
    ck_assert_ptr_null(clrt_matmul(a, b));
    tu_assert_error(CLRT_ESHAPE, "clrt_matmul", "batch dims", "[2, 3, 2, 4]", "[2, 4, 5]",
                    "do not broadcast", NULL);
    ck_assert_ptr_null(clrt_matmul(a, v));
    tu_assert_error(CLRT_ESHAPE, "clrt_matmul", "[2, 3, 2, 4]", "[3]", "4 vs 3", NULL);
    ck_assert_ptr_null(clrt_matmul(v, b));
    tu_assert_error(CLRT_ESHAPE, "clrt_matmul", "[3]", "[2, 4, 5]", "3 vs 4", NULL);
    clrt_tensor *ts[4] = {z, a, b, v};
    for (int i = 0; i < 4; i++) {
        ck_assert_int_eq(clrt_tensor_refcount(ts[i]), 1);
        clrt_tensor_release(ts[i]);
    }
}
END_TEST

/* --- comparisons --- */

typedef clrt_tensor *(*cmp_fn)(clrt_tensor *, clrt_tensor *);
static const cmp_fn cmp_fns[6] = {clrt_gt, clrt_lt, clrt_ge, clrt_le, clrt_eq, clrt_ne};
static const char *const cmp_names[6] = {"gt", "lt", "ge", "le", "eq", "ne"};

static int cmp_ref(int op, double a, double b)
{
    switch (op) {
    case 0:
        return a > b;
    case 1:
        return a < b;
    case 2:
        return a >= b;
    case 3:
        return a <= b;
    case 4:
        return a == b;
    default:
        return a != b;
    }
}

/* Every comparison of a (na, sa) and b (nb, sb) of dtype t, values from
 * a small set so that ties happen (floats: with NaN, infinities, -0). */
static void check_compare(clrt_dtype t, int na, const int64_t *sa, int nb, const int64_t *sb,
                          uint64_t *rng)
{
    static const float fv[8] = {-1.5f, 0.0f, -0.0f, 2.0f, NAN, INFINITY, -INFINITY, 2.0f};
    int64_t n_a = eu_numel(na, sa), n_b = eu_numel(nb, sb), os[8];
    int no = na > nb ? na : nb;
    for (int i = 0; i < no; i++) {
        int ia = i - (no - na), ib = i - (no - nb);
        int64_t da = ia >= 0 ? sa[ia] : 1, db = ib >= 0 ? sb[ib] : 1;
        os[i] = da == 1 ? db : da;
    }
    int64_t n_o = eu_numel(no, os);
    float *fa = malloc((size_t)n_a * 4 + 4), *fb = malloc((size_t)n_b * 4 + 4);
    int32_t *ia = (int32_t *)fa, *ib = (int32_t *)fb;
    for (int64_t i = 0; i < n_a; i++)
        if (t == CLRT_F32)
            fa[i] = fv[tu_next(rng) % 8];
        else
            ia[i] = (int32_t)(tu_next(rng) % 5) - 2;
    for (int64_t i = 0; i < n_b; i++)
        if (t == CLRT_F32)
            fb[i] = fv[tu_next(rng) % 8];
        else
            ib[i] = (int32_t)(tu_next(rng) % 5) - 2;
    clrt_tensor *a = upload(t, na, sa, fa), *b = upload(t, nb, sb, fb);
    unsigned char *want = malloc((size_t)n_o + 1);
    char s1[128], s2[128];
    for (int op = 0; op < 6; op++) {
        for (int64_t o = 0; o < n_o; o++) {
            int64_t xa = eu_bcast_index(o, no, os, na, sa), xb = eu_bcast_index(o, no, os, nb, sb);
            double va = t == CLRT_F32 ? fa[xa] : ia[xa], vb = t == CLRT_F32 ? fb[xb] : ib[xb];
            want[o] = (unsigned char)cmp_ref(op, va, vb);
        }
        clrt_tensor *y = TU_NONNULL(cmp_fns[op](a, b));
        ck_assert_int_eq(clrt_tensor_dtype(y), CLRT_U8);
        assert_shape(y, no, os);
        assert_bytes(tu_fmt("%s of %s and %s (%s)", cmp_names[op],
                            clrt_shape_str(na, sa, s1, sizeof s1),
                            clrt_shape_str(nb, sb, s2, sizeof s2), clrt_dtype_str(t)),
                     y, want);
        clrt_tensor_release(y);
    }
    clrt_tensor_release(a);
    clrt_tensor_release(b);
    free(fa);
    free(fb);
    free(want);
}

START_TEST(test_compare)
{
    uint64_t rng = tu_seed() + 9;
    for (int ti = 0; ti < 2; ti++) {
        clrt_dtype t = ti ? CLRT_I32 : CLRT_F32;
        check_compare(t, 1, EU_SHAPE(1), 1, EU_SHAPE(1), &rng);
        check_compare(t, 2, EU_SHAPE(7, 13), 2, EU_SHAPE(7, 13), &rng);              /* same */
        check_compare(t, 2, EU_SHAPE(7, 13), 0, NULL, &rng);                         /* a scalar */
        check_compare(t, 3, EU_SHAPE(3, 1, 5), 2, EU_SHAPE(257, 1), &rng);           /* both ways */
        check_compare(t, 5, EU_SHAPE(2, 1, 3, 1, 5), 4, EU_SHAPE(2, 1, 7, 1), &rng); /* 4+ dims */
        check_compare(t, 2, EU_SHAPE(1, 13), 2, EU_SHAPE(7, 13), &rng);              /* rows of a */
        check_compare(t, 2, EU_SHAPE(7, 1), 2, EU_SHAPE(7, 13), &rng); /* columns of a */
        check_compare(t, 2, EU_SHAPE(0, 3), 1, EU_SHAPE(3), &rng);     /* empty */
        check_compare(t, 1, EU_SHAPE(TU_LARGE), 1, EU_SHAPE(TU_LARGE), &rng);
    }
}
END_TEST

START_TEST(test_compare_not_recorded)
{
    uint64_t rng = tu_seed() + 10;
    float *h;
    clrt_tensor *x = leaf(2, EU_SHAPE(3, 4), &rng, &h);
    clrt_tensor *y = TU_NONNULL(clrt_gt(x, x));
    ck_assert(!clrt_tensor_requires_grad(y));
    ck_assert(clrt_tensor_is_leaf(y));
    clrt_tensor_release(x);
    clrt_tensor_release(y);
    free(h);
}
END_TEST

START_TEST(test_compare_errors)
{
    float h[8] = {0};
    clrt_tensor *f = upload(CLRT_F32, 1, EU_SHAPE(3), h), *i = upload(CLRT_I32, 1, EU_SHAPE(3), h);
    clrt_tensor *u = upload(CLRT_U8, 1, EU_SHAPE(3), h), *g = upload(CLRT_F32, 1, EU_SHAPE(4), h);
    ck_assert_ptr_null(clrt_gt(f, i));
    tu_assert_error(CLRT_EDTYPE, "clrt_gt", "float32", "int32", NULL);
    ck_assert_ptr_null(clrt_eq(u, u));
    tu_assert_error(CLRT_EDTYPE, "clrt_eq", "uint8", NULL);
    ck_assert_ptr_null(clrt_le(f, g));
    tu_assert_error(CLRT_ESHAPE, "clrt_le", "[3]", "[4]", "do not broadcast", NULL);
    ck_assert_ptr_null(clrt_ne(NULL, f));
    tu_assert_error(CLRT_EINVAL, "clrt_ne", "a is NULL", NULL);
    clrt_tensor *ts[4] = {f, i, u, g};
    for (int k = 0; k < 4; k++)
        clrt_tensor_release(ts[k]);
}
END_TEST

/* --- where, masked_fill --- */

static void check_where(clrt_dtype t, int nc, const int64_t *sc, int na, const int64_t *sa, int nb,
                        const int64_t *sb, uint64_t *rng)
{
    size_t es = esize_of(t);
    int no = nc;
    no = na > no ? na : no;
    no = nb > no ? nb : no;
    int64_t os[8];
    const int nds[3] = {nc, na, nb};
    const int64_t *ss[3] = {sc, sa, sb};
    for (int i = 0; i < no; i++) {
        os[i] = 1;
        for (int k = 0; k < 3; k++) {
            int j = i - (no - nds[k]);
            if (j >= 0 && ss[k][j] != 1)
                os[i] = ss[k][j];
        }
    }
    int64_t n_o = eu_numel(no, os), n_c = eu_numel(nc, sc);
    unsigned char *hc = malloc((size_t)n_c + 1);
    for (int64_t i = 0; i < n_c; i++) /* nonzero is true, not only 1 */
        hc[i] = (unsigned char)(tu_next(rng) % 3 == 0 ? 0 : 1 + tu_next(rng) % 200);
    unsigned char *ha = random_bytes(rng, t, (size_t)eu_numel(na, sa));
    unsigned char *hb = random_bytes(rng, t, (size_t)eu_numel(nb, sb));
    unsigned char *want = malloc((size_t)n_o * es + 1);
    for (int64_t o = 0; o < n_o; o++) {
        int64_t xc = eu_bcast_index(o, no, os, nc, sc);
        int64_t x = hc[xc] ? eu_bcast_index(o, no, os, na, sa) : eu_bcast_index(o, no, os, nb, sb);
        memcpy(want + o * (int64_t)es, (hc[xc] ? ha : hb) + x * (int64_t)es, es);
    }
    clrt_tensor *c = upload(CLRT_U8, nc, sc, hc), *a = upload(t, na, sa, ha),
                *b = upload(t, nb, sb, hb);
    clrt_tensor *y = TU_NONNULL(clrt_where(c, a, b));
    assert_shape(y, no, os);
    char s[128];
    assert_bytes(
        tu_fmt("where into %s (%s)", clrt_shape_str(no, os, s, sizeof s), clrt_dtype_str(t)), y,
        want);
    clrt_tensor *ts[4] = {c, a, b, y};
    for (int k = 0; k < 4; k++)
        clrt_tensor_release(ts[k]);
    free(hc);
    free(ha);
    free(hb);
    free(want);
}

static void where_sweep(uint64_t *rng)
{
    static const clrt_dtype types[3] = {CLRT_F32, CLRT_I32, CLRT_U8};
    for (int ti = 0; ti < 3; ti++) {
        clrt_dtype t = types[ti];
        check_where(t, 1, EU_SHAPE(1), 1, EU_SHAPE(1), 1, EU_SHAPE(1), rng);
        check_where(t, 2, EU_SHAPE(7, 13), 2, EU_SHAPE(7, 13), 2, EU_SHAPE(7, 13), rng);
        check_where(t, 2, EU_SHAPE(3, 1), 2, EU_SHAPE(1, 257), 3, EU_SHAPE(2, 3, 257), rng);
        check_where(t, 0, NULL, 1, EU_SHAPE(5), 0, NULL, rng);
        check_where(t, 5, EU_SHAPE(2, 1, 3, 1, 5), 3, EU_SHAPE(1, 7, 1), 1, EU_SHAPE(5), rng);
        check_where(t, 2, EU_SHAPE(0, 3), 1, EU_SHAPE(3), 1, EU_SHAPE(1), rng);
    }
}

START_TEST(test_where)
{
    uint64_t rng = tu_seed() + 11;
    where_sweep(&rng);
    check_where(CLRT_F32, 1, EU_SHAPE(TU_LARGE), 0, NULL, 1, EU_SHAPE(TU_LARGE), &rng);
}
END_TEST

START_TEST(test_where_wide_kernels)
{
    clrt__index64_force = 1;
    uint64_t rng = tu_seed() + 12;
    where_sweep(&rng);
}
END_TEST

START_TEST(test_where_errors)
{
    float h[8] = {0};
    clrt_tensor *c = upload(CLRT_U8, 1, EU_SHAPE(3), h), *f = upload(CLRT_F32, 1, EU_SHAPE(3), h);
    clrt_tensor *i = upload(CLRT_I32, 1, EU_SHAPE(3), h),
                *g = upload(CLRT_F32, 2, EU_SHAPE(2, 4), h);
    ck_assert_ptr_null(clrt_where(f, f, f));
    tu_assert_error(CLRT_EDTYPE, "clrt_where", "cond must be uint8", "float32", NULL);
    ck_assert_ptr_null(clrt_where(c, f, i));
    tu_assert_error(CLRT_EDTYPE, "clrt_where", "a is float32 but b is int32", NULL);
    ck_assert_ptr_null(clrt_where(c, f, g));
    tu_assert_error(CLRT_ESHAPE, "clrt_where", "cond [3]", "a [3]", "b [2, 4]", NULL);
    ck_assert_ptr_null(clrt_where(c, NULL, f));
    tu_assert_error(CLRT_EINVAL, "clrt_where", "a is NULL", NULL);
    ck_assert_ptr_null(clrt_masked_fill(g, c, 0));
    tu_assert_error(CLRT_ESHAPE, "clrt_masked_fill", "x [2, 4]", "mask [3]", "do not broadcast",
                    NULL);
    ck_assert_ptr_null(clrt_masked_fill(f, f, 0));
    tu_assert_error(CLRT_EDTYPE, "clrt_masked_fill", "mask must be uint8", NULL);
    ck_assert_ptr_null(clrt_masked_fill(i, c, -INFINITY));
    tu_assert_error(CLRT_EINVAL, "clrt_masked_fill", "does not fit a int32 tensor", NULL);
    ck_assert_ptr_null(clrt_masked_fill(f, c, 1e40));
    tu_assert_error(CLRT_EINVAL, "clrt_masked_fill", "1e+40 overflows float32", NULL);
    ck_assert_ptr_null(clrt_masked_fill(c, c, 256));
    tu_assert_error(CLRT_EINVAL, "clrt_masked_fill", "uint8", NULL);
    clrt_tensor *big = upload(CLRT_U8, 2, EU_SHAPE(2, 4), h);
    ck_assert_ptr_null(clrt_masked_fill(f, big, 0));
    tu_assert_error(CLRT_ESHAPE, "clrt_masked_fill", "x [3]", "mask [2, 4]", NULL);
    clrt_tensor *ts[5] = {c, f, i, g, big};
    for (int k = 0; k < 5; k++)
        clrt_tensor_release(ts[k]);
}
END_TEST

/* As torch.masked_fill, a mask larger than x broadcasts x: [3] with a
 * [2, 3] mask is [2, 3], and x's gradient sums the unfilled places. */
START_TEST(test_masked_fill_broadcasts_x)
{
    const float hx[3] = {1, 2, 3};
    const unsigned char hm[6] = {1, 0, 1, 0, 0, 1};
    clrt_tensor *x = upload(CLRT_F32, 1, EU_SHAPE(3), hx);
    clrt_tensor *m = upload(CLRT_U8, 2, EU_SHAPE(2, 3), hm);
    TU_OK(clrt_requires_grad_(x, 1));
    clrt_tensor *y = TU_NONNULL(clrt_masked_fill(x, m, 5.0));
    assert_shape(y, 2, EU_SHAPE(2, 3));
    assert_bytes("masked_fill broadcasting x", y, (const float[]){5, 2, 5, 1, 2, 5});
    clrt_tensor *ones = TU_NONNULL(clrt_ones(tu_device(), CLRT_F32, 2, EU_SHAPE(2, 3)));
    TU_OK(clrt_backward_with(y, ones));
    clrt_tensor *g = TU_NONNULL(clrt_tensor_grad(x));
    assert_bytes("its gradient", g, (const float[]){1, 2, 0});
    clrt_tensor *ts[5] = {x, m, y, ones, g};
    for (int k = 0; k < 5; k++)
        clrt_tensor_release(ts[k]);
}
END_TEST

START_TEST(test_masked_fill)
{
    uint64_t rng = tu_seed() + 13;
    int64_t T = 37, s[3] = {3, T, T}, sm[2] = {T, T};
    float *hx;
    clrt_tensor *x = leaf(3, s, &rng, &hx);
    unsigned char *hm = malloc((size_t)(T * T));
    for (int64_t i = 0; i < T; i++)
        for (int64_t j = 0; j < T; j++)
            hm[i * T + j] = j > i; /* causal */
    clrt_tensor *m = upload(CLRT_U8, 2, sm, hm);
    clrt_tensor *y = TU_NONNULL(clrt_masked_fill(x, m, -INFINITY));
    float *got = tu_read(y);
    int64_t k = 0;
    while (k < 3 * T * T && (hm[k % (T * T)] ? got[k] == -INFINITY : got[k] == hx[k]))
        k++;
    ck_assert_msg(k == 3 * T * T, "element %lld is %g", (long long)k,
                  k < 3 * T * T ? (double)got[k] : 0.0);
    free(got);
    /* the gradient is zero where it filled */
    float *hw;
    clrt_tensor *w = eu_random(tu_device(), &rng, 3, s, -1, 1, &hw);
    TU_OK(clrt_backward_with(y, w));
    clrt_tensor *g = TU_NONNULL(clrt_tensor_grad(x));
    got = tu_read(g);
    for (k = 0; k < 3 * T * T && got[k] == (hm[k % (T * T)] ? 0.0f : hw[k]);)
        k++;
    ck_assert_msg(k == 3 * T * T, "gradient %lld is %g", (long long)k,
                  k < 3 * T * T ? (double)got[k] : 0.0);
    free(got);
    /* NaN, and int32 / uint8 values truncated toward zero */
    clrt_tensor *yn = TU_NONNULL(clrt_masked_fill(x, m, NAN));
    got = tu_read(yn);
    ck_assert(isnan(got[1]) && got[0] == hx[0]);
    free(got);
    int32_t hi[4] = {5, 6, 7, 8};
    unsigned char hm4[4] = {1, 0, 9, 0};
    clrt_tensor *xi = upload(CLRT_I32, 1, EU_SHAPE(4), hi),
                *m4 = upload(CLRT_U8, 1, EU_SHAPE(4), hm4);
    clrt_tensor *yi = TU_NONNULL(clrt_masked_fill(xi, m4, -2.7));
    assert_bytes("masked_fill of int32 with -2.7", yi, (const int32_t[]){-2, 6, -2, 8});
    clrt_tensor *yu = TU_NONNULL(clrt_masked_fill(m4, m4, 200.9));
    assert_bytes("masked_fill of uint8 with 200.9", yu, (const unsigned char[]){200, 0, 200, 0});
    clrt_tensor *ts[10] = {x, m, y, w, g, yn, xi, m4, yi, yu};
    for (int t = 0; t < 10; t++)
        clrt_tensor_release(ts[t]);
    free(hx);
    free(hm);
    free(hw);
}
END_TEST

/* --- clamp, pow_scalar --- */

START_TEST(test_clamp)
{
    float h[8] = {-2.0f, -0.5f, 0.0f, 0.3f, 0.5f, NAN, INFINITY, -INFINITY};
    clrt_tensor *x = upload(CLRT_F32, 1, EU_SHAPE(8), h);
    TU_OK(clrt_requires_grad_(x, 1));
    clrt_tensor *y = TU_NONNULL(clrt_clamp(x, -0.5, 0.3));
    float *got = tu_read(y);
    const float want[8] = {-0.5f, -0.5f, 0.0f, 0.3f, 0.3f, NAN, 0.3f, -0.5f};
    for (int i = 0; i < 8; i++)
        ck_assert_msg(isnan(want[i]) ? isnan(got[i]) : got[i] == want[i], "element %d is %g", i,
                      (double)got[i]);
    free(got);
    /* the gradient passes strictly inside, as PyTorch 2.15's: 0 at the bounds */
    clrt_tensor *ones = TU_NONNULL(clrt_ones(tu_device(), CLRT_F32, 1, EU_SHAPE(8)));
    TU_OK(clrt_backward_with(y, ones));
    clrt_tensor *g = TU_NONNULL(clrt_tensor_grad(x));
    assert_bytes("clamp's gradient", g, (const float[]){0, 0, 1, 0, 0, 0, 0, 0});
    /* lo > hi gives hi; open sides */
    clrt_tensor *y2 = TU_NONNULL(clrt_clamp(x, 1.0, -1.0));
    got = tu_read(y2);
    for (int i = 0; i < 8; i++)
        ck_assert(i == 5 ? isnan(got[i]) : got[i] == -1.0f);
    free(got);
    clrt_tensor *y3 = TU_NONNULL(clrt_clamp(x, -INFINITY, 0.0));
    got = tu_read(y3);
    ck_assert(got[0] == -2.0f && got[7] == -INFINITY && got[6] == 0.0f);
    free(got);
    clrt_tensor *y4 = TU_NONNULL(clrt_clamp(x, NAN, 1)); /* NaN everywhere, as torch.clamp */
    got = tu_read(y4);
    for (int k = 0; k < 8; k++)
        ck_assert(isnan(got[k]));
    free(got);
    clrt_tensor_release(y4);
    clrt_tensor *i = upload(CLRT_I32, 1, EU_SHAPE(8), h);
    ck_assert_ptr_null(clrt_clamp(i, 0, 1));
    tu_assert_error(CLRT_EDTYPE, "clrt_clamp", "x must be float32", NULL);
    /* large */
    uint64_t rng = tu_seed() + 14;
    float *hl;
    clrt_tensor *xl = eu_random(tu_device(), &rng, 1, EU_SHAPE(TU_LARGE), -2, 2, &hl);
    clrt_tensor *yl = TU_NONNULL(clrt_clamp(xl, -1, 1.5));
    got = tu_read(yl);
    int64_t k = 0;
    while (k < TU_LARGE && got[k] == (hl[k] < -1 ? -1.0f : hl[k] > 1.5f ? 1.5f : hl[k]))
        k++;
    ck_assert_msg(k == TU_LARGE, "clamp: element %lld is %g", (long long)k,
                  k < TU_LARGE ? (double)got[k] : 0.0);
    free(got);
    free(hl);
    clrt_tensor *ts[9] = {x, y, ones, g, y2, y3, i, xl, yl};
    for (int t = 0; t < 9; t++)
        clrt_tensor_release(ts[t]);
}
END_TEST

/* x^p and its gradient against float64 for x from xs. */
static void check_pow(double p, const float *xs, int n, double bound)
{
    clrt_tensor *x = upload(CLRT_F32, 1, EU_SHAPE(n), xs);
    TU_OK(clrt_requires_grad_(x, 1));
    clrt_tensor *y = TU_NONNULL(clrt_pow_scalar(x, p));
    clrt_tensor *ones = TU_NONNULL(clrt_ones(tu_device(), CLRT_F32, 1, EU_SHAPE(n)));
    TU_OK(clrt_backward_with(y, ones));
    clrt_tensor *g = TU_NONNULL(clrt_tensor_grad(x));
    double *want = malloc((size_t)n * sizeof *want), *dwant = malloc((size_t)n * sizeof *dwant);
    for (int i = 0; i < n; i++) {
        want[i] = pow(xs[i], (float)p);
        dwant[i] = (float)p == 0 ? 0.0 : (float)p * pow(xs[i], (float)p - 1.0);
    }
    float *got = tu_read(y), *dgot = tu_read(g);
    eu_assert_close(tu_fmt("x^%g", p), got, want, (size_t)n, bound, 1e-37);
    eu_assert_close(tu_fmt("gradient of x^%g", p), dgot, dwant, (size_t)n, bound, 1e-37);
    free(got);
    free(dgot);
    free(want);
    free(dwant);
    clrt_tensor_release(x);
    clrt_tensor_release(y);
    clrt_tensor_release(ones);
    clrt_tensor_release(g);
}

START_TEST(test_pow_scalar)
{
    /* OpenCL 1.2 allows pow and pown 16 ulp; exact products for p = 2 */
    const float xs[9] = {-3.0f, -1.5f, -0.25f, 0.0f, 0.5f, 1.0f, 2.0f, 7.5f, 1e-3f};
    check_pow(2, xs, 9, 1.2e-7);
    check_pow(3, xs, 9, 2e-6);
    check_pow(-1, xs, 9, 2e-6); /* 1/0 = inf, matched exactly */
    check_pow(1, xs, 9, 0);     /* gradient 1 even at 0 */
    check_pow(0, xs, 9, 0);     /* x^0 = 1, gradient 0 */
    check_pow(0.5, xs + 4, 5, 2e-6);
    check_pow(-1.5, xs + 4, 5, 2e-6);
    check_pow(2.25, xs + 4, 5, 2e-6);
    /* negative base, non-integer exponent: NaN, as C's pow */
    clrt_tensor *x = upload(CLRT_F32, 1, EU_SHAPE(3), xs);
    clrt_tensor *y = TU_NONNULL(clrt_pow_scalar(x, 1.5));
    float *got = tu_read(y);
    ck_assert(isnan(got[0]) && isnan(got[1]) && isnan(got[2]));
    free(got);
    clrt_tensor_release(y);
    y = TU_NONNULL(clrt_pow_scalar(x, 0));
    got = tu_read(y);
    ck_assert(got[0] == 1.0f && got[1] == 1.0f);
    free(got);
    clrt_tensor_release(y);
    clrt_tensor_release(x);
    /* large */
    uint64_t rng = tu_seed() + 15;
    float *hl = tu_random_floats(&rng, (size_t)TU_LARGE, 0.1, 3);
    check_pow(-2.5, hl, (int)TU_LARGE, 2e-6);
    free(hl);
}
END_TEST

/* --- max and max_dim's gradients at ties and NaN --- */

static float *grad_of(clrt_tensor *x, clrt_tensor *y, double upstream)
{
    clrt_tensor *gy = TU_NONNULL(
        clrt_full(tu_device(), CLRT_F32, clrt_tensor_ndim(y), clrt_tensor_shape(y), upstream));
    TU_OK(clrt_backward_with(y, gy));
    clrt_tensor *g = TU_NONNULL(clrt_tensor_grad(x));
    float *r = tu_read(g);
    clrt_tensor_release(gy);
    clrt_tensor_release(g);
    return r;
}

START_TEST(test_max_gradients)
{
    /* three maxima share the gradient */
    const float h[6] = {1, 4, 2, 4, 4, -1};
    clrt_tensor *x = upload(CLRT_F32, 2, EU_SHAPE(2, 3), h);
    TU_OK(clrt_requires_grad_(x, 1));
    clrt_tensor *m = TU_NONNULL(clrt_max(x));
    float *g = grad_of(x, m, 3.0);
    for (int i = 0; i < 6; i++)
        ck_assert_msg(g[i] == (h[i] == 4 ? 1.0f : 0.0f), "gradient %d is %g", i, (double)g[i]);
    free(g);
    /* NaN is the maximum: its elements share the gradient */
    const float hn[4] = {NAN, 9, NAN, 1};
    clrt_tensor *xn = upload(CLRT_F32, 1, EU_SHAPE(4), hn);
    TU_OK(clrt_requires_grad_(xn, 1));
    clrt_tensor *mn = TU_NONNULL(clrt_max(xn));
    g = grad_of(xn, mn, 1.0);
    ck_assert(g[0] == 0.5f && g[1] == 0.0f && g[2] == 0.5f && g[3] == 0.0f);
    free(g);
    /* max_dim: the first maximum of each row takes it */
    const float hd[8] = {3, 1, 3, 3, 0, 5, 5, 2};
    clrt_tensor *xd = upload(CLRT_F32, 2, EU_SHAPE(2, 4), hd);
    TU_OK(clrt_requires_grad_(xd, 1));
    clrt_tensor *md = TU_NONNULL(clrt_max_dim(xd, -1, 1));
    assert_shape(md, 2, EU_SHAPE(2, 1));
    g = grad_of(xd, md, 2.0);
    const float want[8] = {2, 0, 0, 0, 0, 2, 0, 0};
    for (int i = 0; i < 8; i++)
        ck_assert_msg(g[i] == want[i], "max_dim gradient %d is %g", i, (double)g[i]);
    free(g);
    /* along the first dim of a larger tensor, past a work-group */
    uint64_t rng = tu_seed() + 16;
    int64_t R = 3, inner = 1031;
    float *hb;
    clrt_tensor *xb = leaf(2, EU_SHAPE(R, inner), &rng, &hb);
    clrt_tensor *mb = TU_NONNULL(clrt_max_dim(xb, 0, 0));
    g = grad_of(xb, mb, 1.0);
    int64_t wrong = 0;
    for (int64_t j = 0; j < inner; j++) {
        int64_t best = 0;
        for (int64_t r = 1; r < R; r++)
            best = hb[r * inner + j] > hb[best * inner + j] ? r : best;
        for (int64_t r = 0; r < R; r++)
            wrong += g[r * inner + j] != (r == best ? 1.0f : 0.0f);
    }
    ck_assert_msg(wrong == 0, "max_dim over dim 0: %lld gradients wrong", (long long)wrong);
    free(g);
    free(hb);
    clrt_tensor *ts[8] = {x, m, xn, mn, xd, md, xb, mb};
    for (int i = 0; i < 8; i++)
        clrt_tensor_release(ts[i]);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("shape_ops");
    TCase *tc = tu_tcase("shape_ops");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_permute);
    tcase_add_test(tc, test_permute_large);
    tcase_add_test(tc, test_permute_wide_kernels);
    tcase_add_test(tc, test_permute_errors);
    tcase_add_test(tc, test_narrow);
    tcase_add_test(tc, test_narrow_wide_kernels);
    tcase_add_test(tc, test_narrow_errors);
    tcase_add_test(tc, test_cat);
    tcase_add_test(tc, test_cat_wide_kernels);
    tcase_add_test(tc, test_cat_errors);
    tcase_add_test(tc, test_layout_gradients);
    tcase_add_test(tc, test_matmul_broadcast);
    tcase_add_test(tc, test_matmul_empty);
    tcase_add_test(tc, test_matmul_errors);
    tcase_add_test(tc, test_compare);
    tcase_add_test(tc, test_compare_not_recorded);
    tcase_add_test(tc, test_compare_errors);
    tcase_add_test(tc, test_where);
    tcase_add_test(tc, test_where_wide_kernels);
    tcase_add_test(tc, test_where_errors);
    tcase_add_test(tc, test_masked_fill);
    tcase_add_test(tc, test_masked_fill_broadcasts_x);
    tcase_add_test(tc, test_clamp);
    tcase_add_test(tc, test_pow_scalar);
    tcase_add_test(tc, test_max_gradients);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
