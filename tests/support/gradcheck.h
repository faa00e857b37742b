/* The gradient-check harness (tests/gradcheck.c) that test_gradcheck.c's
 * table of cases runs: each case is an op of the library's table called
 * on fresh random inputs, checked forward against a float64 reference, and
 * backward (clrt_backward_with from a random upstream gradient r) against
 * central finite differences of that reference's sum(out * r). An op
 * whose result is not float32 (a comparison's uint8) is checked forward
 * only, and must not be recorded. */
#ifndef CLRT_GRADCHECK_H
#define CLRT_GRADCHECK_H

#include "testutil.h"

#define GC_MAX_IN 6

/* How an input's values are drawn. */
typedef enum {
    GC_UNIFORM,  /* uniform in [-1, 1) */
    GC_POSITIVE, /* uniform in [0.5, 2) (log, sqrt, divisors) */
    GC_AWAY,     /* uniform in [-1, 1) with |x| >= 0.1 (kinks at 0: relu, abs, clamp) */
    GC_INDEX,    /* int32 in [0, range) */
    GC_MASK,     /* uint8 0 or 1 */
} gc_values;

typedef struct {
    int ndim;
    int64_t shape[8];
    gc_values values;
    int range;      /* GC_INDEX: the bound */
    int transposed; /* the op sees clrt_transpose(leaf, -1, -2) of a leaf that
                       requires grad: a gradient through a layout change */
    int constant;   /* a float input that does not require grad */
} gc_input;

typedef struct gc_case gc_case;

/* The op's call on the inputs as the op sees them; a new reference. */
typedef clrt_tensor *(*gc_call)(const gc_case *c, clrt_tensor *const *in);
/* The float64 reference: writes out and returns its element count (what
 * the op's output must have). in[i] has shape c->in[i].shape (as the op
 * sees it: transposed inputs transposed). */
typedef size_t (*gc_ref)(const gc_case *c, const double *const *in, double *out);

struct gc_case {
    const char *op;    /* the library's op name, e.g. "clrt_add" */
    const char *label; /* what this case covers */
    int n_in;
    gc_input in[GC_MAX_IN];
    gc_call call;
    gc_ref ref;
    int64_t i[8]; /* the op's whole-number arguments */
    double f[2];  /* its scalar arguments */
    double tol;   /* norm-wise bound on the gradients (0: the default 1e-3) */
};

/* The worst errors of a run: forward (relative to the largest |ref|),
 * gradients (norm-wise relative to the finite differences), and a status
 * with a message when the op or the harness failed. */
typedef struct {
    double forward, grad;
    int failed;
    char why[512];
} gc_result;

/* Runs case c (with `call` instead of c->call when not NULL) on the test
 * device with seed `seed`. */
gc_result gc_run(const gc_case *c, gc_call call, uint64_t seed);

/* Index helpers for references: the flat index of coordinates idx in a
 * row-major shape, and the coordinates of flat index k; broadcasting reads
 * coordinates right-aligned, with size-1 dims pinned to 0. */
int64_t gc_numel(int ndim, const int64_t *shape);
void gc_coords(int64_t k, int ndim, const int64_t *shape, int64_t *idx);
int64_t gc_bcast_index(const int64_t *idx, int out_ndim, int ndim, const int64_t *shape);

#endif
