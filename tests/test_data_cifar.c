/* CIFAR-10 loader on small binary files made here: records split over the
 * five training files in order, normalisation (x/255 - 0.5)/0.5, and
 * broken files refused with the file named. */
#include "test_data_files.h"

#define RECORD 3073
#define PIXELS 3072

/* Records per training file: fewer than the real 10000, unequal. */
static const int per_file[5] = {3, 1, 2, 4, 5};
#define TRAIN_RECORDS 15

/* n random records with labels (first + i) % 10; malloc'ed. */
static unsigned char *make_records(int n, int first, uint64_t *rng)
{
    unsigned char *r = malloc((size_t)n * RECORD);
    ck_assert_ptr_nonnull(r);
    for (int i = 0; i < n; i++) {
        r[(size_t)i * RECORD] = (unsigned char)((first + i) % 10);
        for (int j = 1; j < RECORD; j++)
            r[(size_t)i * RECORD + (size_t)j] = (unsigned char)tu_next(rng);
    }
    return r;
}

/* Writes data_batch_1..5.bin from all[] (TRAIN_RECORDS records), split as
 * per_file; file `gz_file` (1..5) is gzipped, 0 for none. */
static void write_train(const char *dir, const unsigned char *all, int gz_file)
{
    size_t at = 0;
    for (int f = 0; f < 5; f++) {
        char name[32];
        snprintf(name, sizeof name, "data_batch_%d.bin", f + 1);
        tdf_write(dir, name, all + at * RECORD, (size_t)per_file[f] * RECORD);
        if (gz_file == f + 1)
            tdf_gzip(dir, name);
        at += (size_t)per_file[f];
    }
}

/* The data set holds exactly the records of `raw`, in order. */
static void check_contents(clrt_dataset *ds, const unsigned char *raw, int n)
{
    int64_t *idx = malloc((size_t)n * sizeof *idx);
    int32_t *y = malloc((size_t)n * sizeof *y);
    float *x = tdf_nan_floats((size_t)n * PIXELS);
    double *ref = malloc((size_t)n * PIXELS * sizeof *ref);
    ck_assert(idx && y && ref);
    ck_assert_int_eq(clrt_dataset_size(ds), n);
    for (int i = 0; i < n; i++)
        idx[i] = i;
    TU_OK(clrt_dataset_gather(ds, idx, n, x, y));
    for (int i = 0; i < n; i++) {
        ck_assert_int_eq(y[i], raw[(size_t)i * RECORD]);
        for (int j = 0; j < PIXELS; j++)
            ref[(size_t)i * PIXELS + (size_t)j] =
                (raw[(size_t)i * RECORD + 1 + (size_t)j] / 255.0 - 0.5) / 0.5;
    }
    /* float rounding of values in [-1, 1]: half an ulp of 1. */
    double err = tu_rel_err(x, ref, (size_t)n * PIXELS, 1.0);
    ck_assert_msg(err <= 6e-8, "relative error %.3g > 6e-8", err);
    free(idx);
    free(y);
    free(x);
    free(ref);
}

/* _i: which training file is gzipped (0: none). */
START_TEST(test_train_split)
{
    char dir[256];
    uint64_t rng = tu_seed() + (uint64_t)_i;
    tdf_mkdtemp(dir, sizeof dir);
    unsigned char *all = make_records(TRAIN_RECORDS, 0, &rng);
    write_train(dir, all, _i);
    clrt_dataset *ds = TU_NONNULL(clrt_dataset_cifar10(dir, 1));
    int64_t chw[3];
    clrt_dataset_sample_shape(ds, chw);
    ck_assert(chw[0] == 3 && chw[1] == 32 && chw[2] == 32);
    ck_assert_str_eq(clrt_dataset_name(ds), "cifar10/train");
    ck_assert_int_eq(clrt_dataset_num_classes(ds), 10);
    ck_assert_str_eq(clrt_dataset_class_name(ds, 0), "airplane");
    ck_assert_str_eq(clrt_dataset_class_name(ds, 9), "truck");
    check_contents(ds, all, TRAIN_RECORDS);
    clrt_dataset_free(ds);
    free(all);
    tdf_rmdir(dir);
}
END_TEST

START_TEST(test_test_split)
{
    char dir[256];
    uint64_t rng = tu_seed();
    tdf_mkdtemp(dir, sizeof dir);
    unsigned char *recs = make_records(7, 4, &rng);
    tdf_write(dir, "test_batch.bin", recs, 7 * RECORD);
    clrt_dataset *ds = TU_NONNULL(clrt_dataset_cifar10(dir, 0));
    ck_assert_str_eq(clrt_dataset_name(ds), "cifar10/test");
    check_contents(ds, recs, 7);
    ck_assert_ptr_null(clrt_dataset_cifar10(dir, 1)); /* no training files here */
    tu_assert_error(CLRT_EIO, "data_batch_1.bin", NULL);
    clrt_dataset_free(ds);
    free(recs);
    tdf_rmdir(dir);
}
END_TEST

START_TEST(test_broken_files)
{
    char dir[256];
    uint64_t rng = tu_seed();
    tdf_mkdtemp(dir, sizeof dir);
    unsigned char *all = make_records(TRAIN_RECORDS, 0, &rng);
    tdf_loader load = clrt_dataset_cifar10;

    write_train(dir, all, 0);
    tdf_truncate(dir, "data_batch_3.bin", 2 * RECORD - 10);
    tdf_expect_failure(load, dir, "data_batch_3.bin", CLRT_EFORMAT,
                       "not a multiple of the 3073-byte record");

    write_train(dir, all, 0);
    tdf_truncate(dir, "data_batch_5.bin", 0);
    tdf_expect_failure(load, dir, "data_batch_5.bin", CLRT_EFORMAT, "empty file");

    write_train(dir, all, 0);
    unsigned char eleven = 11;
    tdf_patch(dir, "data_batch_4.bin", 2 * RECORD, &eleven, 1);
    tdf_expect_failure(load, dir, "data_batch_4.bin", CLRT_EFORMAT,
                       "label 11 of record 2 is outside 0..9");

    write_train(dir, all, 2);
    tdf_truncate(dir, "data_batch_2.bin.gz", tdf_size(dir, "data_batch_2.bin.gz") - 20);
    tdf_expect_failure(load, dir, "data_batch_2.bin.gz", CLRT_EFORMAT, "gzip data ends early");
    char path[400];
    tdf_join(path, sizeof path, dir, "data_batch_2.bin.gz");
    ck_assert_int_eq(remove(path), 0); /* it would be read instead of the plain one */

    write_train(dir, all, 0);
    tdf_join(path, sizeof path, dir, "data_batch_4.bin");
    ck_assert_int_eq(remove(path), 0);
    tdf_expect_failure(load, dir, "data_batch_4.bin", CLRT_EIO, "No such file");

    clrt_clear_error();
    ck_assert_ptr_null(clrt_dataset_cifar10(NULL, 1));
    tu_assert_error(CLRT_EINVAL, "dir is NULL", NULL);
    free(all);
    tdf_rmdir(dir);
}
END_TEST

static Suite *cifar_suite(void)
{
    Suite *s = suite_create("data_cifar");
    TCase *tc = tu_tcase("cifar10");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_train_split, 0, 6);
    tcase_add_test(tc, test_test_split);
    tcase_add_test(tc, test_broken_files);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return tu_run(cifar_suite()); }
