/* Training augmentation (random crop of the 4-pixel zero-padded image,
 * random horizontal flip), checked without knowing its generator: every
 * augmented image must be exactly one of the 162 crops-and-flips of its
 * source (a black padding), over many samples every one of them must
 * occur about equally often, the same (seed, sample) must give the same
 * image and another seed another one. */
#include "testutil.h"

#include "runtime/data/dataset_internal.h"
#include <string.h>

#define C 3
#define H 8
#define W 9
#define PAD 4
#define PER (C * H * W)

/* A data set of n samples of distinct pixel bytes (so no two crops of a
 * sample coincide unless they are the same crop). */
static clrt_dataset *make_set(int n, uint64_t *rng)
{
    static const char *const names[2] = {"a", "b"};
    int64_t chw[3] = {C, H, W};
    clrt_dataset *ds = TU_NONNULL(clrt__dataset_new("augment-test", chw, 2, names, 0.5, 0.25));
    ds->pixels = malloc((size_t)n * PER);
    ds->labels = calloc((size_t)n, 1);
    for (int i = 0; i < n * PER; i++)
        ds->pixels[i] = (uint8_t)(1 + tu_next(rng) % 255); /* never black */
    ds->size = n;
    return ds;
}

/* The crop (dy, dx, flip) of source image `src` (normalised floats). */
static void reference_crop(const clrt_dataset *ds, const float *src, int dy, int dx, int flip,
                           float *out)
{
    for (int c = 0; c < C; c++)
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++) {
                int sy = y + dy, sx = (flip ? W - 1 - x : x) + dx;
                int in = sy >= 0 && sy < H && sx >= 0 && sx < W;
                out[(c * H + y) * W + x] = in ? src[(c * H + sy) * W + sx] : ds->normalised[0];
            }
}

/* Which of the 162 crops img is (0..161), or -1 if none. */
static int which_crop(const clrt_dataset *ds, const float *src, const float *img)
{
    float cand[PER];
    for (int k = 0; k < 162; k++) {
        int dy = k % 9 - PAD, dx = k / 9 % 9 - PAD, flip = k / 81;
        reference_crop(ds, src, dy, dx, flip, cand);
        if (memcmp(cand, img, sizeof cand) == 0)
            return k;
    }
    return -1;
}

START_TEST(every_image_is_a_crop_and_all_crops_occur)
{
    uint64_t rng = tu_seed();
    const int n = 8100; /* 50 per crop on average */
    clrt_dataset *ds = make_set(n, &rng);
    int64_t *ids = malloc(n * sizeof *ids);
    float *src = malloc((size_t)n * PER * sizeof *src), *x = malloc((size_t)n * PER * sizeof *x);
    int32_t *y = malloc(n * sizeof *y);
    for (int i = 0; i < n; i++)
        ids[i] = i;
    TU_OK(clrt_dataset_gather(ds, ids, n, src, y));
    memcpy(x, src, (size_t)n * PER * sizeof *x);
    uint64_t seed = tu_next(&rng);
    TU_OK(clrt__augment_crop_flip(ds, x, n, ids, PAD, seed));
    int count[162] = {0};
    for (int i = 0; i < n; i++) {
        int k = which_crop(ds, src + (size_t)i * PER, x + (size_t)i * PER);
        ck_assert_msg(k >= 0, "sample %d is no crop-and-flip of its source", i);
        count[k]++;
    }
    /* Binomial(8100, 1/162): mean 50, sd 7, skewed to the right; any of the
     * 162 counts outside [12, 96] has probability 4e-7 (15..85 had 3.5e-4). */
    for (int k = 0; k < 162; k++)
        ck_assert_msg(count[k] >= 12 && count[k] <= 96, "crop %d occurred %d times in %d", k,
                      count[k], n);
    free(ids);
    free(src);
    free(x);
    free(y);
    clrt_dataset_free(ds);
}
END_TEST

/* The same (seed, sample) gives the same image in any batch; another seed
 * moves most images. */
START_TEST(keyed_by_seed_and_sample)
{
    uint64_t rng = tu_seed() + 1;
    const int n = 64;
    clrt_dataset *ds = make_set(n, &rng);
    int64_t ids[64], rev[64];
    for (int i = 0; i < n; i++)
        ids[i] = i, rev[i] = n - 1 - i;
    float *a = malloc(n * PER * sizeof *a), *b = malloc(n * PER * sizeof *b);
    float *c = malloc(n * PER * sizeof *c);
    int32_t y[64];
    TU_OK(clrt_dataset_gather(ds, ids, n, a, y));
    TU_OK(clrt_dataset_gather(ds, rev, n, b, y));
    TU_OK(clrt_dataset_gather(ds, ids, n, c, y));
    TU_OK(clrt__augment_crop_flip(ds, a, n, ids, PAD, 7));
    TU_OK(clrt__augment_crop_flip(ds, b, n, rev, PAD, 7));
    TU_OK(clrt__augment_crop_flip(ds, c, n, ids, PAD, 8));
    int moved = 0;
    for (int i = 0; i < n; i++) {
        ck_assert_int_eq(memcmp(a + i * PER, b + (n - 1 - i) * PER, PER * sizeof *a), 0);
        moved += memcmp(a + i * PER, c + i * PER, PER * sizeof *a) != 0;
    }
    ck_assert_int_ge(moved, n * 9 / 10);
    free(a);
    free(b);
    free(c);
    clrt_dataset_free(ds);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("augment");
    TCase *tc = tu_tcase("augment");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, every_image_is_a_crop_and_all_crops_occur);
    tcase_add_test(tc, keyed_by_seed_and_sample);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
