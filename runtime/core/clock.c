/* The monotonic clock behind every reported timing, and the host's sleep
 * (clock_internal.h). */
#include "runtime/core/clock_internal.h"

#include <errno.h>
#include <time.h>

double clrt__now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

long long clrt__now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

void clrt__sleep(double seconds)
{
    if (!(seconds > 0))
        return;
    struct timespec left = {(time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9)};
    while (nanosleep(&left, &left) != 0 && errno == EINTR) {
    }
}
