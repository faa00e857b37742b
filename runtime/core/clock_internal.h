/* The library's one clock: seconds on a monotonic clock, for timings that
 * are reported (epoch and pass times, the data/compute split), and the one
 * way the host sleeps. */
#ifndef CLRT_CLOCK_INTERNAL_H
#define CLRT_CLOCK_INTERNAL_H

/* Seconds since an arbitrary fixed point; never goes backwards. */
double clrt__now(void);
/* The same clock in integer nanoseconds (the profiler trace's host track). */
long long clrt__now_ns(void);
/* Sleeps about `seconds` (nothing when <= 0), resuming after signals. */
void clrt__sleep(double seconds);

#endif
