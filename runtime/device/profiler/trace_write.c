/* Writing a profiler trace as Chrome trace-event JSON (the "JSON Object
 * Format": a traceEvents array of complete events, ph "X", with ts and dur
 * in microseconds, and metadata events, ph "M", naming the process and each
 * track), which Perfetto and chrome://tracing open. Written through the
 * library's one writer (a temporary file renamed over a regular file or
 * nothing), so a failed write leaves no cut-off trace. */
#include "runtime/device/profiler/trace_store_internal.h"
#include "runtime/core/file_internal.h"

#include <stdio.h>
#include <string.h>

const char *clrt__trace_kind_name(clrt__trace_kind kind)
{
    static const char *const names[] = {"kernel", "gemm", "copy", "native", "wait", "host"};
    return (unsigned)kind < sizeof names / sizeof *names ? names[kind] : "?";
}

/* A JSON string: quotes, backslashes and control characters escaped. */
static void put_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

/* A record's start on the host clock, in ns. */
static long long host_start(const clrt__trace_store *s, const clrt__trace_record *r)
{
    return r->start + s->tracks[r->track].offset;
}

static void put_tracks(FILE *f, const clrt__trace_store *s)
{
    fprintf(f, "{\"ph\":\"M\",\"pid\":1,\"tid\":0,\"name\":\"process_name\","
               "\"args\":{\"name\":\"clrt\"}}");
    for (int i = 0; i < s->n_tracks; i++) {
        fprintf(f,
                ",\n{\"ph\":\"M\",\"pid\":1,\"tid\":%d,\"name\":\"thread_name\",\"args\":{"
                "\"name\":",
                i + 1);
        const clrt__trace_track *t = &s->tracks[i];
        char label[96] = "host";
        if (t->dev)
            snprintf(label, sizeof label, "%s %s queue", t->dev->info.name,
                     t->copy_queue ? "copy" : "compute");
        put_string(f, label);
        fprintf(f,
                "}},\n{\"ph\":\"M\",\"pid\":1,\"tid\":%d,\"name\":\"thread_sort_index\","
                "\"args\":{\"sort_index\":%d}}",
                i + 1, s->tracks[i].dev ? i + 1 : 0);
    }
}

static void put_record(FILE *f, const clrt__trace_store *s, const clrt__trace_record *r,
                       long long base)
{
    fprintf(f, ",\n{\"ph\":\"X\",\"pid\":1,\"tid\":%d,\"name\":", r->track + 1);
    put_string(f, s->names[r->name].name);
    fprintf(f, ",\"cat\":\"%s\",\"ts\":%.3f,\"dur\":%.3f}",
            clrt__trace_kind_name((clrt__trace_kind)r->kind),
            (double)(host_start(s, r) - base) * 1e-3, (double)(r->end - r->start) * 1e-3);
}

clrt_status clrt__trace_write_json(const clrt__trace_store *s, const char *path)
{
    clrt__out_file out;
    clrt_status st = clrt__out_open(&out, path, "writing the trace");
    FILE *f = st == CLRT_OK ? clrt__out_stream(&out) : NULL;
    if (!f) {
        clrt__out_abort(&out);
        return st != CLRT_OK ? st : out.st;
    }
    long long base = 0;
    for (size_t i = 0; i < s->n_records; i++)
        if (i == 0 || host_start(s, &s->records[i]) < base)
            base = host_start(s, &s->records[i]);
    fprintf(f,
            "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":\"clrt\","
            "\"commands_without_times\":%zu},\n\"traceEvents\":[\n",
            s->dropped);
    put_tracks(f, s);
    for (size_t i = 0; i < s->n_records; i++)
        put_record(f, s, &s->records[i], base);
    fprintf(f, "\n]}\n");
    return clrt__out_commit(&out); /* a failed write (a full disk) is an error */
}
