/* Broadcasting binary ops, shared by the elementwise API and the layers. */
#ifndef CLRT_BINARY_INTERNAL_H
#define CLRT_BINARY_INTERNAL_H

#include "runtime/tensor/tensor_internal.h"

/* NumPy broadcast of a and b's shapes into (ndim, shape); ESHAPE if none. */
clrt_status clrt__broadcast_shape(const char *op, const clrt_tensor *a, const clrt_tensor *b,
                                  int *ndim, int64_t *shape);
/* out = a (op) b, op one of "add" "sub" "mul" "div"; out has the broadcast
 * shape and may alias a (same shape). Arguments already checked. */
clrt_status clrt__binary_into(const char *op, clrt_tensor *a, clrt_tensor *b, clrt_tensor *out);
/* Checked, allocating form; `api` names the public call in errors. */
clrt_tensor *clrt__binary(const char *op, const char *api, clrt_tensor *a, clrt_tensor *b);

#endif
