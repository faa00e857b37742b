/* Internal error helpers: set this thread's message and return the code. */
#ifndef CLRT_ERROR_INTERNAL_H
#define CLRT_ERROR_INTERNAL_H

#include "runtime/core/cl.h"
#include <clrt/error.h>

#if defined(__GNUC__)
#define CLRT__PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define CLRT__PRINTF(f, a)
#endif

/* What a path of an op returns when it does not apply to these arguments
 * (a grid too large, a scratch cap too small): no message is set and the
 * caller takes its next path. Positive, so never a public clrt_status. */
#define CLRT__DECLINED ((clrt_status)1)

/* Sets the message (printf-style) and status; returns code: the public
 * clrt_set_error (clrt/error.h) under the name the library's code uses. */
#define clrt__fail clrt_set_error
/* "clCreateContext failed: CL_INVALID_VALUE (-30)"; out-of-memory
 * OpenCL codes map to CLRT_ENOMEM, everything else to CLRT_EOPENCL. */
clrt_status clrt__fail_cl(cl_int err, const char *what);
const char *clrt__cl_error_name(cl_int err);

#endif
