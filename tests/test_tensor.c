/* Tensors on the CPU device: creation, host round trips for every dtype,
 * printing, lifetime and views, the seeded generator against a host
 * Philox4x32-10, bad arguments, and broadcasting add against float64. */
#include "philox_ref.h"
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Odd sizes: 1, primes, non-multiples of 4 (the generator's width) and of
 * any work-group size, and one large. */
static const int64_t sizes[] = {1, 2, 3, 5, 7, 31, 257, 1009, 4099, (1 << 20) + 7};
#define N_SIZES (sizeof sizes / sizeof *sizes)

static clrt_tensor *vec(clrt_dtype t, int64_t n, const void *data)
{
    int64_t shape[1] = {n};
    return TU_NONNULL(clrt_from_host(tu_device(), t, 1, shape, data));
}

/* --- creation --- */

static void assert_filled(clrt_tensor *x, double want)
{
    size_t n = (size_t)clrt_tensor_numel(x);
    float *v = tu_read(x);
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(v[i] == (float)want, "element %zu is %g, not %g", i, v[i], want);
    free(v);
}

START_TEST(zeros_ones_full)
{
    int64_t shapes[][3] = {{1, 1, 1}, {3, 5, 1}, {2, 3, 5}, {1009, 1, 1}, {7, 1, 129}};
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
        clrt_tensor *z = TU_NONNULL(clrt_zeros(tu_device(), CLRT_F32, 3, shapes[s]));
        clrt_tensor *o = TU_NONNULL(clrt_ones(tu_device(), CLRT_F32, 3, shapes[s]));
        clrt_tensor *f = TU_NONNULL(clrt_full(tu_device(), CLRT_F32, 3, shapes[s], -3.25));
        ck_assert_int_eq(clrt_tensor_numel(z), shapes[s][0] * shapes[s][1] * shapes[s][2]);
        ck_assert_int_eq(clrt_tensor_ndim(o), 3);
        ck_assert_mem_eq(clrt_tensor_shape(f), shapes[s], sizeof shapes[s]);
        ck_assert_uint_eq(clrt_tensor_nbytes(f), 4 * (size_t)clrt_tensor_numel(f));
        ck_assert_ptr_eq(clrt_tensor_device(f), tu_device());
        ck_assert_int_eq(clrt_tensor_refcount(f), 1);
        assert_filled(z, 0);
        assert_filled(o, 1);
        assert_filled(f, -3.25);
        clrt_tensor_release(z);
        clrt_tensor_release(o);
        clrt_tensor_release(f);
    }
}
END_TEST

START_TEST(full_int_dtypes)
{
    int64_t shape[2] = {3, 7};
    clrt_tensor *i = TU_NONNULL(clrt_full(tu_device(), CLRT_I32, 2, shape, -123456));
    clrt_tensor *u = TU_NONNULL(clrt_full(tu_device(), CLRT_U8, 2, shape, 200));
    int32_t vi[21];
    uint8_t vu[21];
    TU_OK(clrt_to_host(i, vi, sizeof vi));
    TU_OK(clrt_to_host(u, vu, sizeof vu));
    for (int k = 0; k < 21; k++) {
        ck_assert_int_eq(vi[k], -123456);
        ck_assert_uint_eq(vu[k], 200);
    }
    ck_assert_int_eq(clrt_tensor_dtype(u), CLRT_U8);
    ck_assert_uint_eq(clrt_tensor_nbytes(u), 21);
    /* Values the dtype cannot hold are refused, not wrapped. */
    ck_assert_ptr_null(clrt_full(tu_device(), CLRT_U8, 2, shape, 256));
    tu_assert_error(CLRT_EINVAL, "256", "uint8", NULL);
    ck_assert_ptr_null(clrt_full(tu_device(), CLRT_I32, 2, shape, 3e9));
    tu_assert_error(CLRT_EINVAL, "int32", NULL);
    ck_assert_ptr_null(clrt_full(tu_device(), CLRT_I32, 2, shape, NAN));
    tu_assert_error(CLRT_EINVAL, NULL);
    clrt_tensor_release(i);
    clrt_tensor_release(u);
}
END_TEST

START_TEST(scalar_and_empty_shapes)
{
    clrt_tensor *s = TU_NONNULL(clrt_full(tu_device(), CLRT_F32, 0, NULL, 2.5));
    ck_assert_int_eq(clrt_tensor_ndim(s), 0);
    ck_assert_int_eq(clrt_tensor_numel(s), 1);
    double v = 0;
    TU_OK(clrt_item(s, &v));
    ck_assert_double_eq(v, 2.5);
    int64_t zero[2] = {4, 0};
    clrt_tensor *e = TU_NONNULL(clrt_zeros(tu_device(), CLRT_F32, 2, zero));
    ck_assert_int_eq(clrt_tensor_numel(e), 0);
    ck_assert_uint_eq(clrt_tensor_nbytes(e), 0);
    float dummy;
    TU_OK(clrt_to_host(e, &dummy, 0));
    ck_assert_int_eq(clrt_item(e, &v), CLRT_ESHAPE);
    clrt_tensor_release(s);
    clrt_tensor_release(e);
}
END_TEST

/* ctest sets CLRT_POISON=1: fresh buffers are all 0xFF bytes (NaN). */
START_TEST(empty_is_poisoned)
{
    const char *p = getenv("CLRT_POISON");
    if (!p || strcmp(p, "1") != 0) {
        tu_skip("empty_is_poisoned: CLRT_POISON=1 is not set (ctest sets it)");
        return;
    }
    int64_t shape[1] = {37};
    clrt_tensor *x = TU_NONNULL(clrt_empty(tu_device(), CLRT_F32, 1, shape));
    float *v = tu_read(x);
    for (int i = 0; i < 37; i++)
        ck_assert(isnan(v[i]));
    free(v);
    clrt_tensor_release(x);
}
END_TEST

/* --- host round trips --- */

START_TEST(round_trip_every_dtype)
{
    uint64_t rng = tu_seed() ^ 0x1234;
    for (size_t s = 0; s < N_SIZES; s++) {
        size_t n = (size_t)sizes[s];
        float *f = tu_random_floats(&rng, n, -1e6, 1e6);
        int32_t *i32 = malloc(n * sizeof *i32);
        uint8_t *u8 = malloc(n);
        void *back = malloc(n * 4);
        ck_assert(i32 && u8 && back);
        for (size_t k = 0; k < n; k++) {
            i32[k] = (int32_t)(uint32_t)tu_next(&rng);
            u8[k] = (uint8_t)tu_next(&rng);
        }
        const struct {
            clrt_dtype t;
            const void *data;
            size_t bytes;
        } cases[] = {{CLRT_F32, f, 4 * n}, {CLRT_I32, i32, 4 * n}, {CLRT_U8, u8, n}};
        for (int c = 0; c < 3; c++) {
            clrt_tensor *x = vec(cases[c].t, (int64_t)n, cases[c].data);
            ck_assert_uint_eq(clrt_tensor_nbytes(x), cases[c].bytes);
            memset(back, 0xAB, n * 4);
            TU_OK(clrt_to_host(x, back, n * 4)); /* a larger buffer is fine */
            ck_assert_msg(memcmp(back, cases[c].data, cases[c].bytes) == 0,
                          "%s round trip of %zu elements differs", clrt_dtype_str(cases[c].t), n);
            clrt_tensor_release(x);
        }
        free(f);
        free(i32);
        free(u8);
        free(back);
    }
}
END_TEST

START_TEST(copy_from_host_forms)
{
    uint64_t rng = tu_seed() ^ 0x77;
    int64_t shape[2] = {13, 11};
    float *a = tu_random_floats(&rng, 143, -5, 5), *b = tu_random_floats(&rng, 143, -5, 5);
    clrt_tensor *x = TU_NONNULL(clrt_empty(tu_device(), CLRT_F32, 2, shape));
    TU_OK(clrt_copy_from_host(x, a, 143 * 4));
    float *got = tu_read(x);
    ck_assert_mem_eq(got, a, 143 * 4);
    free(got);
    TU_OK(clrt_copy_from_host_async(x, b, 143 * 4));
    TU_OK(clrt_device_synchronize(tu_device()));
    got = tu_read(x);
    ck_assert_mem_eq(got, b, 143 * 4);
    free(got);
    ck_assert_int_eq(clrt_copy_from_host(x, a, 142 * 4), CLRT_EINVAL);
    tu_assert_error(CLRT_EINVAL, "568 bytes given", "572", NULL);
    ck_assert_int_eq(clrt_copy_from_host(x, NULL, 143 * 4), CLRT_EINVAL);
    ck_assert_int_eq(clrt_copy_from_host_async(NULL, a, 4), CLRT_EINVAL);
    got = tu_read(x); /* the failed calls lost nothing */
    ck_assert_mem_eq(got, b, 143 * 4);
    free(got);
    free(a);
    free(b);
    clrt_tensor_release(x);
}
END_TEST

START_TEST(item_of_every_dtype)
{
    float f = -0.375f;
    int32_t i = -77;
    uint8_t u = 250;
    clrt_tensor *xs[3] = {vec(CLRT_F32, 1, &f), vec(CLRT_I32, 1, &i), vec(CLRT_U8, 1, &u)};
    double want[3] = {-0.375, -77, 250};
    for (int k = 0; k < 3; k++) {
        double v = 0;
        TU_OK(clrt_item(xs[k], &v));
        ck_assert_double_eq(v, want[k]);
        clrt_tensor_release(xs[k]);
    }
    float two[2] = {1, 2};
    clrt_tensor *x = vec(CLRT_F32, 2, two);
    double v;
    ck_assert_int_eq(clrt_item(x, &v), CLRT_ESHAPE);
    tu_assert_error(CLRT_ESHAPE, "2 elements", NULL);
    ck_assert_int_eq(clrt_item(x, NULL), CLRT_EINVAL);
    clrt_tensor_release(x);
}
END_TEST

START_TEST(clone_is_independent)
{
    uint64_t rng = tu_seed() ^ 0x99;
    float *a = tu_random_floats(&rng, 101, -1, 1), *b = tu_random_floats(&rng, 101, -1, 1);
    clrt_tensor *x = vec(CLRT_F32, 101, a);
    clrt_tensor *c = TU_NONNULL(clrt_tensor_clone(x));
    ck_assert_ptr_ne(c, x);
    TU_OK(clrt_copy_from_host(x, b, 101 * 4));
    float *got = tu_read(c);
    ck_assert_mem_eq(got, a, 101 * 4);
    free(got);
    ck_assert_ptr_null(clrt_tensor_clone(NULL));
    tu_assert_error(CLRT_EINVAL, NULL);
    clrt_tensor_release(x);
    clrt_tensor_release(c);
    free(a);
    free(b);
}
END_TEST

/* --- printing --- */

/* Joins the suffixes (", device=...", ", dtype=...", ", size=...") that
 * printing put on a line of their own back onto the line before, in place,
 * after checking that each was moved only because the joined line would
 * pass 80 columns (as PyTorch wraps them). */
static void join_suffix_lines(char *text)
{
    static const char *const breaks[] = {
        ",\n       device=", ",\n       dtype=", ",\n       size="};
    for (size_t k = 0; k < 3; k++)
        for (char *at; (at = strstr(text, breaks[k])) != NULL;) {
            const char *line = at;
            while (line > text && line[-1] != '\n')
                line--;
            size_t suffix = strcspn(at + 9, ",)");
            ck_assert_msg((size_t)(at - line) + 2 + suffix + 2 > 80,
                          "a suffix moved to a new line though it fits: %s", text);
            at[1] = ' ';
            memmove(at + 2, at + 9, strlen(at + 9) + 1);
        }
}

/* want is written for a tensor on "cpu"; the test device's name replaces
 * "cpu", and where that is longer, the suffixes' line breaks may move, so
 * they are compared joined (join_suffix_lines). */
static void assert_prints(clrt_tensor *x, const char *want_on_cpu)
{
    char *text = NULL, want[4096];
    size_t len = 0;
    const char *tag = "device='cpu'", *at = strstr(want_on_cpu, tag);
    ck_assert_ptr_nonnull(at);
    snprintf(want, sizeof want, "%.*sdevice='%s'%s", (int)(at - want_on_cpu), want_on_cpu,
             clrt_device_str(clrt_tensor_device(x)), at + strlen(tag));
    FILE *f = open_memstream(&text, &len);
    ck_assert_ptr_nonnull(f);
    TU_OK(clrt_tensor_print(f, x));
    fclose(f);
    if (strcmp(clrt_device_str(clrt_tensor_device(x)), "cpu") != 0) {
        join_suffix_lines(want);
        join_suffix_lines(text);
    }
    ck_assert_msg(strcmp(text, want) == 0, "printed\n%s\nwanted\n%s", text, want);
    free(text);
    clrt_tensor_release(x);
}

START_TEST(print_small)
{
    int64_t s22[2] = {2, 2}, s23[2] = {2, 3}, s20[2] = {2, 0};
    assert_prints(TU_NONNULL(clrt_ones(tu_device(), CLRT_F32, 2, s22)),
                  "tensor([[1., 1.],\n        [1., 1.]], device='cpu')\n");
    float fixed[3] = {0.5f, -1.25f, 3};
    assert_prints(vec(CLRT_F32, 3, fixed), "tensor([ 0.5000, -1.2500,  3.0000], device='cpu')\n");
    float sci[2] = {1e-5f, 1};
    assert_prints(vec(CLRT_F32, 2, sci), "tensor([1.0000e-05, 1.0000e+00], device='cpu')\n");
    float wide[2] = {1, 5000}; /* integers over three decades: scientific, as torch */
    assert_prints(vec(CLRT_F32, 2, wide), "tensor([1.0000e+00, 5.0000e+03], device='cpu')\n");
    float odd[3] = {NAN, 1.5f, INFINITY};
    assert_prints(vec(CLRT_F32, 3, odd), "tensor([   nan, 1.5000,    inf], device='cpu')\n");
    int32_t ints[6] = {1, -20, 300, 4, 5, 6};
    assert_prints(TU_NONNULL(clrt_from_host(tu_device(), CLRT_I32, 2, s23, ints)),
                  "tensor([[  1, -20, 300],\n        [  4,   5,   6]], device='cpu', "
                  "dtype=int32)\n");
    uint8_t bytes[4] = {0, 7, 255, 10};
    assert_prints(vec(CLRT_U8, 4, bytes),
                  "tensor([  0,   7, 255,  10], device='cpu', dtype=uint8)\n");
    assert_prints(TU_NONNULL(clrt_full(tu_device(), CLRT_F32, 0, NULL, 2.5)),
                  "tensor(2.5000, device='cpu')\n");
    assert_prints(TU_NONNULL(clrt_zeros(tu_device(), CLRT_F32, 2, s20)),
                  "tensor([], device='cpu', size=[2, 0])\n");
    ck_assert_int_eq(clrt_tensor_print(NULL, NULL), CLRT_EINVAL);
}
END_TEST

/* A print whose writes fail (a full device: ENOSPC) is an error, not OK
 * (issue 25). */
START_TEST(print_to_a_full_device)
{
    FILE *f = fopen("/dev/full", "w");
    ck_assert_ptr_nonnull(f);
    clrt_tensor *x = TU_NONNULL(clrt_ones(tu_device(), CLRT_F32, 1, (int64_t[]){3}));
    ck_assert_int_eq(clrt_tensor_print(f, x), CLRT_EIO);
    tu_assert_error(CLRT_EIO, "clrt_tensor_print", "No space left", NULL);
    fclose(f);
    clrt_tensor_release(x);
}
END_TEST

START_TEST(print_wraps_long_rows)
{
    int64_t s30[1] = {30};
    assert_prints(TU_NONNULL(clrt_ones(tu_device(), CLRT_F32, 1, s30)),
                  "tensor([1., 1., 1., 1., 1., 1., 1., 1., 1., 1., 1., 1., 1., 1., 1., 1., "
                  "1., 1.,\n"
                  "        1., 1., 1., 1., 1., 1., 1., 1., 1., 1., 1., 1.], device='cpu')\n");
}
END_TEST

START_TEST(print_elides_large)
{
    float f[2000];
    int32_t i[2000];
    for (int k = 0; k < 2000; k++) {
        f[k] = (float)(k % 10);
        i[k] = k;
    }
    assert_prints(vec(CLRT_F32, 2000, f), "tensor([0., 1., 2.,  ..., 7., 8., 9.], device='cpu')\n");
    int64_t s2[2] = {40, 50};
    assert_prints(TU_NONNULL(clrt_from_host(tu_device(), CLRT_I32, 2, s2, i)),
                  "tensor([[   0,    1,    2,  ...,   47,   48,   49],\n"
                  "        [  50,   51,   52,  ...,   97,   98,   99],\n"
                  "        [ 100,  101,  102,  ...,  147,  148,  149],\n"
                  "        ...,\n"
                  "        [1850, 1851, 1852,  ..., 1897, 1898, 1899],\n"
                  "        [1900, 1901, 1902,  ..., 1947, 1948, 1949],\n"
                  "        [1950, 1951, 1952,  ..., 1997, 1998, 1999]], device='cpu', "
                  "dtype=int32)\n");
    int64_t s3[3] = {10, 2, 100};
    assert_prints(TU_NONNULL(clrt_from_host(tu_device(), CLRT_I32, 3, s3, i)),
                  "tensor([[[   0,    1,    2,  ...,   97,   98,   99],\n"
                  "         [ 100,  101,  102,  ...,  197,  198,  199]],\n\n"
                  "        [[ 200,  201,  202,  ...,  297,  298,  299],\n"
                  "         [ 300,  301,  302,  ...,  397,  398,  399]],\n\n"
                  "        [[ 400,  401,  402,  ...,  497,  498,  499],\n"
                  "         [ 500,  501,  502,  ...,  597,  598,  599]],\n\n"
                  "        ...,\n\n"
                  "        [[1400, 1401, 1402,  ..., 1497, 1498, 1499],\n"
                  "         [1500, 1501, 1502,  ..., 1597, 1598, 1599]],\n\n"
                  "        [[1600, 1601, 1602,  ..., 1697, 1698, 1699],\n"
                  "         [1700, 1701, 1702,  ..., 1797, 1798, 1799]],\n\n"
                  "        [[1800, 1801, 1802,  ..., 1897, 1898, 1899],\n"
                  "         [1900, 1901, 1902,  ..., 1997, 1998, 1999]]], device='cpu',\n"
                  "       dtype=int32)\n");
}
END_TEST

/* --- lifetime and views --- */

START_TEST(refcounts)
{
    int64_t shape[2] = {2, 6};
    clrt_tensor *x = TU_NONNULL(clrt_zeros(tu_device(), CLRT_F32, 2, shape));
    clrt_tensor_retain(x);
    ck_assert_int_eq(clrt_tensor_refcount(x), 2);
    clrt_tensor_release(x);
    ck_assert_int_eq(clrt_tensor_refcount(x), 1);
    clrt_tensor *same = TU_NONNULL(clrt_tensor_to(x, tu_device()));
    ck_assert_ptr_eq(same, x);
    ck_assert_int_eq(clrt_tensor_refcount(x), 2);
    clrt_tensor_release(same);
    clrt_tensor_release(NULL); /* a no-op */
    clrt_tensor_retain(NULL);
    ck_assert_int_eq(clrt_tensor_refcount(NULL), 0);
    ck_assert_int_eq(clrt_tensor_refcount(x), 1);
    clrt_tensor_release(x);
}
END_TEST

START_TEST(reshape_views_share_storage)
{
    uint64_t rng = tu_seed() ^ 0x5151;
    float *a = tu_random_floats(&rng, 24, -1, 1), *b = tu_random_floats(&rng, 24, -1, 1);
    int64_t s234[3] = {2, 3, 4}, s_inf[2] = {-1, 6};
    clrt_tensor *x = TU_NONNULL(clrt_from_host(tu_device(), CLRT_F32, 3, s234, a));
    clrt_tensor *v = TU_NONNULL(clrt_reshape(x, 2, s_inf));
    ck_assert_int_eq(clrt_tensor_shape(v)[0], 4);
    ck_assert_int_eq(clrt_tensor_shape(v)[1], 6);
    ck_assert_int_eq(clrt_tensor_refcount(x), 1);
    ck_assert_int_eq(clrt_tensor_refcount(v), 1);
    TU_OK(clrt_copy_from_host(v, b, sizeof(float) * 24)); /* through the view */
    float *got = tu_read(x);
    ck_assert_mem_eq(got, b, sizeof(float) * 24);
    free(got);
    clrt_tensor *fl = TU_NONNULL(clrt_tensor_flatten(x));
    ck_assert_int_eq(clrt_tensor_ndim(fl), 2);
    ck_assert_int_eq(clrt_tensor_shape(fl)[1], 12);
    clrt_tensor_release(x); /* the views keep the storage alive */
    got = tu_read(v);
    ck_assert_mem_eq(got, b, sizeof(float) * 24);
    free(got);
    clrt_tensor_release(fl);
    clrt_tensor_release(v);
    free(a);
    free(b);
}
END_TEST

START_TEST(reshape_errors_show_shapes)
{
    int64_t s6[1] = {6}, s_bad[2] = {4, -1}, s_big[2] = {4, 2}, s_neg[2] = {-2, 3};
    clrt_tensor *x = TU_NONNULL(clrt_zeros(tu_device(), CLRT_F32, 1, s6));
    ck_assert_ptr_null(clrt_reshape(x, 2, s_bad));
    tu_assert_error(CLRT_ESHAPE, "[6]", "[4, -1]", NULL);
    ck_assert_ptr_null(clrt_reshape(x, 2, s_big));
    tu_assert_error(CLRT_ESHAPE, "[6]", "[4, 2]", NULL);
    ck_assert_ptr_null(clrt_reshape(x, 2, s_neg));
    tu_assert_error(CLRT_EINVAL, "-2", NULL);
    ck_assert_ptr_null(clrt_reshape(NULL, 1, s6));
    tu_assert_error(CLRT_EINVAL, NULL);
    ck_assert_ptr_null(clrt_tensor_flatten(NULL));
    ck_assert_int_eq(clrt_tensor_refcount(x), 1);
    clrt_tensor_release(x);
}
END_TEST

START_TEST(names_and_accessors)
{
    ck_assert_uint_eq(clrt_dtype_size(CLRT_F32), 4);
    ck_assert_uint_eq(clrt_dtype_size(CLRT_I32), 4);
    ck_assert_uint_eq(clrt_dtype_size(CLRT_U8), 1);
    ck_assert_uint_eq(clrt_dtype_size((clrt_dtype)9), 0);
    ck_assert_str_eq(clrt_dtype_str(CLRT_F32), "float32");
    ck_assert_str_eq(clrt_dtype_str(CLRT_I32), "int32");
    ck_assert_str_eq(clrt_dtype_str(CLRT_U8), "uint8");
    char buf[64];
    int64_t shape[3] = {2, 0, 17};
    ck_assert_str_eq(clrt_shape_str(3, shape, buf, sizeof buf), "[2, 0, 17]");
    ck_assert_str_eq(clrt_shape_str(0, NULL, buf, sizeof buf), "[]");
    int64_t extremes[3] = {-7, INT64_MAX, INT64_MIN};
    ck_assert_str_eq(clrt_shape_str(3, extremes, buf, sizeof buf),
                     "[-7, 9223372036854775807, -9223372036854775808]");
    ck_assert_str_eq(clrt_shape_str(3, shape, buf, 6), "[2, 0"); /* cut to fit, terminated */
    ck_assert_str_eq(clrt_shape_str(3, shape, buf, 1), "");
    /* Bad arguments are no crash (issue 25: both were SIGSEGV). */
    ck_assert_ptr_null(clrt_shape_str(2, shape, NULL, 10));
    ck_assert_str_eq(clrt_shape_str(2, NULL, buf, sizeof buf), "[invalid shape]");
    ck_assert_str_eq(clrt_shape_str(-1, shape, buf, sizeof buf), "[invalid shape]");
    ck_assert_str_eq(clrt_shape_str(CLRT_MAX_DIMS + 1, shape, buf, sizeof buf), "[invalid shape]");
    ck_assert_ptr_null(clrt_tensor_device(NULL));
    ck_assert_ptr_null(clrt_tensor_shape(NULL));
    ck_assert_int_eq(clrt_tensor_numel(NULL), 0);
    ck_assert_uint_eq(clrt_tensor_nbytes(NULL), 0);
}
END_TEST

/* --- the generator, against the host Philox4x32-10 (support/philox_ref.c) --- */

/* The reference itself, against Random123's known-answer vectors. */
START_TEST(philox_known_answers)
{
    uint32_t a[4] = {0, 0, 0, 0}, b[4] = {~0u, ~0u, ~0u, ~0u};
    uint32_t c[4] = {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344};
    tu_philox4x32_10(a, 0, 0);
    tu_philox4x32_10(b, ~0u, ~0u);
    tu_philox4x32_10(c, 0xa4093822, 0x299f31d0);
    const uint32_t want[3][4] = {{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8},
                                 {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd},
                                 {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}};
    ck_assert_mem_eq(a, want[0], 16);
    ck_assert_mem_eq(b, want[1], 16);
    ck_assert_mem_eq(c, want[2], 16);
}
END_TEST

START_TEST(rand_matches_host_philox)
{
    uint64_t rng = tu_seed() ^ 0xFACE;
    for (size_t s = 0; s < N_SIZES; s++) {
        uint64_t seed = tu_next(&rng);
        size_t n = (size_t)sizes[s];
        clrt_tensor *x = TU_NONNULL(clrt_rand(tu_device(), 1, &sizes[s], seed));
        float *got = tu_read(x);
        for (size_t k = 0; k < n; k++) {
            float want = tu_philox_uniform(seed, k);
            ck_assert_msg(memcmp(&got[k], &want, 4) == 0,
                          "rand seed %llu element %zu of %zu: %.9g, host %.9g",
                          (unsigned long long)seed, k, n, got[k], want);
        }
        free(got);
        clrt_tensor_release(x);
    }
}
END_TEST

START_TEST(rand_same_seed_same_numbers)
{
    int64_t shape[2] = {33, 17};
    uint64_t seed = tu_seed();
    clrt_tensor *a = TU_NONNULL(clrt_rand(tu_device(), 2, shape, seed));
    clrt_tensor *b = TU_NONNULL(clrt_rand(tu_device(), 2, shape, seed));
    clrt_tensor *c = TU_NONNULL(clrt_rand(tu_device(), 2, shape, seed + 1));
    float *va = tu_read(a), *vb = tu_read(b), *vc = tu_read(c);
    ck_assert_mem_eq(va, vb, sizeof(float) * 33 * 17);
    int same = 0;
    for (int k = 0; k < 33 * 17; k++) {
        ck_assert(va[k] >= 0 && va[k] < 1);
        same += va[k] == vc[k];
    }
    ck_assert_int_lt(same, 10);
    free(va), free(vb), free(vc);
    clrt_tensor_release(a), clrt_tensor_release(b), clrt_tensor_release(c);
}
END_TEST

/* randn is Box-Muller on pairs of words; the host does it in float64 from
 * the same float32 inputs the kernel computes. */
static double host_normal(uint64_t seed, size_t k)
{
    uint32_t w[4];
    tu_philox_block(seed, k / 4, w);
    size_t pair = (k % 4) / 2;
    float u = (float)((w[2 * pair] >> 8) + 1u) * 0x1p-24f; /* (0, 1] */
    float t = 6.283185307f * ((float)(w[2 * pair + 1] >> 8) * 0x1p-24f);
    double r = sqrt(-2.0 * log((double)u));
    return k % 2 == 0 ? r * cos((double)t) : r * sin((double)t);
}

START_TEST(randn_matches_box_muller)
{
    uint64_t rng = tu_seed() ^ 0xBEEF;
    for (size_t s = 0; s < N_SIZES - 1; s++) {
        uint64_t seed = tu_next(&rng);
        size_t n = (size_t)sizes[s];
        clrt_tensor *x = TU_NONNULL(clrt_randn(tu_device(), 1, &sizes[s], seed));
        float *got = tu_read(x);
        for (size_t k = 0; k < n; k++) {
            double want = host_normal(seed, k);
            /* float32 log/sqrt/cos on the device: a few ulp each */
            ck_assert_msg(fabs(got[k] - want) <= 2e-5 * (1 + fabs(want)),
                          "randn element %zu: %.9g, host %.9g", k, got[k], want);
        }
        free(got);
        clrt_tensor_release(x);
    }
}
END_TEST

START_TEST(randn_statistics)
{
    int64_t n = 100000;
    clrt_tensor *x = TU_NONNULL(clrt_randn(tu_device(), 1, &n, tu_seed()));
    float *v = tu_read(x);
    double sum = 0, sq = 0;
    for (int64_t k = 0; k < n; k++)
        sum += v[k];
    double mean = sum / (double)n;
    for (int64_t k = 0; k < n; k++)
        sq += (v[k] - mean) * (v[k] - mean);
    double sd = sqrt(sq / (double)(n - 1));
    /* 5 standard errors: 1/sqrt(n) for the mean, 1/sqrt(2n) for the sd */
    ck_assert_msg(fabs(mean) < 5 / sqrt((double)n), "mean %g", mean);
    ck_assert_msg(fabs(sd - 1) < 5 / sqrt(2.0 * (double)n), "sd %g", sd);
    free(v);
    clrt_tensor_release(x);
}
END_TEST

/* --- bad arguments --- */

START_TEST(bad_shapes_and_devices)
{
    int64_t neg[2] = {3, -1}, ok[1] = {4}, nine[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    int64_t huge[2] = {(int64_t)1 << 40, (int64_t)1 << 40};
    ck_assert_ptr_null(clrt_empty(tu_device(), CLRT_F32, 2, neg));
    tu_assert_error(CLRT_EINVAL, "[3, -1]", "negative", NULL);
    ck_assert_ptr_null(clrt_zeros(tu_device(), CLRT_F32, 2, NULL));
    tu_assert_error(CLRT_EINVAL, "shape is NULL", NULL);
    ck_assert_ptr_null(clrt_ones(tu_device(), CLRT_F32, 9, nine));
    tu_assert_error(CLRT_EINVAL, "ndim 9", NULL);
    ck_assert_ptr_null(clrt_ones(tu_device(), CLRT_F32, -1, ok));
    tu_assert_error(CLRT_EINVAL, "ndim -1", NULL);
    ck_assert_ptr_null(clrt_zeros(NULL, CLRT_F32, 1, ok));
    tu_assert_error(CLRT_EINVAL, "device is NULL", NULL);
    ck_assert_ptr_null(clrt_rand(NULL, 1, ok, 1));
    tu_assert_error(CLRT_EINVAL, "device is NULL", NULL);
    ck_assert_ptr_null(clrt_zeros(tu_device(), (clrt_dtype)7, 1, ok));
    tu_assert_error(CLRT_EDTYPE, "dtype 7", NULL);
    ck_assert_ptr_null(clrt_empty(tu_device(), CLRT_U8, 2, huge));
    tu_assert_error(CLRT_ENOMEM, "[1099511627776, 1099511627776]", "overflow", NULL);
    ck_assert_ptr_null(clrt_from_host(tu_device(), CLRT_F32, 1, ok, NULL));
    tu_assert_error(CLRT_EINVAL, "data is NULL", NULL);
}
END_TEST

START_TEST(allocation_beyond_the_device_limit)
{
    clrt_device_info info;
    TU_OK(clrt_device_info_get(tu_device(), &info));
    int64_t n = (int64_t)(info.max_alloc_bytes / 4 + 1);
    char limit[64];
    snprintf(limit, sizeof limit, "%llu", (unsigned long long)info.max_alloc_bytes);
    ck_assert_ptr_null(clrt_empty(tu_device(), CLRT_F32, 1, &n));
    tu_assert_error(CLRT_ENOMEM, "CL_DEVICE_MAX_MEM_ALLOC_SIZE", limit, info.name, info.model,
                    NULL);
    ck_assert_ptr_null(clrt_rand(tu_device(), 1, &n, 3));
    tu_assert_error(CLRT_ENOMEM, "CL_DEVICE_MAX_MEM_ALLOC_SIZE", NULL);
}
END_TEST

START_TEST(to_host_too_small)
{
    float v[5] = {1, 2, 3, 4, 5}, back[5] = {0};
    clrt_tensor *x = vec(CLRT_F32, 5, v);
    ck_assert_int_eq(clrt_to_host(x, back, 19), CLRT_EINVAL);
    tu_assert_error(CLRT_EINVAL, "19 bytes", "20", NULL);
    ck_assert_int_eq(clrt_to_host(x, NULL, 20), CLRT_EINVAL);
    ck_assert_int_eq(clrt_to_host(NULL, back, 20), CLRT_EINVAL);
    TU_OK(clrt_to_host(x, back, sizeof back));
    ck_assert_mem_eq(back, v, sizeof v);
    clrt_tensor_release(x);
}
END_TEST

/* --- add with broadcasting --- */

/* out[m, n] = a[i] + b[j] where a, b broadcast: element (r, c) of a is
 * a[(r % am) * an + (c % an)] for an a of shape [am, an] with am, an in {1, m/n}. */
static void check_add(int64_t m, int64_t n, int64_t am, int64_t an, int64_t bm, int64_t bn,
                      int a_ndim, int b_ndim, uint64_t *rng)
{
    float *a = tu_random_floats(rng, (size_t)(am * an), -100, 100);
    float *b = tu_random_floats(rng, (size_t)(bm * bn), -100, 100);
    int64_t as[2] = {am, an}, bs[2] = {bm, bn};
    /* a 1-D operand is its last dim; a 0-D one a single value */
    clrt_tensor *ta = TU_NONNULL(clrt_from_host(tu_device(), CLRT_F32, a_ndim, as + 2 - a_ndim, a));
    clrt_tensor *tb = TU_NONNULL(clrt_from_host(tu_device(), CLRT_F32, b_ndim, bs + 2 - b_ndim, b));
    clrt_tensor *out = TU_NONNULL(clrt_add(ta, tb));
    ck_assert_int_eq(clrt_tensor_numel(out), m * n);
    double *ref = malloc(sizeof(double) * (size_t)(m * n));
    for (int64_t r = 0; r < m; r++)
        for (int64_t c = 0; c < n; c++)
            ref[r * n + c] = (double)a[(r % am) * an + c % an] + (double)b[(r % bm) * bn + c % bn];
    float *got = tu_read(out);
    double err = tu_rel_err(got, ref, (size_t)(m * n), 1e-30);
    ck_assert_msg(err <= 1e-6, "add [%lld,%lld]x[%lld,%lld]: rel err %g", (long long)am,
                  (long long)an, (long long)bm, (long long)bn, err);
    free(a), free(b), free(ref), free(got);
    clrt_tensor_release(ta), clrt_tensor_release(tb), clrt_tensor_release(out);
}

START_TEST(add_matches_float64)
{
    uint64_t rng = tu_seed() ^ 0xADD;
    const int64_t dims[][2] = {{1, 1}, {1, 7}, {3, 5}, {13, 1}, {31, 257}, {1009, 3}};
    for (size_t k = 0; k < sizeof dims / sizeof *dims; k++) {
        int64_t m = dims[k][0], n = dims[k][1];
        check_add(m, n, m, n, m, n, 2, 2, &rng); /* same shape */
        check_add(m, n, m, n, 1, n, 2, 1, &rng); /* a row [n] */
        check_add(m, n, m, 1, m, n, 2, 2, &rng); /* a column [m, 1] */
        check_add(m, n, m, n, 1, 1, 2, 1, &rng); /* a scalar [1] */
        check_add(m, n, 1, 1, m, n, 0, 2, &rng); /* a 0-D scalar */
        check_add(m, n, m, 1, 1, n, 2, 1, &rng); /* [m, 1] + [n]: an outer sum */
    }
    int64_t big = (1 << 20) + 7;
    check_add(1, big, 1, big, 1, big, 1, 1, &rng);
}
END_TEST

START_TEST(add_int32)
{
    uint64_t rng = tu_seed() ^ 0x1732;
    int32_t a[77], b[7], want[77], got[77];
    for (int k = 0; k < 77; k++)
        a[k] = (int32_t)(tu_next(&rng) % 2001) - 1000;
    for (int k = 0; k < 7; k++)
        b[k] = (int32_t)(tu_next(&rng) % 2001) - 1000;
    for (int k = 0; k < 77; k++)
        want[k] = a[k] + b[k % 7];
    int64_t sa[2] = {11, 7}, sb[1] = {7};
    clrt_tensor *ta = TU_NONNULL(clrt_from_host(tu_device(), CLRT_I32, 2, sa, a));
    clrt_tensor *tb = TU_NONNULL(clrt_from_host(tu_device(), CLRT_I32, 1, sb, b));
    clrt_tensor *out = TU_NONNULL(clrt_add(ta, tb));
    ck_assert_int_eq(clrt_tensor_dtype(out), CLRT_I32);
    TU_OK(clrt_to_host(out, got, sizeof got));
    ck_assert_mem_eq(got, want, sizeof want);
    clrt_tensor_release(ta), clrt_tensor_release(tb), clrt_tensor_release(out);
}
END_TEST

START_TEST(add_errors)
{
    int64_t s34[2] = {3, 4}, s5[1] = {5};
    clrt_tensor *a = TU_NONNULL(clrt_zeros(tu_device(), CLRT_F32, 2, s34));
    clrt_tensor *b = TU_NONNULL(clrt_zeros(tu_device(), CLRT_F32, 1, s5));
    clrt_tensor *i = TU_NONNULL(clrt_zeros(tu_device(), CLRT_I32, 2, s34));
    clrt_tensor *u = TU_NONNULL(clrt_zeros(tu_device(), CLRT_U8, 2, s34));
    ck_assert_ptr_null(clrt_add(a, b));
    tu_assert_error(CLRT_ESHAPE, "clrt_add", "[3, 4]", "[5]", NULL);
    ck_assert_ptr_null(clrt_add(a, i));
    tu_assert_error(CLRT_EDTYPE, "float32", "int32", NULL);
    ck_assert_ptr_null(clrt_add(u, u));
    tu_assert_error(CLRT_EDTYPE, "uint8", NULL);
    ck_assert_ptr_null(clrt_add(a, NULL));
    tu_assert_error(CLRT_EINVAL, "NULL", NULL);
    ck_assert_int_eq(clrt_tensor_refcount(a), 1);
    clrt_tensor_release(a), clrt_tensor_release(b), clrt_tensor_release(i), clrt_tensor_release(u);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("tensor");
    struct {
        const char *name;
        const TTest *tests[10];
    } cases[] = {
        {"creation", {zeros_ones_full, full_int_dtypes, scalar_and_empty_shapes}},
        {"poison", {empty_is_poisoned}},
        {"host_io",
         {round_trip_every_dtype, copy_from_host_forms, item_of_every_dtype, clone_is_independent}},
        {"print", {print_small, print_wraps_long_rows, print_elides_large, print_to_a_full_device}},
        {"lifetime",
         {refcounts, reshape_views_share_storage, reshape_errors_show_shapes, names_and_accessors}},
        {"random",
         {philox_known_answers, rand_matches_host_philox, rand_same_seed_same_numbers,
          randn_matches_box_muller, randn_statistics}},
        {"errors", {bad_shapes_and_devices, allocation_beyond_the_device_limit, to_host_too_small}},
        {"add", {add_matches_float64, add_int32, add_errors}},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        TCase *tc = tu_tcase(cases[c].name);
        tcase_set_timeout(tc, 120);
        if (strcmp(cases[c].name, "poison") == 0) /* needs ctest's environment */
            tcase_set_tags(tc, TU_MAY_SKIP);
        for (int t = 0; t < 10 && cases[c].tests[t]; t++)
            tcase_add_test(tc, cases[c].tests[t]);
        suite_add_tcase(s, tc);
    }
    return tu_run(s);
}
