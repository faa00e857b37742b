/* The safetensors file format (Hugging Face's, what PyTorch users load with
 * safetensors.torch.load_file): an 8-byte little-endian header length, a
 * JSON header {name: {"dtype", "shape", "data_offsets"}, "__metadata__":
 * {string: string}}, then the raw little-endian data.
 *
 * The reader validates the whole file before anyone uses it: header length
 * against the file size, the JSON, dtypes, shapes, and offsets (in range,
 * matching dtype x shape, non-overlapping and covering the data without
 * holes, as the reference reader requires). The writer is atomic: a
 * temporary file in the same folder, fsync, rename, fsync of the folder
 * (runtime/core/file_internal.h).
 * Not thread-safe per file object; distinct objects are independent.
 * Free of OpenCL (the fuzzer compiles safetensors_read.c on its own). */
#ifndef CLRT_SAFETENSORS_INTERNAL_H
#define CLRT_SAFETENSORS_INTERNAL_H

#include "runtime/core/alloc_internal.h"
#include "runtime/core/error_internal.h"
#include "runtime/core/file_internal.h"
#include "runtime/core/lookup_internal.h"
#include <clrt/tensor.h>

#include <stddef.h>
#include <stdint.h>

typedef struct {
    char *name;
    char dtype[12]; /* "F32", "BF16", ... (validated) */
    size_t dtype_size;
    int ndim;
    int64_t shape[CLRT_MAX_DIMS];
    uint64_t offset;           /* of its data in the data section */
    const unsigned char *data; /* its data in memory: after clrt__st_fetch, or parsed in memory */
    size_t bytes;
} clrt__st_tensor;

typedef struct {
    unsigned char *bytes; /* the header (clrt__st_read) or the whole file (clrt__st_parse) */
    size_t size;
    clrt__st_tensor *tensors;
    int count, cap;           /* cap: tensors allocated */
    clrt__name_index by_name; /* tensor name -> index into tensors */
    char **meta;              /* key, value, key, value... */
    int meta_count, meta_cap; /* strings in meta: 2 per pair; allocated */
    int fd, fd_open;          /* the open file (clrt__st_read); fd_open 0: none */
    uint64_t data_start;
    unsigned char *data_buf; /* what clrt__st_fetch read */
    char path[CLRT__PATH_CAP];
} clrt__st_file;

/* Opens path and reads and validates its header into *f (zeroed first):
 * the JSON, dtypes, shapes and offsets against the file's size, which the
 * data must fill exactly. The data stays in the file until clrt__st_fetch.
 * On error *f is empty and the message names the file and what is wrong.
 * Never blocks on a FIFO (only regular files are read). Free with
 * clrt__st_close. */
clrt_status clrt__st_read(const char *path, clrt__st_file *f);
/* The same for a file already in memory, data included: takes ownership
 * of `bytes` (a clrt__malloc'ed block of `size` bytes), also on error;
 * `name` is for messages. */
clrt_status clrt__st_parse(const char *name, unsigned char *bytes, size_t size, clrt__st_file *f);
/* Reads the data of the n tensors in want (entries of f->tensors; NULL
 * entries skipped) into memory, setting their data pointers: the only
 * bytes of a file's data section a load reads. Once per file. */
clrt_status clrt__st_fetch(clrt__st_file *f, int n, const clrt__st_tensor *const *want);
void clrt__st_close(clrt__st_file *f);
/* The tensor named `name`, or NULL (a hash lookup: loading n tensors by
 * name takes O(n)). */
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

/* Frees items[0..n) (their data) and the array; NULL: no-op. */
void clrt__st_items_free(clrt__st_item *items, int n);

/* Writes items (and meta: nmeta key/value pairs, may be 0) to path
 * atomically: on any error the previous file at path is untouched. `what`
 * names the call in messages. */
clrt_status clrt__st_write(const char *path, const clrt__st_item *items, int n,
                           const char *const *meta, int nmeta, const char *what);
/* The first half of clrt__st_write: the file written in full and synced
 * under its temporary name in *o; clrt__out_rename(o) puts it in place,
 * clrt__out_abort(o) removes it (nothing to do after an error). For a
 * caller that renames several files only once all are written. */
clrt_status clrt__st_write_tmp(clrt__out_file *o, const char *path, const clrt__st_item *items,
                               int n, const char *const *meta, int nmeta, const char *what);

#endif
