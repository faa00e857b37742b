/* The program cache's file format and its keyed check (cache_internal.h).
 *
 * Why a keyed tag: an unkeyed checksum (the FNV-1a used before) can be
 * recomputed by whoever edits a file, so a cut payload with a rewritten
 * size and checksum looked consistent and went to the driver, whose binary
 * loader crashed on it. SipHash-2-4 is a pseudorandom function keyed with
 * 128 bits, designed as a message authentication code for short and
 * medium inputs (Aumasson and Bernstein, "SipHash: a fast short-input PRF",
 * 2012): without the user's key, a tag that matches altered contents is a
 * guess, right with probability about 2^-64. It is not built on a
 * Merkle-Damgard hash with a secret prefix, so appending to a tagged file
 * forges nothing. The tag covers the header and the payload, so the size
 * field and the program key are bound to the bytes too. The key is a
 * per-user secret (cache_dir.c): someone who can read it can also write the
 * user's private folder, so it adds no protection against the user's own
 * programs, only against everything else that ends up in the folder (cut or
 * altered files, copies from other users or machines). */
#include "runtime/device/cache_internal.h"
#include "runtime/core/alloc_internal.h"

#include <string.h>

static const uint8_t magic[8] = {'C', 'L', 'R', 'T', 'P', 'B', '0', '3'};

static uint64_t load_le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static void store_le64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++, v >>= 8)
        p[i] = (uint8_t)v;
}

static uint64_t rotl(uint64_t x, int b) { return x << b | x >> (64 - b); }

/* One SipRound on the state v[0..3]. */
static void sip_round(uint64_t v[4])
{
    v[0] += v[1], v[1] = rotl(v[1], 13), v[1] ^= v[0], v[0] = rotl(v[0], 32);
    v[2] += v[3], v[3] = rotl(v[3], 16), v[3] ^= v[2];
    v[0] += v[3], v[3] = rotl(v[3], 21), v[3] ^= v[0];
    v[2] += v[1], v[1] = rotl(v[1], 17), v[1] ^= v[2], v[2] = rotl(v[2], 32);
}

/* Absorbs one 64-bit message word with 2 rounds (the "2" of 2-4). */
static void sip_word(uint64_t v[4], uint64_t m)
{
    v[3] ^= m;
    sip_round(v);
    sip_round(v);
    v[0] ^= m;
}

uint64_t clrt__siphash24(const uint8_t key[CLRT__CACHE_KEY_BYTES], const void *data, size_t n)
{
    const uint8_t *p = data;
    uint64_t k0 = load_le64(key), k1 = load_le64(key + 8);
    uint64_t v[4] = {k0 ^ 0x736f6d6570736575ULL, k1 ^ 0x646f72616e646f6dULL,
                     k0 ^ 0x6c7967656e657261ULL, k1 ^ 0x7465646279746573ULL};
    size_t whole = n & ~(size_t)7;
    for (size_t i = 0; i < whole; i += 8)
        sip_word(v, load_le64(p + i));
    /* The last word: the 0-7 bytes left, and n mod 256 in the top byte. */
    uint64_t last = (uint64_t)(n & 0xff) << 56;
    for (size_t i = whole; i < n; i++)
        last |= (uint64_t)p[i] << (8 * (i - whole));
    sip_word(v, last);
    v[2] ^= 0xff; /* finalisation: 4 rounds (the "4" of 2-4) */
    for (int r = 0; r < 4; r++)
        sip_round(v);
    return v[0] ^ v[1] ^ v[2] ^ v[3];
}

uint8_t *clrt__cache_file_encode(const uint64_t program_key[2],
                                 const uint8_t mac_key[CLRT__CACHE_KEY_BYTES], const void *payload,
                                 size_t n, size_t *size)
{
    if (n > CLRT__CACHE_PAYLOAD_MAX)
        return NULL;
    size_t total = CLRT__CACHE_HEADER + n + CLRT__CACHE_TAG;
    uint8_t *f = clrt__malloc(total);
    if (!f)
        return NULL;
    memcpy(f, magic, sizeof magic);
    store_le64(f + 8, program_key[0]);
    store_le64(f + 16, program_key[1]);
    store_le64(f + 24, n);
    memcpy(f + CLRT__CACHE_HEADER, payload, n);
    store_le64(f + CLRT__CACHE_HEADER + n, clrt__siphash24(mac_key, f, CLRT__CACHE_HEADER + n));
    *size = total;
    return f;
}

clrt__cache_file_status clrt__cache_file_decode(const uint8_t *file, size_t size,
                                                const uint64_t program_key[2],
                                                const uint8_t mac_key[CLRT__CACHE_KEY_BYTES],
                                                const uint8_t **payload, size_t *n)
{
    if (size < CLRT__CACHE_HEADER + CLRT__CACHE_TAG || size > CLRT__CACHE_FILE_MAX)
        return CLRT__CACHE_FILE_SIZE;
    size_t tagged = size - CLRT__CACHE_TAG;
    if (clrt__siphash24(mac_key, file, tagged) != load_le64(file + tagged))
        return CLRT__CACHE_FILE_TAG;
    if (memcmp(file, magic, sizeof magic) != 0)
        return CLRT__CACHE_FILE_MAGIC;
    if (load_le64(file + 8) != program_key[0] || load_le64(file + 16) != program_key[1])
        return CLRT__CACHE_FILE_OTHER;
    if (load_le64(file + 24) != tagged - CLRT__CACHE_HEADER)
        return CLRT__CACHE_FILE_LENGTH;
    *payload = file + CLRT__CACHE_HEADER;
    *n = tagged - CLRT__CACHE_HEADER;
    return CLRT__CACHE_FILE_OK;
}
