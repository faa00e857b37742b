/* A TensorBoard summary writer: scalars as Event protocol buffers in a
 * TFRecord file that TensorBoard (and TensorFlow's readers) read.
 *
 * TFRecord framing, per record: uint64 length (little-endian), uint32
 * masked CRC-32C of those 8 bytes, the data, uint32 masked CRC-32C of the
 * data; mask(c) = ((c >> 15) | (c << 17)) + 0xa282ead8.
 * The protobuf fields are encoded by hand (numbers from TensorBoard's
 * tensorboard/compat/proto/event.proto and summary.proto):
 *   Event:   wall_time = 1 (double, fixed64), step = 2 (int64, varint),
 *            file_version = 3 (string), summary = 5 (Summary)
 *   Summary: value = 1 (repeated Value)
 *   Value:   tag = 1 (string), simple_value = 2 (float, fixed32) */
#include "runtime/core/alloc_internal.h"
#include "runtime/core/error_internal.h"
#include <clrt/train.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

struct clrt_summary_writer {
    FILE *f;
    char path[4096];
};

/* --- CRC-32C (Castagnoli, reflected polynomial 0x82F63B78) --- */

static uint32_t crc32c(const unsigned char *p, size_t n)
{
    uint32_t c = 0xFFFFFFFFu;
    while (n--) {
        c ^= *p++;
        for (int k = 0; k < 8; k++)
            c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1u)));
    }
    return ~c;
}

static uint32_t masked_crc(const unsigned char *p, size_t n)
{
    uint32_t c = crc32c(p, n);
    return ((c >> 15) | (c << 17)) + 0xa282ead8u;
}

/* --- protobuf encoding into a small buffer --- */

typedef struct {
    unsigned char b[1024];
    size_t n;
} pb;

static void pb_byte(pb *m, unsigned v) { m->b[m->n++] = (unsigned char)v; }

static void pb_varint(pb *m, uint64_t v)
{
    while (v >= 0x80) {
        pb_byte(m, (unsigned)(v & 0x7F) | 0x80);
        v >>= 7;
    }
    pb_byte(m, (unsigned)v);
}

static void pb_fixed(pb *m, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++)
        pb_byte(m, (unsigned)(v >> (8 * i)) & 0xFF);
}

/* Field `field` of wire type 2 (length-delimited) holding n bytes. */
static void pb_bytes(pb *m, int field, const void *p, size_t n)
{
    pb_varint(m, (uint64_t)field << 3 | 2);
    pb_varint(m, n);
    memcpy(m->b + m->n, p, n);
    m->n += n;
}

/* Event { wall_time, step } with either file_version or summary bytes. */
static void event(pb *m, double wall_time, int64_t step, int field, const pb *body)
{
    uint64_t bits;
    memcpy(&bits, &wall_time, 8);
    pb_varint(m, 1 << 3 | 1);
    pb_fixed(m, bits, 8);
    pb_varint(m, 2 << 3 | 0);
    pb_varint(m, (uint64_t)step);
    pb_bytes(m, field, body->b, body->n);
}

/* --- records --- */

static clrt_status write_record(clrt_summary_writer *w, const pb *data)
{
    unsigned char head[12], tail[4];
    for (int i = 0; i < 8; i++)
        head[i] = (unsigned char)((uint64_t)data->n >> (8 * i));
    uint32_t c = masked_crc(head, 8), d = masked_crc(data->b, data->n);
    for (int i = 0; i < 4; i++) {
        head[8 + i] = (unsigned char)(c >> (8 * i));
        tail[i] = (unsigned char)(d >> (8 * i));
    }
    if (fwrite(head, 1, 12, w->f) != 12 || fwrite(data->b, 1, data->n, w->f) != data->n ||
        fwrite(tail, 1, 4, w->f) != 4)
        return clrt__fail(CLRT_EIO, "summary writer: %s: write failed: %s", w->path,
                          strerror(errno));
    return CLRT_OK;
}

static double now_seconds(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (double)tv.tv_sec + 1e-6 * (double)tv.tv_usec;
}

/* events.out.tfevents.<seconds>.<host>, with .<n> added if it exists. */
static FILE *create_file(clrt_summary_writer *w, const char *logdir)
{
    char host[256] = "localhost";
    if (gethostname(host, sizeof host) != 0)
        snprintf(host, sizeof host, "localhost");
    host[sizeof host - 1] = 0;
    long long sec = (long long)now_seconds();
    for (int k = 0; k < 100; k++) {
        int n = k ? snprintf(w->path, sizeof w->path, "%s/events.out.tfevents.%lld.%s.%d", logdir,
                             sec, host, k)
                  : snprintf(w->path, sizeof w->path, "%s/events.out.tfevents.%lld.%s", logdir, sec,
                             host);
        if (n < 0 || (size_t)n >= sizeof w->path) {
            clrt__fail(CLRT_EINVAL, "clrt_summary_open: log directory path too long: %s", logdir);
            return NULL;
        }
        int fd = open(w->path, O_WRONLY | O_CREAT | O_EXCL, 0644);
        if (fd >= 0)
            return fdopen(fd, "wb");
        if (errno != EEXIST)
            break;
    }
    clrt__fail(CLRT_EIO, "clrt_summary_open: cannot create %s: %s", w->path, strerror(errno));
    return NULL;
}

clrt_summary_writer *clrt_summary_open(const char *logdir)
{
    if (!logdir) {
        clrt__fail(CLRT_EINVAL, "clrt_summary_open: logdir is NULL");
        return NULL;
    }
    if (mkdir(logdir, 0755) != 0 && errno != EEXIST) {
        clrt__fail(CLRT_EIO, "clrt_summary_open: cannot create %s: %s", logdir, strerror(errno));
        return NULL;
    }
    clrt_summary_writer *w = clrt__calloc(1, sizeof *w);
    if (!w) {
        clrt__fail(CLRT_ENOMEM, "clrt_summary_open: out of host memory");
        return NULL;
    }
    pb version = {.n = 0}, m = {.n = 0};
    memcpy(version.b, "brain.Event:2", 13);
    version.n = 13;
    event(&m, now_seconds(), 0, 3, &version);
    if (!(w->f = create_file(w, logdir)) || write_record(w, &m) != CLRT_OK ||
        clrt_summary_flush(w) != CLRT_OK) {
        clrt_summary_close(w);
        return NULL;
    }
    return w;
}

clrt_status clrt_summary_scalar(clrt_summary_writer *w, const char *tag, int64_t step,
                                double wall_time, float value)
{
    if (!w || !tag)
        return clrt__fail(CLRT_EINVAL, "clrt_summary_scalar: NULL argument");
    size_t len = strlen(tag);
    if (len == 0 || len > 256)
        return clrt__fail(CLRT_EINVAL, "clrt_summary_scalar: tag '%s' must have 1 to 256 bytes",
                          tag);
    pb v = {.n = 0}, s = {.n = 0}, m = {.n = 0};
    uint32_t bits;
    memcpy(&bits, &value, 4);
    pb_bytes(&v, 1, tag, len);
    pb_varint(&v, 2 << 3 | 5);
    pb_fixed(&v, bits, 4);
    pb_bytes(&s, 1, v.b, v.n);
    event(&m, wall_time > 0 ? wall_time : now_seconds(), step, 5, &s);
    return write_record(w, &m);
}

clrt_status clrt_summary_flush(clrt_summary_writer *w)
{
    if (!w)
        return clrt__fail(CLRT_EINVAL, "clrt_summary_flush: writer is NULL");
    if (fflush(w->f) != 0)
        return clrt__fail(CLRT_EIO, "summary writer: %s: %s", w->path, strerror(errno));
    return CLRT_OK;
}

clrt_status clrt_summary_close(clrt_summary_writer *w)
{
    if (!w)
        return CLRT_OK;
    clrt_status st = CLRT_OK;
    if (w->f && fclose(w->f) != 0)
        st = clrt__fail(CLRT_EIO, "summary writer: %s: %s", w->path, strerror(errno));
    free(w);
    return st;
}
