/* The library's one clock: seconds on a monotonic clock, for timings that
 * are reported (epoch and pass times, the data/compute split). */
#ifndef CLRT_CLOCK_INTERNAL_H
#define CLRT_CLOCK_INTERNAL_H

/* Seconds since an arbitrary fixed point; never goes backwards. */
double clrt__now(void);

#endif
