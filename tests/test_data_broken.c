/* Fashion-MNIST loader on small IDX files made here, good and broken,
 * plain and gzipped: good ones load exactly, broken ones fail with an error
 * that names the file and the fault, never a crash or a leak. */
#include "test_data_files.h"

#include <sys/resource.h>
#include <sys/stat.h>

#define SIDE 28
#define PIXELS (SIDE * SIDE)
#define IMAGES "train-images-idx3-ubyte"
#define LABELS "train-labels-idx1-ubyte"

/* The bytes of an images file and a labels file. */
typedef struct {
    unsigned char *img, *lab;
    size_t img_len, lab_len;
} idx_files;

/* n random 28x28 images and labels i % 10, as valid IDX files; `extra`
 * spare bytes are allocated after the images for tests that append. */
static idx_files make_files(uint32_t n, uint64_t *rng, size_t extra)
{
    idx_files f = {malloc(16 + (size_t)n * PIXELS + extra), malloc(8 + n + extra),
                   16 + (size_t)n * PIXELS, 8 + n};
    ck_assert(f.img && f.lab);
    tdf_be32(f.img, 0x803);
    tdf_be32(f.img + 4, n);
    tdf_be32(f.img + 8, SIDE);
    tdf_be32(f.img + 12, SIDE);
    for (size_t i = 16; i < f.img_len + extra; i++)
        f.img[i] = (unsigned char)tu_next(rng);
    tdf_be32(f.lab, 0x801);
    tdf_be32(f.lab + 4, n);
    for (uint32_t i = 0; i < n + extra; i++)
        f.lab[8 + i] = (unsigned char)(i % 10);
    return f;
}

static void free_files(idx_files *f)
{
    free(f->img);
    free(f->lab);
}

/* Writes both files into dir, each gzipped when its flag says so. */
static void write_files(const char *dir, const idx_files *f, int gz_img, int gz_lab)
{
    tdf_write(dir, IMAGES, f->img, f->img_len);
    tdf_write(dir, LABELS, f->lab, f->lab_len);
    if (gz_img)
        tdf_gzip(dir, IMAGES);
    if (gz_lab)
        tdf_gzip(dir, LABELS);
}

/* Loading dir fails with `want`; the message names `file` (.gz added when
 * gz) and contains `fault`. */
static void expect_failure(const char *dir, const char *file, int gz, clrt_status want,
                           const char *fault)
{
    char name[64];
    snprintf(name, sizeof name, "%s%s", file, gz ? ".gz" : "");
    tdf_expect_failure(clrt_dataset_fashion_mnist, dir, name, want, fault);
}

/* _i: 0 plain files, 1 both gzipped, 2 images gzipped only. */
START_TEST(test_good_files)
{
    char dir[256];
    uint64_t rng = tu_seed() + (uint64_t)_i;
    tdf_mkdtemp(dir, sizeof dir);
    idx_files f = make_files(13, &rng, 0);
    write_files(dir, &f, _i >= 1, _i == 1);
    clrt_dataset *ds = TU_NONNULL(clrt_dataset_fashion_mnist(dir, 1));
    ck_assert_int_eq(clrt_dataset_size(ds), 13);
    int64_t idx[13];
    int32_t y[13];
    float *x = tdf_nan_floats(13 * PIXELS);
    double ref[13 * PIXELS];
    for (int i = 0; i < 13; i++)
        idx[i] = 12 - i;
    TU_OK(clrt_dataset_gather(ds, idx, 13, x, y));
    for (int i = 0; i < 13; i++) {
        ck_assert_int_eq(y[i], (12 - i) % 10);
        for (int j = 0; j < PIXELS; j++)
            ref[i * PIXELS + j] = f.img[16 + (12 - i) * PIXELS + j] / 255.0;
    }
    double err = tu_rel_err(x, ref, 13 * PIXELS, 1.0);
    ck_assert_msg(err <= 6e-8, "relative error %.3g > 6e-8", err);
    free(x);
    clrt_dataset_free(ds);
    free_files(&f);
    tdf_rmdir(dir);
}
END_TEST

START_TEST(test_gz_preferred_over_plain)
{
    char dir[256];
    uint64_t rng = tu_seed();
    tdf_mkdtemp(dir, sizeof dir);
    idx_files small = make_files(3, &rng, 0), big = make_files(4, &rng, 0);
    write_files(dir, &big, 1, 1);
    write_files(dir, &small, 0, 0);
    clrt_dataset *ds = TU_NONNULL(clrt_dataset_fashion_mnist(dir, 1));
    ck_assert_int_eq(clrt_dataset_size(ds), 4);
    clrt_dataset_free(ds);
    free_files(&small);
    free_files(&big);
    tdf_rmdir(dir);
}
END_TEST

START_TEST(test_missing_files)
{
    char dir[256], both[600];
    uint64_t rng = tu_seed();
    tdf_mkdtemp(dir, sizeof dir);
    clrt_clear_error();
    ck_assert_ptr_null(clrt_dataset_fashion_mnist(dir, 1));
    snprintf(both, sizeof both, "%s/" IMAGES ".gz or %s/" IMAGES, dir, dir);
    tu_assert_error(CLRT_EIO, both, "No such file", NULL);

    idx_files f = make_files(2, &rng, 0);
    tdf_write(dir, IMAGES, f.img, f.img_len); /* labels missing */
    ck_assert_ptr_null(clrt_dataset_fashion_mnist(dir, 1));
    tu_assert_error(CLRT_EIO, LABELS ".gz", "No such file", NULL);

    ck_assert_ptr_null(clrt_dataset_fashion_mnist(dir, 0)); /* no t10k-* at all */
    tu_assert_error(CLRT_EIO, "t10k-images-idx3-ubyte", NULL);
    ck_assert_ptr_null(clrt_dataset_fashion_mnist("/nonexistent/folder", 1));
    tu_assert_error(CLRT_EIO, "/nonexistent/folder/" IMAGES, NULL);
    free_files(&f);
    tdf_rmdir(dir);
}
END_TEST

/* Each fault in turn, plain (_i 0) and gzipped (_i 1). */
START_TEST(test_header_faults)
{
    char dir[256];
    uint64_t rng = tu_seed();
    int gz = _i;
    tdf_mkdtemp(dir, sizeof dir);

    idx_files f = make_files(5, &rng, 0);
    tdf_be32(f.img, 0x804);
    write_files(dir, &f, gz, gz);
    expect_failure(dir, IMAGES, gz, CLRT_EFORMAT, "wrong magic number 0x00000804");

    tdf_be32(f.img, 0x803);
    tdf_be32(f.lab, 0x803); /* an images magic on the labels file */
    write_files(dir, &f, gz, gz);
    expect_failure(dir, LABELS, gz, CLRT_EFORMAT, "wrong magic number 0x00000803");

    tdf_be32(f.lab, 0x801);
    tdf_be32(f.img + 8, 27);
    write_files(dir, &f, gz, gz);
    expect_failure(dir, IMAGES, gz, CLRT_EFORMAT, "dimension 1 is 27, expected 28");

    tdf_be32(f.img + 8, 28);
    tdf_be32(f.img + 12, 0);
    write_files(dir, &f, gz, gz);
    expect_failure(dir, IMAGES, gz, CLRT_EFORMAT, "dimension 2 is 0, expected 28");

    f.img_len = 10;
    write_files(dir, &f, gz, gz);
    expect_failure(dir, IMAGES, gz, CLRT_EFORMAT, "too short for an IDX header");
    f.img_len = 0;
    write_files(dir, &f, gz, gz);
    expect_failure(dir, IMAGES, gz, CLRT_EFORMAT, "0 bytes");
    free_files(&f);
    tdf_rmdir(dir);
}
END_TEST

START_TEST(test_size_faults)
{
    char dir[256];
    uint64_t rng = tu_seed();
    int gz = _i;
    tdf_mkdtemp(dir, sizeof dir);

    idx_files f = make_files(5, &rng, 64);
    f.img_len -= 100; /* part of the last image gone */
    write_files(dir, &f, gz, gz);
    expect_failure(dir, IMAGES, gz, CLRT_EFORMAT, "truncated: the header announces 5 images");

    f.img_len += 103; /* three bytes too many */
    write_files(dir, &f, gz, gz);
    expect_failure(dir, IMAGES, gz, CLRT_EFORMAT, "3 more than the header's 5 images");

    f.img_len -= 3;
    tdf_be32(f.img + 4, 0xFFFFFFFFu); /* a huge count: no huge allocation, an error */
    write_files(dir, &f, gz, gz);
    expect_failure(dir, IMAGES, gz, CLRT_EFORMAT, "truncated: the header announces 4294967295");

    tdf_be32(f.img + 4, 5);
    f.lab_len -= 1;
    write_files(dir, &f, gz, gz);
    expect_failure(dir, LABELS, gz, CLRT_EFORMAT, "truncated");

    tdf_be32(f.lab + 4, 4); /* a consistent labels file with one label fewer */
    write_files(dir, &f, gz, gz);
    expect_failure(dir, LABELS, gz, CLRT_EFORMAT, "holds 4 labels but");
    ck_assert(strstr(clrt_last_error(), IMAGES) && strstr(clrt_last_error(), "holds 5 images"));

    tdf_be32(f.lab + 4, 5);
    f.lab_len += 1;
    f.lab[8 + 3] = 11;
    write_files(dir, &f, gz, gz);
    expect_failure(dir, LABELS, gz, CLRT_EFORMAT, "label 11 at index 3 is outside 0..9");
    free_files(&f);
    tdf_rmdir(dir);
}
END_TEST

/* How many times needle occurs in hay. */
static int occurrences(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)) != NULL; p += strlen(needle))
        n++;
    return n;
}

START_TEST(test_broken_gzip)
{
    char dir[256];
    uint64_t rng = tu_seed();
    tdf_mkdtemp(dir, sizeof dir);
    idx_files f = make_files(7, &rng, 0);

    write_files(dir, &f, 1, 1);
    tdf_truncate(dir, IMAGES ".gz", tdf_size(dir, IMAGES ".gz") / 2);
    expect_failure(dir, IMAGES, 1, CLRT_EFORMAT, "gzip data ends early");

    write_files(dir, &f, 1, 1);
    unsigned char junk[64];
    for (size_t i = 0; i < sizeof junk; i++)
        junk[i] = (unsigned char)tu_next(&rng);
    tdf_patch(dir, IMAGES ".gz", tdf_size(dir, IMAGES ".gz") / 2, junk, sizeof junk);
    expect_failure(dir, IMAGES, 1, CLRT_EFORMAT, "gzip data");
    char path[400]; /* named once (issue 14: zlib's message repeated it) */
    tdf_join(path, sizeof path, dir, IMAGES ".gz");
    ck_assert_msg(occurrences(clrt_last_error(), path) == 1, "path repeated: %s",
                  clrt_last_error());

    write_files(dir, &f, 1, 1);
    tdf_truncate(dir, LABELS ".gz", tdf_size(dir, LABELS ".gz") - 4); /* trailer cut */
    expect_failure(dir, LABELS, 1, CLRT_EFORMAT, "gzip data ends early");
    free_files(&f);
    tdf_rmdir(dir);
}
END_TEST

START_TEST(test_not_a_file)
{
    char dir[256], sub[400];
    tdf_mkdtemp(dir, sizeof dir);
    tdf_join(sub, sizeof sub, dir, IMAGES ".gz");
    ck_assert_int_eq(mkdir(sub, 0700), 0);
    expect_failure(dir, IMAGES, 1, CLRT_EIO, "not a regular file");

    char longdir[5000];
    memset(longdir, 'a', sizeof longdir - 1);
    longdir[sizeof longdir - 1] = '\0';
    ck_assert_ptr_null(clrt_dataset_fashion_mnist(longdir, 1));
    tu_assert_error(CLRT_EINVAL, "path too long", NULL);
    tdf_rmdir(dir);
}
END_TEST

/* Random cuts and byte flips of small valid files, plain and gzipped:
 * every load either succeeds with a consistent data set or fails with
 * CLRT_EFORMAT; never a crash (ASan builds check reads and leaks). */
START_TEST(test_random_damage)
{
    char dir[256];
    uint64_t rng = tu_seed();
    tdf_mkdtemp(dir, sizeof dir);
    for (int trial = 0; trial < 60; trial++) {
        idx_files f = make_files(3, &rng, 0);
        unsigned char *target = trial % 2 ? f.lab : f.img;
        size_t *len = trial % 2 ? &f.lab_len : &f.img_len;
        if (trial % 3 == 0)
            *len = (size_t)(tu_next(&rng) % *len);
        else
            target[tu_next(&rng) % (trial % 2 ? 8 + 3 : 24)] ^= (unsigned char)(1 + trial);
        int gz = trial % 4 < 2;
        write_files(dir, &f, gz, gz);
        clrt_clear_error();
        clrt_dataset *ds = clrt_dataset_fashion_mnist(dir, 1);
        if (ds) {
            ck_assert_int_eq(clrt_dataset_size(ds), 3);
            clrt_dataset_free(ds);
        } else {
            tu_assert_error(CLRT_EFORMAT, dir, NULL);
        }
        free_files(&f);
        tdf_rmdir(dir);
        ck_assert_int_eq(mkdir(dir, 0700), 0);
    }
    tdf_rmdir(dir);
}
END_TEST

/* Issue 14, defect 6: an empty folder name is an error, not "/". */
START_TEST(test_empty_folder_name)
{
    ck_assert_ptr_null(clrt_dataset_fashion_mnist("", 1));
    tu_assert_error(CLRT_EINVAL, "empty", NULL);
    ck_assert_ptr_null(clrt_dataset_cifar10("", 0));
    tu_assert_error(CLRT_EINVAL, "empty", NULL);
}
END_TEST

/* `data` gzip-compressed (a gzip file may hold several such members, which
 * readers inflate one after another): malloc'ed, *len its size. */
static unsigned char *gzip_member(const char *dir, const unsigned char *data, size_t n, size_t *len)
{
    tdf_write(dir, "member", data, n);
    tdf_gzip(dir, "member");
    char path[4096];
    tdf_join(path, sizeof path, dir, "member.gz");
    *len = (size_t)tdf_size(dir, "member.gz");
    unsigned char *gz = malloc(*len);
    FILE *in = fopen(path, "rb");
    ck_assert(gz && in && fread(gz, 1, *len, in) == *len);
    fclose(in);
    unlink(path);
    return gz;
}

static long max_rss_kib(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss;
}

/* Issue 14, defect 5: a 5 MB gzip file that inflates to 1.2 GB (more than
 * the 1 GiB cap on data files) fails once the cap is passed, without
 * buffering more than the cap. Before, the buffer grew by doubling from
 * twice the file's size and the cap was checked only when it filled: this
 * file was read whole (about 1.3 GB). */
START_TEST(test_gzip_bomb_stops_at_the_cap)
{
    char dir[256], path[400];
    uint64_t rng = tu_seed();
    tdf_mkdtemp(dir, sizeof dir);
    tdf_join(path, sizeof path, dir, IMAGES ".gz");
    FILE *out = fopen(path, "wb");
    ck_assert_ptr_nonnull(out);
    size_t noise = 5u << 20, zeros = 16u << 20, len; /* 5 MB that do not compress, then zeros */
    unsigned char *buf = malloc(zeros);
    ck_assert_ptr_nonnull(buf);
    for (size_t i = 0; i < noise; i++)
        buf[i] = (unsigned char)tu_next(&rng);
    unsigned char *member = gzip_member(dir, buf, noise, &len);
    ck_assert_uint_eq(fwrite(member, 1, len, out), len);
    free(member);
    memset(buf, 0, zeros);
    member = gzip_member(dir, buf, zeros, &len);
    for (int i = 0; i < 72; i++) /* 72 * 16 MiB = 1.2 GB */
        ck_assert_uint_eq(fwrite(member, 1, len, out), len);
    free(member);
    free(buf);
    ck_assert_int_eq(fclose(out), 0);
    long before = max_rss_kib();
    ck_assert_ptr_null(clrt_dataset_fashion_mnist(dir, 1));
    tu_assert_error(CLRT_EFORMAT, path, "more than 1073741824 bytes", NULL);
#ifndef __SANITIZE_ADDRESS__ /* ASan's shadow memory and quarantine add their own */
    long grown = max_rss_kib() - before;
    ck_assert_msg(grown < (1L << 20) + (64L << 10), "peak RSS grew by %ld KiB reading it", grown);
#endif
    (void)before;
    tdf_rmdir(dir);
}
END_TEST

static Suite *broken_suite(void)
{
    Suite *s = suite_create("data_broken");
    TCase *tc = tu_tcase("idx files");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_good_files, 0, 3);
    tcase_add_test(tc, test_gz_preferred_over_plain);
    tcase_add_test(tc, test_missing_files);
    tcase_add_loop_test(tc, test_header_faults, 0, 2);
    tcase_add_loop_test(tc, test_size_faults, 0, 2);
    tcase_add_test(tc, test_broken_gzip);
    tcase_add_test(tc, test_not_a_file);
    tcase_add_test(tc, test_random_damage);
    tcase_add_test(tc, test_empty_folder_name);
    tcase_add_test(tc, test_gzip_bomb_stops_at_the_cap);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return tu_run(broken_suite()); }
