/* Data sets of token sequences for language models (clrt_dataset_tokens,
 * clrt/data.h): the stream kept once, samples cut from it at gather time. */
#include "runtime/data/dataset_internal.h"
#include "runtime/core/alloc_internal.h"

#include <string.h>

static clrt_status check_tokens(const char *name, const int32_t *tokens, int64_t n, int block,
                                int vocab)
{
    const char *op = "clrt_dataset_tokens";
    if (!name || !tokens)
        return clrt__fail(CLRT_EINVAL, "%s: NULL name or tokens", op);
    if (block < 1 || vocab < 1)
        return clrt__fail(CLRT_EINVAL, "%s(%s): block %d and vocab %d must be >= 1", op, name,
                          block, vocab);
    if (n < (int64_t)block + 1)
        return clrt__fail(CLRT_EINVAL,
                          "%s(%s): %lld tokens hold no sample of %d tokens and its next one", op,
                          name, (long long)n, block);
    for (int64_t i = 0; i < n; i++)
        if (tokens[i] < 0 || tokens[i] >= vocab)
            return clrt__fail(CLRT_EINVAL, "%s(%s): tokens[%lld] = %d outside 0..%d", op, name,
                              (long long)i, tokens[i], vocab - 1);
    return CLRT_OK;
}

clrt_dataset *clrt_dataset_tokens(const char *name, const int32_t *tokens, int64_t n, int block,
                                  int vocab)
{
    if (check_tokens(name, tokens, n, block, vocab) != CLRT_OK)
        return NULL;
    int64_t chw[3] = {1, 1, block};
    clrt_dataset *ds = clrt__dataset_new(name, chw, vocab, NULL, 0.0, 1.0);
    if (!ds)
        return NULL;
    ds->sample_ndim = 1;
    ds->size = (n - 1) / block;
    ds->n_tokens = n;
    if (!(ds->tokens = clrt__malloc((size_t)n * sizeof *tokens))) {
        clrt_dataset_free(ds);
        clrt__fail(CLRT_ENOMEM, "clrt_dataset_tokens(%s): out of host memory for %lld tokens", name,
                   (long long)n);
        return NULL;
    }
    memcpy(ds->tokens, tokens, (size_t)n * sizeof *tokens);
    return ds;
}
