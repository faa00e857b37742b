/* For test_data*.c: data set files made on the fly in a temporary folder,
 * plain or compressed by the gzip program (an encoder independent of the
 * library's zlib reader), and read back through `gzip -dc`. */
#ifndef TEST_DATA_FILES_H
#define TEST_DATA_FILES_H

#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A fresh folder under $TMPDIR (or /tmp); `path` holds its name. */
static inline void tdf_mkdtemp(char *path, size_t cap)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(path, cap, "%s/clrt-data-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    ck_assert_msg(mkdtemp(path) != NULL, "mkdtemp %s failed", path);
}

static inline void tdf_rmdir(const char *dir)
{
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}

static inline void tdf_join(char *out, size_t cap, const char *dir, const char *name)
{
    ck_assert_int_lt(snprintf(out, cap, "%s/%s", dir, name), (int)cap);
}

static inline void tdf_write(const char *dir, const char *name, const void *data, size_t len)
{
    char path[4096];
    tdf_join(path, sizeof path, dir, name);
    FILE *f = fopen(path, "wb");
    ck_assert_msg(f != NULL, "cannot create %s", path);
    ck_assert_uint_eq(fwrite(data, 1, len, f), len);
    ck_assert_int_eq(fclose(f), 0);
}

/* dir/name -> dir/name.gz (the plain file goes). */
static inline void tdf_gzip(const char *dir, const char *name)
{
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "gzip -nf '%s/%s'", dir, name);
    ck_assert_msg(system(cmd) == 0, "%s failed", cmd);
}

/* Cuts dir/name to its first `keep` bytes. */
static inline void tdf_truncate(const char *dir, const char *name, long keep)
{
    char path[4096];
    tdf_join(path, sizeof path, dir, name);
    ck_assert_int_eq(truncate(path, keep), 0);
}

static inline long tdf_size(const char *dir, const char *name)
{
    char path[4096];
    tdf_join(path, sizeof path, dir, name);
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
    long n = ftell(f);
    fclose(f);
    return n;
}

/* Overwrites `len` bytes of dir/name at `offset` with `data`. */
static inline void tdf_patch(const char *dir, const char *name, long offset, const void *data,
                             size_t len)
{
    char path[4096];
    tdf_join(path, sizeof path, dir, name);
    FILE *f = fopen(path, "r+b");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    ck_assert_int_eq(fseek(f, offset, SEEK_SET), 0);
    ck_assert_uint_eq(fwrite(data, 1, len, f), len);
    ck_assert_int_eq(fclose(f), 0);
}

/* The whole decompressed content of a gzip file (malloc'ed), via gzip -dc. */
static inline unsigned char *tdf_gunzip(const char *path, size_t *len)
{
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "gzip -dc '%s'", path);
    FILE *p = popen(cmd, "r");
    ck_assert_msg(p != NULL, "%s failed", cmd);
    size_t cap = 1 << 20, n = 0;
    unsigned char *buf = malloc(cap);
    for (size_t got; buf && (got = fread(buf + n, 1, cap - n, p)) > 0;) {
        n += got;
        if (n == cap)
            buf = realloc(buf, cap *= 2);
    }
    ck_assert_int_eq(pclose(p), 0);
    ck_assert_ptr_nonnull(buf);
    *len = n;
    return buf;
}

/* Big-endian uint32 into p. */
static inline void tdf_be32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

typedef clrt_dataset *(*tdf_loader)(const char *dir, int train);

/* Loading the training split from dir fails with `want`, and the message
 * names dir/file and contains `fault`. */
static inline void tdf_expect_failure(tdf_loader load, const char *dir, const char *file,
                                      clrt_status want, const char *fault)
{
    char path[4200];
    tdf_join(path, sizeof path, dir, file);
    clrt_clear_error();
    ck_assert_ptr_null(load(dir, 1));
    tu_assert_error(want, path, fault, NULL);
}

/* A float32 batch buffer poisoned with NaN. */
static inline float *tdf_nan_floats(size_t n)
{
    float *x = malloc((n ? n : 1) * sizeof *x);
    ck_assert_ptr_nonnull(x);
    for (size_t i = 0; i < n; i++)
        x[i] = NAN;
    return x;
}

#endif
