/* Binary elementwise ops (add/sub/mul/div: new, _out, in place, with
 * broadcasting, float32 and int32), scalar ops and axpy, against float64
 * references on fresh random inputs. */
#include "test_elementwise_util.h"

/* IEEE +, -, * are correctly rounded: within half an ulp (2^-24 relative)
 * of the exact result, which float64 holds exactly. OpenCL 1.2 allows
 * float division 2.5 ulp. Bounds below carry a little margin. */
#define BOUND_ADD_MUL 1.2e-7
#define BOUND_DIV 3.5e-7

typedef clrt_tensor *(*binary_new_fn)(clrt_tensor *, clrt_tensor *);
typedef clrt_status (*binary_out_fn)(clrt_tensor *, clrt_tensor *, clrt_tensor *);
typedef clrt_status (*binary_inplace_fn)(clrt_tensor *, clrt_tensor *);

typedef struct {
    char op;
    const char *name;
    binary_new_fn fnew;
    binary_out_fn fout;
    binary_inplace_fn finplace;
    double bound;
} binary_case;

static const binary_case ops[] = {
    {'+', "add", clrt_add, clrt_add_out, clrt_add_, BOUND_ADD_MUL},
    {'-', "sub", clrt_sub, clrt_sub_out, clrt_sub_, BOUND_ADD_MUL},
    {'*', "mul", clrt_mul, clrt_mul_out, clrt_mul_, BOUND_ADD_MUL},
    {'/', "div", clrt_div, clrt_div_out, clrt_div_, BOUND_DIV},
};

static double apply(char op, double x, double y)
{
    switch (op) {
    case '+':
        return x + y;
    case '-':
        return x - y;
    case '*':
        return x * y;
    default:
        return x / y;
    }
}

/* float64 reference of a (op) b broadcast to (on, osh). */
static double *reference(char op, const float *a, int an, const int64_t *ash, const float *b,
                         int bn, const int64_t *bsh, int on, const int64_t *osh)
{
    int64_t n = eu_numel(on, osh);
    double *ref = malloc((size_t)(n ? n : 1) * sizeof *ref);
    for (int64_t o = 0; o < n; o++)
        ref[o] = apply(op, a[eu_bcast_index(o, on, osh, an, ash)],
                       b[eu_bcast_index(o, on, osh, bn, bsh)]);
    return ref;
}

/* Divisors away from zero so the quotient stays well conditioned. */
static float *random_divisors(uint64_t *rng, size_t n)
{
    float *x = tu_random_floats(rng, n, 0.5, 2.0);
    for (size_t i = 0; i < n; i++)
        if (tu_next(rng) & 1)
            x[i] = -x[i];
    return x;
}

static void check_tensor(const char *what, const clrt_tensor *t, int on, const int64_t *osh,
                         const double *ref, double bound)
{
    ck_assert_int_eq(clrt_tensor_ndim(t), on);
    for (int i = 0; i < on; i++)
        ck_assert_int_eq(clrt_tensor_shape(t)[i], osh[i]);
    float *got = tu_read(t);
    eu_assert_close(what, got, ref, (size_t)eu_numel(on, osh), bound, 1e-30);
    free(got);
}

/* Runs every op in every form on one pair of shapes. */
static void check_shapes(int an, const int64_t *ash, int bn, const int64_t *bsh, int on,
                         const int64_t *osh)
{
    clrt_device *d = tu_device();
    uint64_t rng = tu_seed() ^ (uint64_t)(an * 131 + bn * 7 + eu_numel(on, osh));
    char what[160];
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
        const binary_case *c = &ops[k];
        float *ha = tu_random_floats(&rng, (size_t)eu_numel(an, ash), -1, 1);
        float *hb = c->op == '/' ? random_divisors(&rng, (size_t)eu_numel(bn, bsh))
                                 : tu_random_floats(&rng, (size_t)eu_numel(bn, bsh), -1, 1);
        clrt_tensor *a = eu_upload(d, an, ash, ha), *b = eu_upload(d, bn, bsh, hb);
        double *ref = reference(c->op, ha, an, ash, hb, bn, bsh, on, osh);

        snprintf(what, sizeof what, "clrt_%s (new), out numel %lld", c->name,
                 (long long)eu_numel(on, osh));
        clrt_tensor *r = TU_NONNULL(c->fnew(a, b));
        check_tensor(what, r, on, osh, ref, c->bound);

        snprintf(what, sizeof what, "clrt_%s_out", c->name);
        clrt_tensor *out = eu_poisoned(d, CLRT_F32, on, osh);
        TU_OK(c->fout(out, a, b));
        check_tensor(what, out, on, osh, ref, c->bound);

        if (eu_numel(an, ash) == eu_numel(on, osh) && an == on) {
            snprintf(what, sizeof what, "clrt_%s_ (in place)", c->name);
            TU_OK(c->finplace(a, b));
            check_tensor(what, a, on, osh, ref, c->bound);
        }
        clrt_tensor_release(r);
        clrt_tensor_release(out);
        clrt_tensor_release(a);
        clrt_tensor_release(b);
        free(ha);
        free(hb);
        free(ref);
    }
}

static void check_same_shape(int64_t n) { check_shapes(1, &n, 1, &n, 1, &n); }

START_TEST(test_same_shape_sizes)
{
    /* 1, primes, non-multiples of any work-group size, one large size. */
    const int64_t sizes[] = {1, 7, 97, 257, 1009, 4099, TU_LARGE};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        check_same_shape(sizes[i]);
}
END_TEST

START_TEST(test_broadcast_bias_row)
{
    /* A trailing bias row [F] onto [N, F] (linear layers), both orders. */
    check_shapes(2, EU_SHAPE(37, 129), 1, EU_SHAPE(129), 2, EU_SHAPE(37, 129));
    check_shapes(1, EU_SHAPE(129), 2, EU_SHAPE(37, 129), 2, EU_SHAPE(37, 129));
    check_shapes(2, EU_SHAPE(TU_SIZED(256, 7), 1000), 1, EU_SHAPE(1000), 2,
                 EU_SHAPE(TU_SIZED(256, 7), 1000));
    check_shapes(2, EU_SHAPE(1, 13), 1, EU_SHAPE(13), 2, EU_SHAPE(1, 13));
}
END_TEST

START_TEST(test_broadcast_column_and_scalars)
{
    check_shapes(2, EU_SHAPE(41, 23), 2, EU_SHAPE(41, 1), 2, EU_SHAPE(41, 23));
    check_shapes(2, EU_SHAPE(41, 1), 2, EU_SHAPE(41, 23), 2, EU_SHAPE(41, 23));
    check_shapes(2, EU_SHAPE(19, 31), 1, EU_SHAPE(1), 2, EU_SHAPE(19, 31));
    check_shapes(2, EU_SHAPE(19, 31), 0, NULL, 2, EU_SHAPE(19, 31));
    check_shapes(0, NULL, 2, EU_SHAPE(19, 31), 2, EU_SHAPE(19, 31));
    check_shapes(0, NULL, 0, NULL, 0, NULL);
    check_shapes(1, EU_SHAPE(1), 0, NULL, 1, EU_SHAPE(1));
    check_shapes(1, EU_SHAPE(TU_LARGE), 1, EU_SHAPE(1), 1, EU_SHAPE(TU_LARGE));
}
END_TEST

START_TEST(test_broadcast_nd)
{
    /* Conv bias [C, 1, 1] onto [N, C, H, W]. */
    check_shapes(4, EU_SHAPE(3, 5, 7, 9), 3, EU_SHAPE(5, 1, 1), 4, EU_SHAPE(3, 5, 7, 9));
    /* Outer product of a column and a row. */
    check_shapes(2, EU_SHAPE(17, 1), 2, EU_SHAPE(1, 33), 2, EU_SHAPE(17, 33));
    /* Shapes that merge to no fewer than 4 dims: leading dims folded into z. */
    check_shapes(4, EU_SHAPE(3, 1, 5, 1), 4, EU_SHAPE(1, 4, 1, 6), 4, EU_SHAPE(3, 4, 5, 6));
    check_shapes(5, EU_SHAPE(2, 1, 3, 1, 5), 5, EU_SHAPE(1, 4, 1, 6, 1), 5,
                 EU_SHAPE(2, 4, 3, 6, 5));
    /* Large divisors for the multiply-shift index decomposition. */
    int64_t div = TU_SIZED(65537, 4099);
    check_shapes(4, EU_SHAPE(3, 1, 2, 1), 4, EU_SHAPE(1, 2, 1, div), 4, EU_SHAPE(3, 2, 2, div));
    if (!tu_small()) { /* a million elements each: for fast devices */
        check_shapes(4, EU_SHAPE(1, 2, 1, 499979), 4, EU_SHAPE(2, 1, 2, 1), 4,
                     EU_SHAPE(2, 2, 2, 499979));
        /* Grids past 65535 groups along z: the same decomposition. */
        check_shapes(5, EU_SHAPE(300, 1, 300, 1, 2), 5, EU_SHAPE(1, 2, 1, 3, 1), 5,
                     EU_SHAPE(300, 2, 300, 3, 2));
        check_shapes(3, EU_SHAPE(70000, 2, 3), 2, EU_SHAPE(2, 1), 3, EU_SHAPE(70000, 2, 3));
    }
    /* Size-1 dims only: same element count, different ranks. */
    check_shapes(2, EU_SHAPE(1, 6), 1, EU_SHAPE(6), 2, EU_SHAPE(1, 6));
    check_shapes(3, EU_SHAPE(2, 1, 3), 2, EU_SHAPE(2, 1), 3, EU_SHAPE(2, 2, 3));
    /* Empty result. */
    check_shapes(2, EU_SHAPE(0, 3), 1, EU_SHAPE(3), 2, EU_SHAPE(0, 3));
}
END_TEST

START_TEST(test_out_may_alias_input)
{
    clrt_device *d = tu_device();
    uint64_t rng = tu_seed() + 11;
    const int64_t shape[2] = {13, 61};
    float *ha, *hb;
    clrt_tensor *a = eu_random(d, &rng, 2, shape, -1, 1, &ha);
    clrt_tensor *b = eu_random(d, &rng, 2, shape, -1, 1, &hb);
    double ref_a[13 * 61], ref_b[13 * 61];
    for (int i = 0; i < 13 * 61; i++) {
        ref_a[i] = (double)ha[i] * hb[i];
        ref_b[i] = (double)(float)ref_a[i] - hb[i];
    }
    TU_OK(clrt_mul_out(a, a, b)); /* a = a * b */
    TU_OK(clrt_sub_out(b, a, b)); /* b = a - b */
    float *ga = tu_read(a), *gb = tu_read(b);
    eu_assert_close("clrt_mul_out(a, a, b)", ga, ref_a, 13 * 61, BOUND_ADD_MUL, 1e-30);
    eu_assert_close("clrt_sub_out(b, a, b)", gb, ref_b, 13 * 61, BOUND_ADD_MUL, 1e-30);
    free(ga);
    free(gb);
    free(ha);
    free(hb);
    clrt_tensor_release(a);
    clrt_tensor_release(b);
}
END_TEST

/* C semantics for int32: division truncates toward zero; the library also
 * defines x / 0 = 0 and INT_MIN / -1 = INT_MIN (wrapping) instead of a trap. */
static int32_t int_ref(char op, int32_t x, int32_t y)
{
    if (op == '/') {
        if (y == 0)
            return 0;
        if (y == -1)
            return (int32_t)(0u - (uint32_t)x);
        return x / y;
    }
    return (int32_t)apply(op, x, y);
}

static clrt_tensor *upload_i32(clrt_device *d, int ndim, const int64_t *shape, const int32_t *v)
{
    return TU_NONNULL(clrt_from_host(d, CLRT_I32, ndim, shape, v));
}

static void check_int_case(clrt_device *d, const binary_case *c, int an, const int64_t *ash,
                           const int32_t *ha, int bn, const int64_t *bsh, const int32_t *hb, int on,
                           const int64_t *osh)
{
    int64_t n = eu_numel(on, osh);
    clrt_tensor *a = upload_i32(d, an, ash, ha), *b = upload_i32(d, bn, bsh, hb);
    clrt_tensor *out = eu_poisoned(d, CLRT_I32, on, osh);
    TU_OK(c->fout(out, a, b));
    int32_t *got = malloc((size_t)n * sizeof *got);
    TU_OK(clrt_to_host(out, got, (size_t)n * sizeof *got));
    int64_t bad = -1;
    for (int64_t o = 0; o < n && bad < 0; o++) {
        int32_t x = ha[eu_bcast_index(o, on, osh, an, ash)];
        int32_t y = hb[eu_bcast_index(o, on, osh, bn, bsh)];
        if (got[o] != int_ref(c->op, x, y))
            bad = o;
    }
    if (bad >= 0) {
        int32_t x = ha[eu_bcast_index(bad, on, osh, an, ash)];
        int32_t y = hb[eu_bcast_index(bad, on, osh, bn, bsh)];
        ck_abort_msg("int32 %d %c %d: got %d, want %d", x, c->op, y, got[bad],
                     int_ref(c->op, x, y));
    }
    free(got);
    clrt_tensor_release(a);
    clrt_tensor_release(b);
    clrt_tensor_release(out);
}

START_TEST(test_int32_arithmetic)
{
    clrt_device *d = tu_device();
    uint64_t rng = tu_seed() + 23;
    enum { N = 37, F = 257 };
    int32_t *ha = malloc(N * F * sizeof *ha), hb[F];
    for (int i = 0; i < N * F; i++)
        ha[i] = (int32_t)(tu_next(&rng) % 60001) - 30000;
    for (int i = 0; i < F; i++)
        hb[i] = (int32_t)(tu_next(&rng) % 201) - 100; /* includes 0, -1, negatives */
    hb[0] = 0;
    hb[1] = -1;
    hb[2] = 7;
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
        check_int_case(d, &ops[k], 2, EU_SHAPE(N, F), ha, 1, EU_SHAPE(F), hb, 2, EU_SHAPE(N, F));
        check_int_case(d, &ops[k], 1, EU_SHAPE(F), ha, 1, EU_SHAPE(F), hb, 1, EU_SHAPE(F));
    }
    /* Truncation toward zero and the edge cases, same shape. */
    const int32_t x[] = {-7, 7, -7, INT32_MIN, INT32_MIN, 5, INT32_MAX};
    const int32_t y[] = {2, -2, -2, -1, 1, 0, -1};
    check_int_case(d, &ops[3], 1, EU_SHAPE(7), x, 1, EU_SHAPE(7), y, 1, EU_SHAPE(7));
    /* The new-tensor form keeps int32. */
    clrt_tensor *a = upload_i32(d, 1, EU_SHAPE(7), x), *b = upload_i32(d, 1, EU_SHAPE(7), y);
    clrt_tensor *q = TU_NONNULL(clrt_div(a, b));
    ck_assert_int_eq(clrt_tensor_dtype(q), CLRT_I32);
    int32_t got[7];
    TU_OK(clrt_to_host(q, got, sizeof got));
    const int32_t want[] = {-3, -3, 3, INT32_MIN, INT32_MIN, 0, -INT32_MAX};
    for (int i = 0; i < 7; i++)
        ck_assert_int_eq(got[i], want[i]);
    clrt_tensor_release(q);
    clrt_tensor_release(a);
    clrt_tensor_release(b);
    free(ha);
}
END_TEST

START_TEST(test_scalar_ops_and_axpy)
{
    clrt_device *d = tu_device();
    uint64_t rng = tu_seed() + 31;
    const int64_t sizes[] = {1, 7, 1009, TU_LARGE};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        int64_t n = sizes[k];
        double s = tu_uniform(&rng, -3, 3), alpha = tu_uniform(&rng, -2, 2);
        float *hx, *hy;
        clrt_tensor *x = eu_random(d, &rng, 1, &n, -1, 1, &hx);
        clrt_tensor *y = eu_random(d, &rng, 1, &n, -1, 1, &hy);
        double *r_add = malloc((size_t)n * sizeof(double)), *r_mul = malloc((size_t)n * 8),
               *r_axpy = malloc((size_t)n * 8);
        float sf = (float)s, af = (float)alpha;
        for (int64_t i = 0; i < n; i++) {
            r_add[i] = (double)hx[i] + sf;
            r_mul[i] = (double)hx[i] * sf;
            r_axpy[i] = hy[i] + (double)af * hx[i];
        }
        clrt_tensor *ra = TU_NONNULL(clrt_add_scalar(x, s)),
                    *rm = TU_NONNULL(clrt_mul_scalar(x, s));
        float *g = tu_read(ra);
        eu_assert_close("clrt_add_scalar", g, r_add, (size_t)n, BOUND_ADD_MUL, 1e-30);
        free(g);
        g = tu_read(rm);
        eu_assert_close("clrt_mul_scalar", g, r_mul, (size_t)n, BOUND_ADD_MUL, 1e-30);
        free(g);
        /* Two roundings (alpha * x, then the add), each within 2^-24
         * relative: |err| <= 2^-24 (|alpha x| + |y + alpha x|), |alpha x| < 2. */
        TU_OK(clrt_axpy_(y, alpha, x));
        g = tu_read(y);
        eu_assert_close("clrt_axpy_", g, r_axpy, (size_t)n, 1.2e-7, 2.4e-7);
        free(g);
        TU_OK(clrt_mul_scalar_(x, s));
        g = tu_read(x);
        eu_assert_close("clrt_mul_scalar_", g, r_mul, (size_t)n, BOUND_ADD_MUL, 1e-30);
        free(g);
        TU_OK(clrt_add_scalar_(ra, -s)); /* (x + s) - s, from the rounded x + s */
        for (int64_t i = 0; i < n; i++)
            r_add[i] = (double)(float)r_add[i] - sf;
        g = tu_read(ra);
        eu_assert_close("clrt_add_scalar_", g, r_add, (size_t)n, BOUND_ADD_MUL, 1e-30);
        free(g);
        clrt_tensor_release(ra);
        clrt_tensor_release(rm);
        clrt_tensor_release(x);
        clrt_tensor_release(y);
        free(hx);
        free(hy);
        free(r_add);
        free(r_mul);
        free(r_axpy);
    }
}
END_TEST

/* A failed call leaves its inputs untouched. */
static void assert_unchanged(const clrt_tensor *t, const float *want, size_t n)
{
    float *got = tu_read(t);
    ck_assert_msg(memcmp(got, want, n * sizeof *got) == 0, "a failed call changed its input");
    free(got);
}

START_TEST(test_errors)
{
    clrt_device *d = tu_device();
    uint64_t rng = tu_seed() + 41;
    float *ha, *hb;
    clrt_tensor *a = eu_random(d, &rng, 2, EU_SHAPE(3, 4), -1, 1, &ha);
    clrt_tensor *b = eu_random(d, &rng, 1, EU_SHAPE(5), -1, 1, &hb);
    clrt_tensor *row = TU_NONNULL(clrt_zeros(d, CLRT_F32, 1, EU_SHAPE(4)));
    clrt_tensor *i = TU_NONNULL(clrt_zeros(d, CLRT_I32, 2, EU_SHAPE(3, 4)));
    clrt_tensor *u = TU_NONNULL(clrt_zeros(d, CLRT_U8, 2, EU_SHAPE(3, 4)));

    ck_assert_ptr_null(clrt_add(a, b));
    tu_assert_error(CLRT_ESHAPE, "clrt_add", "[3, 4]", "[5]", NULL);
    ck_assert_ptr_null(clrt_div(a, i));
    tu_assert_error(CLRT_EDTYPE, "clrt_div", "float32", "int32", NULL);
    ck_assert_ptr_null(clrt_mul(u, u));
    tu_assert_error(CLRT_EDTYPE, "uint8", NULL);
    ck_assert_ptr_null(clrt_sub(NULL, a));
    tu_assert_error(CLRT_EINVAL, "clrt_sub", "NULL", NULL);

    clrt_tensor *out = eu_poisoned(d, CLRT_F32, 2, EU_SHAPE(4, 3));
    ck_assert_int_eq(clrt_add_out(out, a, row), CLRT_ESHAPE);
    tu_assert_error(CLRT_ESHAPE, "clrt_add_out", "[4, 3]", "[3, 4]", NULL);
    ck_assert_int_eq(clrt_add_out(i, a, row), CLRT_EDTYPE);
    tu_assert_error(CLRT_EDTYPE, "clrt_add_out", "int32", "float32", NULL);
    ck_assert_int_eq(clrt_add_out(NULL, a, row), CLRT_EINVAL);

    /* In place may not grow a. */
    ck_assert_int_eq(clrt_mul_(row, a), CLRT_ESHAPE);
    tu_assert_error(CLRT_ESHAPE, "clrt_mul_", "[3, 4]", "[4]", NULL);
    ck_assert_int_eq(clrt_add_(a, b), CLRT_ESHAPE);
    assert_unchanged(a, ha, 12);

    ck_assert_ptr_null(clrt_add_scalar(i, 1.0));
    tu_assert_error(CLRT_EDTYPE, "clrt_add_scalar", "int32", NULL);
    ck_assert_int_eq(clrt_mul_scalar_(NULL, 2.0), CLRT_EINVAL);
    ck_assert_int_eq(clrt_axpy_(a, 1.0, row), CLRT_ESHAPE);
    tu_assert_error(CLRT_ESHAPE, "clrt_axpy_", "[3, 4]", "[4]", NULL);
    ck_assert_int_eq(clrt_axpy_(a, 1.0, i), CLRT_EDTYPE);
    assert_unchanged(a, ha, 12);

    clrt_tensor_release(out);
    clrt_tensor_release(a);
    clrt_tensor_release(b);
    clrt_tensor_release(row);
    clrt_tensor_release(i);
    clrt_tensor_release(u);
    free(ha);
    free(hb);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("elementwise");
    TCase *tc = tu_tcase("binary");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_same_shape_sizes);
    tcase_add_test(tc, test_broadcast_bias_row);
    tcase_add_test(tc, test_broadcast_column_and_scalars);
    tcase_add_test(tc, test_broadcast_nd);
    tcase_add_test(tc, test_out_may_alias_input);
    tcase_add_test(tc, test_int32_arithmetic);
    tcase_add_test(tc, test_scalar_ops_and_axpy);
    tcase_add_test(tc, test_errors);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
