/* clrt-lm: a character-level language model (clrt_gpt) trained on any
 * text file, on any device, data parallel over devices and MPI ranks; and
 * text sampled from its checkpoints. */
#ifndef CLRT_LM_H
#define CLRT_LM_H

#include "../common/app.h"
#include <clrt/checkpoint.h>

#define LM_DEFAULT_TEXT "/usr/share/games/fortunes"

typedef struct {
    const char *text;    /* --text FILE|FOLDER */
    const char *device;  /* NULL: the best device */
    const char *devices; /* --devices LIST|all: data-parallel training, or NULL */
    clrt_device *dp[CLRT_MAX_DATA_PARALLEL];
    int n_dp;
    int block, d_model, heads, layers, dim_ff;
    double dropout;
    int epochs, batch_size, warmup; /* warm-up epochs of the learning rate */
    int constant;                   /* --schedule constant: lr throughout */
    double lr, min_lr, weight_decay;
    double val_fraction; /* the text's tail held out for the validation loss */
    int64_t max_chars;   /* 0: the whole text */
    uint64_t seed;
    const char *save, *resume, *logdir;
    /* --sample N: generate N characters from --checkpoint instead of training */
    int sample;
    const char *checkpoint, *prompt;
    double temperature;
    int profile; /* --profile: the operations with the most device time, at the end */
    int distributed;
    app_job job;
} lm_options;

/* Parses argv. 0 to go on, 1 when --help was printed (exit 0), -1 after
 * printing an error and the usage (exit 2). */
int lm_parse_options(int argc, char **argv, lm_options *o);

/* A text and its vocabulary: the distinct bytes it holds, sorted (a
 * "character" is a byte: UTF-8 letters outside ASCII are several). */
typedef struct {
    unsigned char *bytes;
    int64_t n;
    int vocab;
    unsigned char chars[256]; /* id -> byte */
    int ids[256];             /* byte -> id, -1 outside the vocabulary */
} lm_text;

/* Reads a text file, or every regular file of a folder in name order but
 * fortune's .dat indexes (text.c): refuses a missing, empty or binary text
 * and what is not a regular file. 0, or 1 after printing why. */
int lm_text_read(const char *path, int64_t max_chars, lm_text *t);
void lm_text_free(lm_text *t);
/* The vocabulary as hex ("0a2021..."), for checkpoints, and back. */
void lm_vocab_hex(const lm_text *t, char *out, size_t cap);
int lm_vocab_from_hex(const char *hex, lm_text *t);
/* Bytes to ids; 0, or 1 after printing the first byte outside the
 * vocabulary (what names it: e.g. "--prompt"). */
int lm_encode(const lm_text *t, const char *what, const unsigned char *s, int64_t n, int32_t *ids);

/* Trains per o (train.c); 0, or 1 after printing why. */
int lm_train(lm_options *o, const lm_text *t, clrt_device *d);
/* --sample (sample.c): 0, or 1 after printing why. */
int lm_sample(const lm_options *o, clrt_device *d);

/* The model's shape as checkpoint run pairs (checkpoint.c), the data and
 * recipe too when training; and the saving and resuming of a run. */
int lm_checkpoint_save(const lm_options *o, const lm_text *t, clrt_module *model,
                       clrt_optimizer *opt, int epochs, int64_t train_samples);
int lm_checkpoint_resume(const lm_options *o, const lm_text *t, clrt_module *model,
                         clrt_optimizer *opt, int64_t train_samples, int *done);

#endif
