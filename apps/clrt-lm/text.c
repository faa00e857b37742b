/* The training text and its vocabulary of bytes (lm.h). */
#include "lm.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int is_control(unsigned char c)
{
    return c < 0x20 && c != '\n' && c != '\t' && c != '\r' && c != '\f' && c != '\v';
}

/* A text has no NUL and at most 1% other control bytes. */
static int check_text(const char *path, const lm_text *t)
{
    int64_t controls = 0;
    for (int64_t i = 0; i < t->n; i++) {
        if (t->bytes[i] == 0) {
            fprintf(stderr, "clrt-lm: %s is not text: a NUL byte at offset %lld\n", path,
                    (long long)i);
            return 1;
        }
        controls += is_control(t->bytes[i]);
    }
    if (controls * 100 > t->n) {
        fprintf(stderr, "clrt-lm: %s is not text: %lld of its %lld bytes are control codes\n", path,
                (long long)controls, (long long)t->n);
        return 1;
    }
    return 0;
}

static void build_vocab(lm_text *t)
{
    int seen[256] = {0};
    for (int64_t i = 0; i < t->n; i++)
        seen[t->bytes[i]] = 1;
    t->vocab = 0;
    for (int c = 0; c < 256; c++) {
        t->ids[c] = seen[c] ? t->vocab : -1;
        if (seen[c])
            t->chars[t->vocab++] = (unsigned char)c;
    }
}

static int read_all(const char *path, int64_t max_chars, lm_text *t)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "clrt-lm: cannot open %s: %s\n", path, strerror(errno));
        return 1;
    }
    size_t cap = 1 << 16, n = 0, got;
    unsigned char *buf = malloc(cap);
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        unsigned char *bigger = n == cap ? realloc(buf, cap *= 2) : buf;
        if (!bigger)
            free(buf);
        buf = bigger;
    }
    int bad = !buf || ferror(f);
    fclose(f);
    if (bad) {
        fprintf(stderr, "clrt-lm: cannot read %s: %s\n", path,
                buf ? strerror(errno) : "out of memory");
        free(buf);
        return 1;
    }
    t->bytes = buf;
    t->n = max_chars > 0 && (int64_t)n > max_chars ? max_chars : (int64_t)n;
    return 0;
}

int lm_text_read(const char *path, int64_t max_chars, lm_text *t)
{
    memset(t, 0, sizeof *t);
    if (read_all(path, max_chars, t))
        return 1;
    if (t->n == 0) {
        fprintf(stderr, "clrt-lm: %s is empty: nothing to learn from\n", path);
        lm_text_free(t);
        return 1;
    }
    if (check_text(path, t)) {
        lm_text_free(t);
        return 1;
    }
    build_vocab(t);
    return 0;
}

void lm_text_free(lm_text *t)
{
    free(t->bytes);
    t->bytes = NULL;
    t->n = 0;
}

void lm_vocab_hex(const lm_text *t, char *out, size_t cap)
{
    size_t at = 0;
    out[0] = 0;
    for (int i = 0; i < t->vocab && at + 3 <= cap; i++, at += 2)
        snprintf(out + at, cap - at, "%02x", t->chars[i]);
}

int lm_vocab_from_hex(const char *hex, lm_text *t)
{
    size_t len = strlen(hex);
    memset(t->ids, -1, sizeof t->ids);
    t->vocab = 0;
    for (size_t i = 0; i + 1 < len && len % 2 == 0; i += 2) {
        unsigned v;
        if (sscanf(hex + i, "%2x", &v) != 1 || t->ids[v] >= 0 ||
            (t->vocab > 0 && v <= t->chars[t->vocab - 1]))
            break;
        t->ids[v] = t->vocab;
        t->chars[t->vocab++] = (unsigned char)v;
    }
    if (len == 0 || len % 2 != 0 || (size_t)t->vocab * 2 != len) {
        fprintf(stderr, "clrt-lm: the checkpoint's vocabulary '%.40s' is not sorted hex bytes\n",
                hex);
        return 1;
    }
    return 0;
}

int lm_encode(const lm_text *t, const char *what, const unsigned char *s, int64_t n, int32_t *ids)
{
    for (int64_t i = 0; i < n; i++) {
        if (t->ids[s[i]] >= 0) {
            ids[i] = t->ids[s[i]];
            continue;
        }
        char c[16] = "";
        if (s[i] >= 0x20 && s[i] < 0x7f)
            snprintf(c, sizeof c, "'%c', ", s[i]);
        fprintf(stderr,
                "clrt-lm: %s: character %lld (%sbyte 0x%02x) is not in the model's vocabulary "
                "of %d characters\n",
                what, (long long)i + 1, c, s[i], t->vocab);
        return 1;
    }
    return 0;
}
