/* What the layers above autograd use of it: the dispatcher through which
 * every public op of the table runs, and the nodes modules record. */
#ifndef CLRT_AUTOGRAD_INTERNAL_H
#define CLRT_AUTOGRAD_INTERNAL_H

#include "runtime/ops/op_table.h"

#include <clrt/autograd.h>

/* Runs def's forward on the n inputs (grad mode off inside it) and, when
 * grad mode is on and an input requires grad, records the call (a node
 * saving what def's backward reads): the result then requires grad. A new
 * reference, or NULL + error (nothing recorded). a may be NULL. */
clrt_tensor *clrt__dispatch(const clrt__op_def *def, int n, clrt_tensor *const *in,
                            const clrt__op_attrs *a);

static inline clrt_tensor *clrt__dispatch1(const clrt__op_def *def, clrt_tensor *x,
                                           const clrt__op_attrs *a)
{
    return clrt__dispatch(def, 1, &x, a);
}

static inline clrt_tensor *clrt__dispatch2(const clrt__op_def *def, clrt_tensor *x, clrt_tensor *y,
                                           const clrt__op_attrs *a)
{
    clrt_tensor *in[2] = {x, y};
    return clrt__dispatch(def, 2, in, a);
}

#endif
