/* Data sets of samples a program holds in memory: float32 features and
 * int32 labels (clrt_dataset_from_arrays, clrt/data.h). */
#include "runtime/data/dataset_internal.h"
#include "runtime/core/alloc_internal.h"

#include <stdlib.h>
#include <string.h>

static clrt_status check_arrays(const char *name, const float *features, int sample_ndim,
                                const int64_t *sample_shape, const int32_t *labels, int64_t n,
                                int num_classes)
{
    const char *op = "clrt_dataset_from_arrays";
    if (!name || (n > 0 && (!features || !labels)) || !sample_shape)
        return clrt__fail(CLRT_EINVAL, "%s: NULL name, features, labels or sample shape", op);
    if (n < 0 || sample_ndim < 1 || sample_ndim > 3 || num_classes < 1)
        return clrt__fail(CLRT_EINVAL,
                          "%s(%s): n %lld must be >= 0, sample_ndim %d in 1..3, num_classes %d "
                          ">= 1",
                          op, name, (long long)n, sample_ndim, num_classes);
    double numel = 1;
    for (int i = 0; i < sample_ndim; i++) {
        if (sample_shape[i] < 1)
            return clrt__fail(CLRT_EINVAL, "%s(%s): sample dim %d is %lld, not >= 1", op, name, i,
                              (long long)sample_shape[i]);
        numel *= (double)sample_shape[i];
    }
    if (numel * (double)(n > 0 ? n : 1) * sizeof(float) > (double)SIZE_MAX / 2)
        return clrt__fail(CLRT_ENOMEM, "%s(%s): %lld samples of %.0f features are too many", op,
                          name, (long long)n, numel);
    for (int64_t i = 0; i < n; i++)
        if (labels[i] < 0 || labels[i] >= num_classes)
            return clrt__fail(CLRT_EINVAL, "%s(%s): labels[%lld] = %d outside 0..%d", op, name,
                              (long long)i, labels[i], num_classes - 1);
    return CLRT_OK;
}

clrt_dataset *clrt_dataset_from_arrays(const char *name, const float *features, int sample_ndim,
                                       const int64_t *sample_shape, const int32_t *labels,
                                       int64_t n, int num_classes)
{
    if (check_arrays(name, features, sample_ndim, sample_shape, labels, n, num_classes) != CLRT_OK)
        return NULL;
    int64_t chw[3] = {1, 1, 1};
    for (int i = 0; i < sample_ndim; i++)
        chw[3 - sample_ndim + i] = sample_shape[i];
    clrt_dataset *ds = clrt__dataset_new(name, chw, num_classes, NULL, 0.0, 1.0);
    if (!ds)
        return NULL;
    size_t numel = clrt__sample_bytes(ds); /* elements of a sample */
    ds->sample_ndim = sample_ndim;
    ds->size = n;
    ds->features = clrt__malloc((size_t)(n > 0 ? n : 1) * numel * sizeof(float));
    ds->int_labels = clrt__malloc((size_t)(n > 0 ? n : 1) * sizeof(int32_t));
    if (!ds->features || !ds->int_labels) {
        clrt_dataset_free(ds);
        clrt__fail(CLRT_ENOMEM,
                   "clrt_dataset_from_arrays(%s): out of host memory for %lld "
                   "samples",
                   name, (long long)n);
        return NULL;
    }
    if (n > 0) {
        memcpy(ds->features, features, (size_t)n * numel * sizeof(float));
        memcpy(ds->int_labels, labels, (size_t)n * sizeof(int32_t));
    }
    return ds;
}
