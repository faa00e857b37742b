/* The on-disk program cache, below the in-memory one (program_cache.c):
 * the file format (cache_file.c, no OpenCL and no file system, so that a
 * fuzz target builds it alone) and the folder (cache_dir.c).
 *
 * What the cache trusts: only a folder that belongs to this user and that
 * no one else may write to (clrt makes it, and its missing parents, 0700),
 * and in it only regular files (no links, FIFOs or devices) that belong to
 * this user, that no one else may write to, of at most
 * CLRT__CACHE_FILE_MAX bytes, whose keyed tag checks out under the user's
 * 16-byte random key (the folder's `key` file, 0600, made on first use).
 * Anything else is ignored and the program rebuilt from source: a driver's
 * binary loader is no place for bytes whose origin is in doubt.
 *
 * File layout (integers little-endian):
 *   offset  size  field
 *   0       8     magic "CLRTPB03"
 *   8       16    program key: the 128-bit hash the file is named after
 *   24      8     payload size n
 *   32      n     payload: the driver's program binary
 *   32 + n  8     tag: SipHash-2-4 under the user's key of bytes [0, 32 + n)
 *
 * Thread-safe. */
#ifndef CLRT_CACHE_INTERNAL_H
#define CLRT_CACHE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#define CLRT__CACHE_HEADER 32
#define CLRT__CACHE_TAG 8
#define CLRT__CACHE_PAYLOAD_MAX ((size_t)256 << 20) /* PoCL's are ~0.5 MB */
#define CLRT__CACHE_FILE_MAX (CLRT__CACHE_HEADER + CLRT__CACHE_PAYLOAD_MAX + CLRT__CACHE_TAG)
#define CLRT__CACHE_KEY_BYTES 16

/* Why a file was refused; 0 when it is good. */
typedef enum {
    CLRT__CACHE_FILE_OK = 0,
    CLRT__CACHE_FILE_SIZE = -1,  /* shorter than a header and tag, or too large */
    CLRT__CACHE_FILE_TAG = -2,   /* the tag does not match: cut, altered or foreign */
    CLRT__CACHE_FILE_MAGIC = -3, /* another format */
    CLRT__CACHE_FILE_OTHER = -4, /* another program's file (renamed or copied) */
    CLRT__CACHE_FILE_LENGTH = -5 /* the size field disagrees with the file */
} clrt__cache_file_status;

/* SipHash-2-4 of data under a 16-byte key (Aumasson and Bernstein, 2012). */
uint64_t clrt__siphash24(const uint8_t key[CLRT__CACHE_KEY_BYTES], const void *data, size_t n);

/* The file for a payload of n bytes (n <= CLRT__CACHE_PAYLOAD_MAX):
 * malloc'ed, *size bytes; NULL when out of memory or too large. */
uint8_t *clrt__cache_file_encode(const uint64_t program_key[2],
                                 const uint8_t mac_key[CLRT__CACHE_KEY_BYTES], const void *payload,
                                 size_t n, size_t *size);
/* Checks a whole file read into memory: size bounds, then the tag, then
 * magic, program key and payload size. On success *payload points into
 * file, *n bytes. */
clrt__cache_file_status clrt__cache_file_decode(const uint8_t *file, size_t size,
                                                const uint64_t program_key[2],
                                                const uint8_t mac_key[CLRT__CACHE_KEY_BYTES],
                                                const uint8_t **payload, size_t *n);

/* The folder ($CLRT_CACHE_DIR and its defaults), made ready on the first
 * call: created 0700 (its missing parents too), refused with one warning on
 * stderr when it cannot be made, another user owns it or others may write
 * to it; its key read or made; stale temporary files of dead writers
 * removed. The user's key, or NULL when the disk cache is off or refused. */
const uint8_t *clrt__cache_dir_key(void);
/* The file `name` in the folder, read whole if it is a regular file of
 * this user's that no one else can write and of at most `max` bytes:
 * malloc'ed, *size bytes. NULL otherwise (silently). */
uint8_t *clrt__cache_dir_read(const char *name, size_t max, size_t *size);
/* Writes `name` whole or not at all: a new private temporary file
 * ("<name>.tmp.<pid>.<n>") renamed over it. Silent: 1 when written, 0 when
 * not (the folder off or refused, a full disk), which costs the program
 * cache a rebuild later. */
int clrt__cache_dir_write(const char *name, const void *data, size_t size);

#endif
