/* What was measured on a device, remembered (tuning_internal.h): small
 * records in memory per device, and in the cache folder as files of the
 * program cache's format (cache_internal.h: the user's private folder, a
 * keyed tag), named by a hash of (clrt version, the library's build,
 * device, driver, platform, the record's key). */
#include "runtime/device/tuning_internal.h"
#include "runtime/core/alloc_internal.h"
#include "runtime/device/cache_internal.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct tuning_record {
    char *key;
    void *value;
    size_t size;
    const clrt_device *dev;
    struct tuning_record *next;
} tuning_record;

static tuning_record *records;
static pthread_mutex_t records_lock = PTHREAD_MUTEX_INITIALIZER;

static uint64_t fnv1a_str(uint64_t h, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s;; p++) {
        h ^= *p;
        h *= 0x100000001b3ULL;
        if (!*p)
            return h;
    }
}

/* Which build of the code holding build_tag runs: its file's size and
 * modification time. A measurement belongs to the code it timed, so a
 * rebuilt library (an algorithm made faster) measures again instead of
 * keeping an old build's choice; the program cache needs no such tag, as
 * it keys on the kernel source itself. "" where the file cannot be told. */
static char build_tag[64];
static pthread_once_t build_once = PTHREAD_ONCE_INIT;

static void find_build(void)
{
    Dl_info info;
    struct stat st;
    /* For code linked into the program itself dladdr names the program as
     * argv[0] gave it (a bare name, or relative to a directory since left),
     * which differs between processes of one binary: the kernel's link to
     * the running executable is the file then. */
    const char *file = dladdr(build_tag, &info) ? info.dli_fname : NULL;
    if (file && file[0] != '/')
        file = "/proc/self/exe";
    if (file && stat(file, &st) == 0)
        snprintf(build_tag, sizeof build_tag, "%lld.%lld.%ld", (long long)st.st_size,
                 (long long)st.st_mtim.tv_sec, (long)st.st_mtim.tv_nsec);
}

/* The file name and key of d's record `key`. */
static void file_of(const clrt_device *d, const char *key, char *name, size_t cap, uint64_t hash[2])
{
    uint64_t h[2] = {0x9e3779b97f4a7c15ULL, 0xc2b2ae3d27d4eb4fULL};
    pthread_once(&build_once, find_build);
    for (int i = 0; i < 2; i++) {
        h[i] = fnv1a_str(h[i], CLRT_VERSION);
        h[i] = fnv1a_str(h[i], build_tag);
        h[i] = fnv1a_str(h[i], d->info.model);
        h[i] = fnv1a_str(h[i], d->info.driver_version);
        h[i] = fnv1a_str(h[i], d->info.platform_version);
        h[i] = fnv1a_str(h[i], key);
    }
    snprintf(name, cap, "%016llx%016llx.tune", (unsigned long long)h[0], (unsigned long long)h[1]);
    hash[0] = h[0], hash[1] = h[1];
}

static tuning_record *find(const clrt_device *d, const char *key)
{
    for (tuning_record *r = records; r; r = r->next)
        if (r->dev == d && strcmp(r->key, key) == 0)
            return r;
    return NULL;
}

/* Keeps a copy in memory; the lock is held. Silent when out of memory. */
static void remember(const clrt_device *d, const char *key, const void *value, size_t size)
{
    tuning_record *r = find(d, key);
    void *copy = clrt__malloc(size ? size : 1);
    if (!copy)
        return;
    memcpy(copy, value, size);
    if (r) {
        free(r->value);
        r->value = copy, r->size = size;
        return;
    }
    r = clrt__calloc(1, sizeof *r);
    char *k = r ? clrt__strdup(key) : NULL;
    if (!k) {
        free(r);
        free(copy);
        return;
    }
    *r = (tuning_record){k, copy, size, d, records};
    records = r;
}

/* From the cache folder into memory; the lock is held. A record that is
 * not there (or not valid) is remembered as empty, so that lookups made in
 * every training step (ops/kparams.c) read the folder once a process,
 * not once a call; a put replaces it. */
static tuning_record *load(const clrt_device *d, const char *key)
{
    char name[64];
    uint64_t hash[2];
    size_t size = 0, n = 0;
    const uint8_t *payload = NULL;
    const uint8_t *mac = clrt__cache_dir_key();
    if (!mac)
        return NULL;
    file_of(d, key, name, sizeof name, hash);
    uint8_t *file = clrt__cache_dir_read(name, CLRT__TUNING_MAX + 64, &size);
    if (file &&
        clrt__cache_file_decode(file, size, hash, mac, &payload, &n) == CLRT__CACHE_FILE_OK &&
        n <= CLRT__TUNING_MAX)
        remember(d, key, payload, n);
    else
        remember(d, key, "", 0);
    free(file);
    return find(d, key);
}

size_t clrt__tuning_get(const clrt_device *d, const char *key, void *value, size_t cap)
{
    pthread_mutex_lock(&records_lock);
    tuning_record *r = find(d, key);
    if (!r)
        r = load(d, key);
    size_t n = r && r->size <= cap ? r->size : 0;
    if (n)
        memcpy(value, r->value, n);
    pthread_mutex_unlock(&records_lock);
    return n;
}

int clrt__tuning_put(const clrt_device *d, const char *key, const void *value, size_t size)
{
    if (size == 0 || size > CLRT__TUNING_MAX)
        return 0;
    pthread_mutex_lock(&records_lock);
    remember(d, key, value, size);
    pthread_mutex_unlock(&records_lock);
    const uint8_t *mac = clrt__cache_dir_key();
    if (!mac)
        return 0;
    char name[64];
    uint64_t hash[2];
    size_t file_size = 0;
    file_of(d, key, name, sizeof name, hash);
    uint8_t *file = clrt__cache_file_encode(hash, mac, value, size, &file_size);
    int written = file && clrt__cache_dir_write(name, file, file_size);
    free(file);
    return written;
}
