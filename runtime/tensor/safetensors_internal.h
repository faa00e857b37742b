/* The safetensors file format (Hugging Face's, what PyTorch users load with
 * safetensors.torch.load_file): an 8-byte little-endian header length, a
 * JSON header {name: {"dtype", "shape", "data_offsets"}, "__metadata__":
 * {string: string}}, then the raw little-endian data.
 *
 * The reader validates the whole file before anyone uses it: header length
 * against the file size, the JSON, dtypes, shapes, and offsets (in range,
 * matching dtype x shape, non-overlapping and covering the data without
 * holes, as the reference reader requires). The writer is atomic: a
 * temporary file in the same folder, fsync, rename, fsync of the folder.
 * Not thread-safe per file object; distinct objects are independent.
 * Free of OpenCL (the fuzzer compiles safetensors_read.c on its own). */
#ifndef CLRT_SAFETENSORS_INTERNAL_H
#define CLRT_SAFETENSORS_INTERNAL_H

#include "runtime/core/alloc_internal.h"
#include "runtime/core/error_internal.h"
#include <clrt/tensor.h>

#include <stddef.h>
#include <stdint.h>

typedef struct {
    char *name;
    char dtype[12]; /* "F32", "BF16", ... (validated) */
    size_t dtype_size;
    int ndim;
    int64_t shape[CLRT_MAX_DIMS];
    const unsigned char *data; /* inside the file's data section */
    size_t bytes;
} clrt__st_tensor;

typedef struct {
    unsigned char *bytes; /* the whole file */
    size_t size;
    clrt__st_tensor *tensors;
    int count;
    char **meta;    /* key, value, key, value... */
    int meta_count; /* strings in meta: 2 per pair */
} clrt__st_file;

/* Reads and validates path into *f (zeroed first). On error *f is empty and
 * the message names the file and what is wrong. Free with clrt__st_close. */
clrt_status clrt__st_read(const char *path, clrt__st_file *f);
/* The same for a file already in memory: takes ownership of `bytes` (a
 * clrt__malloc'ed block of `size` bytes), also on error; `name` is for
 * messages. */
clrt_status clrt__st_parse(const char *name, unsigned char *bytes, size_t size, clrt__st_file *f);
void clrt__st_close(clrt__st_file *f);
/* The tensor named `name`, or NULL. */
const clrt__st_tensor *clrt__st_find(const clrt__st_file *f, const char *name);
/* The __metadata__ value of `key`, or NULL. */
const char *clrt__st_meta(const clrt__st_file *f, const char *key);
/* "F32" for CLRT_F32, "I32", "U8". */
const char *clrt__st_dtype(clrt_dtype t);

/* One tensor to write: host data of dtype x shape. */
typedef struct {
    const char *name;
    const char *dtype;
    int ndim;
    const int64_t *shape;
    const void *data;
    size_t bytes;
} clrt__st_item;

/* Writes items (and meta: nmeta key/value pairs, may be 0) to path
 * atomically: on any error the previous file at path is untouched. */
clrt_status clrt__st_write(const char *path, const clrt__st_item *items, int n,
                           const char *const *meta, int nmeta);

/* Test seam: when set, called after the temporary file is written and
 * synced and before it is renamed over path (a test kills the process
 * there). NULL in normal use. */
extern void (*clrt__st_before_rename)(const char *tmp_path);

#endif
