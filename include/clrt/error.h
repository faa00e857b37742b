/* clrt/error.h — status codes and the per-thread error message.
 *
 * Calls that create an object return it, or NULL on failure; calls that do
 * not return a clrt_status (0 is OK, errors are negative). Either way
 * clrt_last_error() then says what failed and why. */
#ifndef CLRT_ERROR_H
#define CLRT_ERROR_H

#include <clrt/api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* X(name, value, description) */
#define CLRT_STATUS_MAP(X)                                       \
    X(OK, 0, "success")                                          \
    X(EINVAL, -1, "invalid argument")                            \
    X(ENODEV, -2, "no such device")                              \
    X(EDEVMISMATCH, -3, "tensors are on different devices")      \
    X(ESHAPE, -4, "shape mismatch")                              \
    X(EDTYPE, -5, "wrong dtype")                                 \
    X(ENOMEM, -6, "out of memory")                               \
    X(EOPENCL, -7, "OpenCL call failed")                         \
    X(EBUILD, -8, "kernel build failed")                         \
    X(EIO, -9, "file input/output error")                        \
    X(EFORMAT, -10, "corrupt or unexpected file contents")       \
    X(ENOTSUP, -11, "not supported")                             \
    X(ENOPLATFORM, -12, "no OpenCL platform")                    \
    X(ESTATE, -13, "object is in the wrong state for this call") \
    X(ENONFINITE, -14, "a value became NaN or infinite")         \
    X(ECOMM, -15, "communication between processes failed")

typedef enum {
#define CLRT__STATUS_ENUM(name, value, desc) CLRT_##name = value,
    CLRT_STATUS_MAP(CLRT__STATUS_ENUM)
#undef CLRT__STATUS_ENUM
} clrt_status;

/* "CLRT_ESHAPE: shape mismatch"-style short description of a code. */
CLRT_API const char *clrt_status_str(clrt_status s);
/* The symbolic name, e.g. "CLRT_ESHAPE". */
CLRT_API const char *clrt_status_name(clrt_status s);
/* This thread's last failure message; "" if none. Valid until the next
 * failing clrt call on this thread. */
CLRT_API const char *clrt_last_error(void);
/* This thread's last failure code (CLRT_OK if none since the last clear). */
CLRT_API clrt_status clrt_last_status(void);
CLRT_API void clrt_clear_error(void);
/* Sets this thread's code and message (printf-style) and returns code: for
 * code outside the library that reports through clrt's error path, such as
 * a clrt_collective's transport (clrt/collective.h). */
CLRT_API clrt_status clrt_set_error(clrt_status code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

#ifdef __cplusplus
}
#endif
#endif
