/* For the fuzz targets: a private scratch folder for the readers that take
 * files, and writing one input there, plain or gzipped. */
#ifndef CLRT_FUZZ_COMMON_H
#define CLRT_FUZZ_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

static char fuzz_dir_path[64];

/* Removes the folder and what the targets write there, at exit. */
static inline void fuzz_dir_remove(void)
{
    static const char *const names[] = {"train-images-idx3-ubyte", "train-labels-idx1-ubyte",
                                        "test_batch.bin"};
    char path[256];
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        for (int gz = 0; gz < 2; gz++) {
            snprintf(path, sizeof path, "%s/%s%s", fuzz_dir_path, names[i], gz ? ".gz" : "");
            unlink(path);
        }
    rmdir(fuzz_dir_path);
}

/* The folder, made on first use (in /dev/shm when there is one: no disk). */
static inline const char *fuzz_dir(void)
{
    if (!fuzz_dir_path[0]) {
        snprintf(fuzz_dir_path, sizeof fuzz_dir_path, "%s/clrt-fuzz-XXXXXX",
                 access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
        if (!mkdtemp(fuzz_dir_path))
            abort();
        atexit(fuzz_dir_remove);
    }
    return fuzz_dir_path;
}

/* dir/name (and dir/name.gz) removed, then dir/name or, with gz, its
 * gzip-compressed form dir/name.gz written with n bytes of data. */
static inline void fuzz_write(const char *name, const uint8_t *data, size_t n, int gz)
{
    char path[256], gz_path[260];
    snprintf(path, sizeof path, "%s/%s", fuzz_dir(), name);
    snprintf(gz_path, sizeof gz_path, "%s.gz", path);
    unlink(path);
    unlink(gz_path);
    if (gz) {
        gzFile g = gzopen(gz_path, "wb1");
        if (!g || (n && gzwrite(g, data, (unsigned)n) != (int)n) || gzclose(g) != Z_OK)
            abort();
        return;
    }
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, n, f) != n || fclose(f) != 0)
        abort();
}

#endif
