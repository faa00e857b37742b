/* Training-time augmentation of gathered batches on the host: a random crop
 * of the image zero-padded by `pad` pixels on every side, then a random
 * horizontal flip (torchvision's RandomCrop(size, padding=pad) and
 * RandomHorizontalFlip() on pixels, before normalisation: the padding is
 * a black pixel's normalised value). Each sample's offsets and flip come
 * from (seed, sample index) alone, so a run is reproducible whatever the
 * batch size, device count or shard. Runs while the device computes the
 * previous batch: nothing waits for it. */
#include "runtime/data/dataset_internal.h"
#include "runtime/core/alloc_internal.h"

#include <string.h>

static uint64_t mix(uint64_t a, uint64_t b)
{
    uint64_t z = a ^ (b * 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* One image [C, H, W] into out, shifted by (dy, dx) inside its padded
 * frame and mirrored when flip. */
static void crop_flip(const float *in, float *out, const int64_t chw[3], int dy, int dx, int flip,
                      float fill)
{
    int64_t H = chw[1], W = chw[2];
    for (int64_t c = 0; c < chw[0]; c++)
        for (int64_t y = 0; y < H; y++) {
            int64_t sy = y + dy;
            float *row = out + (c * H + y) * W;
            for (int64_t x = 0; x < W; x++) {
                int64_t sx = (flip ? W - 1 - x : x) + dx;
                int inside = sy >= 0 && sy < H && sx >= 0 && sx < W;
                row[x] = inside ? in[(c * H + sy) * W + sx] : fill;
            }
        }
}

clrt_status clrt__augment_crop_flip(const clrt_dataset *ds, float *x, int64_t n, const int64_t *ids,
                                    int pad, uint64_t seed)
{
    size_t per = clrt__sample_bytes(ds);
    float *tmp = clrt__malloc(per * sizeof *tmp);
    if (!tmp)
        return clrt__fail(CLRT_ENOMEM, "augmenting a batch: out of host memory");
    for (int64_t i = 0; i < n; i++) {
        uint64_t r = mix(seed, (uint64_t)ids[i]);
        int span = 2 * pad + 1;
        int dy = (int)(r % (uint64_t)span) - pad, dx = (int)((r >> 16) % (uint64_t)span) - pad;
        int flip = (int)((r >> 40) & 1);
        float *img = x + (size_t)i * per;
        memcpy(tmp, img, per * sizeof *tmp);
        crop_flip(tmp, img, ds->chw, dy, dx, flip, ds->normalised[0]);
    }
    free(tmp);
    return CLRT_OK;
}
