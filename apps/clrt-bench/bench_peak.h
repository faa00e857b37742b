/* clrt-bench peak's parts: the FP32 peak a device's specification gives
 * (peak_spec.c), set beside the rate bench_peak.c measures. */
#ifndef CLRT_BENCH_PEAK_H
#define CLRT_BENCH_PEAK_H

#include "bench.h"

typedef struct {
    double gflops;              /* FP32 GFLOP/s, an FMA counted as 2; 0 when unknown */
    char kind[16];              /* "datasheet" (NVIDIA), "estimate" (a CPU), "" */
    char basis[320];            /* how the figure was reached, or why there is none */
    char compute_capability[8]; /* NVIDIA's "9.0", else "" */
} bench_peak_spec;

/* Fills *out for d; 1 when a figure was found, 0 when not (basis says why). */
int bench_peak_spec_of(const clrt_device *d, bench_peak_spec *out);

#endif
