/* The training text and its vocabulary of bytes (lm.h). */
#include "lm.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* Appends a regular file's bytes to t (opened without blocking, so a FIFO
 * is refused rather than waited on). */
static int append_file(const char *path, lm_text *t, size_t *cap)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        fprintf(stderr, "clrt-lm: cannot read %s: %s\n", path,
                fd < 0 || !S_ISREG(st.st_mode) ? (fd < 0 ? strerror(errno) : "not a regular file")
                                               : strerror(errno));
        if (fd >= 0)
            close(fd);
        return 1;
    }
    ssize_t got = 1;
    while (got > 0) {
        if ((size_t)t->n == *cap) {
            unsigned char *bigger = realloc(t->bytes, *cap = *cap ? 2 * *cap : 1 << 16);
            if (!bigger) {
                close(fd);
                fprintf(stderr, "clrt-lm: out of memory reading %s\n", path);
                return 1;
            }
            t->bytes = bigger;
        }
        got = read(fd, t->bytes + t->n, *cap - (size_t)t->n);
        t->n += got > 0 ? got : 0;
    }
    int bad = got < 0;
    if (bad)
        fprintf(stderr, "clrt-lm: cannot read %s: %s\n", path, strerror(errno));
    close(fd);
    return bad;
}

static int is_index(const struct dirent *e)
{
    size_t n = strlen(e->d_name);
    return e->d_name[0] == '.' || (n > 4 && strcmp(e->d_name + n - 4, ".dat") == 0);
}

/* A folder: its regular files in name order, links and fortune's .dat
 * indexes left out (Debian's fortunes: each text, once). */
static int append_folder(const char *dir, lm_text *t, size_t *cap)
{
    struct dirent **names = NULL;
    int n = scandir(dir, &names, NULL, alphasort), rc = n < 0;
    if (rc)
        fprintf(stderr, "clrt-lm: cannot list %s: %s\n", dir, strerror(errno));
    for (int i = 0; i < n; i++) {
        char path[4096];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", dir, names[i]->d_name);
        if (!rc && !is_index(names[i]) && lstat(path, &st) == 0 && S_ISREG(st.st_mode))
            rc = append_file(path, t, cap);
        free(names[i]);
    }
    free(names);
    return rc;
}

static int read_all(const char *path, int64_t max_chars, lm_text *t)
{
    struct stat st;
    size_t cap = 0;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "clrt-lm: cannot open %s: %s\n", path, strerror(errno));
        return 1;
    }
    int rc = S_ISDIR(st.st_mode) ? append_folder(path, t, &cap) : append_file(path, t, &cap);
    if (!rc && max_chars > 0 && t->n > max_chars)
        t->n = max_chars;
    return rc;
}

int lm_text_read(const char *path, int64_t max_chars, lm_text *t)
{
    memset(t, 0, sizeof *t);
    if (read_all(path, max_chars, t)) {
        lm_text_free(t);
        return 1;
    }
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
