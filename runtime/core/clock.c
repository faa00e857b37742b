/* The monotonic clock behind every reported timing (clock_internal.h). */
#include "runtime/core/clock_internal.h"

#include <time.h>

double clrt__now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
