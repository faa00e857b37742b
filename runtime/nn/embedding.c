/* Embedding (nn.Embedding): a table of num rows of dim, looked up by int32
 * ids; composed of clrt_f_embedding, so autograd gives its backward. */
#include "runtime/nn/module_internal.h"
#include "runtime/core/alloc_internal.h"
#include <clrt/ops_nn.h>

#include <stdio.h>
#include <stdlib.h>

typedef struct {
    int num, dim;
} embedding_shape;

/* N(0, 1), as nn.Embedding's reset_parameters. */
static clrt_status embedding_init(clrt_module *m)
{
    return clrt__init_normal(m->params[0].value, 1.0, m->init_seed, 0);
}

static clrt_tensor *embedding_forward(clrt_module *m, int n, clrt_tensor *const *in, void *user)
{
    (void)user;
    if (n != 1) {
        clrt__fail(CLRT_EINVAL, "Embedding takes one input (int32 ids), got %d", n);
        return NULL;
    }
    return clrt_f_embedding(in[0], m->params[0].value);
}

static void embedding_describe(const clrt_module *m, const void *user, char *buf, size_t cap)
{
    (void)m;
    const embedding_shape *s = user;
    snprintf(buf, cap, "(%d, %d)", s->num, s->dim);
}

static void *embedding_clone_user(const void *user)
{
    embedding_shape *copy = clrt__malloc(sizeof *copy);
    if (copy)
        *copy = *(const embedding_shape *)user;
    return copy;
}

static const clrt_module_def embedding_def = {.kind = "Embedding",
                                              .forward = embedding_forward,
                                              .describe = embedding_describe,
                                              .clone_user = embedding_clone_user,
                                              .free_user = free};

clrt_module *clrt_embedding(int num_embeddings, int embedding_dim)
{
    if (num_embeddings < 1 || embedding_dim < 1) {
        clrt__fail(CLRT_EINVAL,
                   "clrt_embedding(%d, %d): num_embeddings and embedding_dim must be >= 1",
                   num_embeddings, embedding_dim);
        return NULL;
    }
    embedding_shape *s = clrt__malloc(sizeof *s);
    if (!s) {
        clrt__fail(CLRT_ENOMEM, "clrt_embedding: out of host memory");
        return NULL;
    }
    *s = (embedding_shape){num_embeddings, embedding_dim};
    clrt_module *m = clrt__module_composed(&embedding_def, s, embedding_init);
    if (!m) {
        free(s);
        return NULL;
    }
    int64_t shape[2] = {num_embeddings, embedding_dim};
    if (clrt__module_add_param(m, "weight", 2, shape) != CLRT_OK || embedding_init(m) != CLRT_OK) {
        clrt_module_free(m);
        return NULL;
    }
    return m;
}
