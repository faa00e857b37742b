/* clrt/data.h — data sets held in host memory: image classification sets
 * read from files, and samples a program gives (clrt_dataset_from_arrays).
 *
 * A data set keeps its raw uint8 pixels and labels in host memory and
 * normalises at gather time, so a batch costs one pass over its bytes.
 * Normalisation:
 *   Fashion-MNIST  x / 255, in [0, 1] (d2l's ToTensor).
 *   CIFAR-10       (x / 255 - 0.5) / 0.5 per channel, in [-1, 1] (ToTensor
 *                  then Normalize(0.5, 0.5), as the seed notebook).
 * Files are read as `<name>.gz` when that exists, else `<name>`; zlib reads
 * both, compressed or not. Missing or unreadable files fail with CLRT_EIO,
 * unexpected contents with CLRT_EFORMAT; the message names the file and
 * what is wrong, and nothing is kept.
 *
 * Ownership: the creators return a data set the caller frees with
 * clrt_dataset_free. Strings returned by the getters live as long as it.
 * A data set is read-only after loading (except clrt_dataset_limit), so
 * several threads may gather from it at once. */
#ifndef CLRT_DATA_H
#define CLRT_DATA_H

#include <clrt/tensor.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct clrt_dataset clrt_dataset;

/* Fashion-MNIST in IDX format: train-images-idx3-ubyte, train-labels-idx1-ubyte
 * (train 1: the 60k split) or t10k-* (train 0: the 10k test split), gzipped
 * or not. dir NULL = Debian's /usr/share/datasets/fashion-mnist. Any image
 * count is accepted when images and labels agree; images must be 28x28 and
 * labels 0..9. NULL + error on failure. */
CLRT_API clrt_dataset *clrt_dataset_fashion_mnist(const char *dir, int train);
/* CIFAR-10 binary format: data_batch_1.bin..data_batch_5.bin (train 1) or
 * test_batch.bin (train 0) in dir (required: there is no default). Each
 * record is 1 label byte (0..9) and 3072 pixel bytes (R, G, B planes of
 * 32x32). A file may hold any positive number of whole records (the real
 * ones hold 10000), so its size must be a multiple of 3073. */
CLRT_API clrt_dataset *clrt_dataset_cifar10(const char *dir, int train);
/* A data set of samples the program holds in memory: n samples of float32
 * features, each of shape sample_shape (1 to 3 dims: [D], [C, L],
 * [C, H, W], sample after sample, row-major), and one int32 label each, in
 * 0..num_classes-1. Both arrays are copied; gathers give the features as
 * they are (no normalisation). name (at most 31 bytes kept) is for
 * messages. NULL + CLRT_EINVAL naming the first bad label or size. */
CLRT_API clrt_dataset *clrt_dataset_from_arrays(const char *name, const float *features,
                                                int sample_ndim, const int64_t *sample_shape,
                                                const int32_t *labels, int64_t n, int num_classes);
/* A data set of token sequences for a language model: from a stream of n
 * int32 tokens in 0..vocab-1, sample i is the `block` tokens from i*block
 * (int32 [block]) and its labels the token after each (int32 [block]:
 * tokens i*block+1 .. (i+1)*block), the next-token targets; (n - 1) /
 * block samples, the tail that fills no sample left out. A batch is x
 * [N, block] and labels [N, block], both int32. The tokens are copied.
 * NULL + CLRT_EINVAL naming the first token out of range, or a stream too
 * short for one sample. */
CLRT_API clrt_dataset *clrt_dataset_tokens(const char *name, const int32_t *tokens, int64_t n,
                                           int block, int vocab);
CLRT_API void clrt_dataset_free(clrt_dataset *ds); /* NULL: no-op */

/* "fashion-mnist/train", "fashion-mnist/test", "cifar10/train", "cifar10/test". */
CLRT_API const char *clrt_dataset_name(const clrt_dataset *ds);
CLRT_API int64_t clrt_dataset_size(const clrt_dataset *ds); /* samples; -1 if ds is NULL */
/* {1, 28, 28} for Fashion-MNIST, {3, 32, 32} for CIFAR-10; an array data
 * set's shape right-aligned with 1s before ({1, 1, D} for [D]). */
CLRT_API void clrt_dataset_sample_shape(const clrt_dataset *ds, int64_t chw[3]);
/* The sample's shape as given (3 dims for images): its dims into shape[],
 * their count returned (0 for NULL). A batch is [n] + this shape. */
CLRT_API int clrt_dataset_sample_dims(const clrt_dataset *ds, int64_t shape[3]);
CLRT_API int clrt_dataset_num_classes(const clrt_dataset *ds); /* 10; the vocabulary for tokens */
/* The dtype a batch's x has: CLRT_I32 for token sequences, else CLRT_F32. */
CLRT_API clrt_dtype clrt_dataset_sample_dtype(const clrt_dataset *ds);
/* Labels per sample: block for token sequences, else 1 (a batch's labels
 * are [N] then, [N, block] for tokens). */
CLRT_API int64_t clrt_dataset_labels_per_sample(const clrt_dataset *ds);
/* "T-shirt/top", ..., "Ankle boot" / "airplane", ..., "truck";
 * NULL + error when label is out of range or the set has no names. */
CLRT_API const char *clrt_dataset_class_name(const clrt_dataset *ds, int label);

/* Keeps the first n samples (n >= 0); n at or above the size keeps all. */
CLRT_API clrt_status clrt_dataset_limit(clrt_dataset *ds, int64_t n);

/* Gathers samples idx[0..count) into host memory, normalised as float32
 * (count*C*H*W floats, sample after sample, each C-major) and labels
 * (count int32). Either x or y may be NULL to skip it. Every index is
 * checked before anything is written. */
CLRT_API clrt_status clrt_dataset_gather(const clrt_dataset *ds, const int64_t *idx, int64_t count,
                                         float *x, int32_t *y);
/* The same for any data set: x receives count samples of the sample dtype
 * (4 bytes an element), y count * clrt_dataset_labels_per_sample labels.
 * (clrt_dataset_gather refuses token sequences with CLRT_EDTYPE.) */
CLRT_API clrt_status clrt_dataset_gather_into(const clrt_dataset *ds, const int64_t *idx,
                                              int64_t count, void *x, int32_t *y);

/* idx = a permutation of 0..n-1 from seed (Fisher-Yates driven by
 * splitmix64, unbiased): the same seed gives the same order everywhere. */
CLRT_API clrt_status clrt_shuffle_indices(int64_t *idx, int64_t n, uint64_t seed);

#ifdef __cplusplus
}
#endif
#endif
