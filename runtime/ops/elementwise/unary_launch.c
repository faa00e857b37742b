/* How unary.cl's kernels are built and launched: one program a device,
 * with its items VW elements wide (clkernels/unary.cl says why). */
#include "runtime/ops/elementwise/unary_internal.h"

#include "runtime/device/arch_internal.h"

#include <stdio.h>

static unsigned lanes_of(clrt_device *d)
{
    return clrt__cpu_style(d) ? clrt__cpu_vector_lanes(d) : 1;
}

cl_kernel clrt__unary_kernel(clrt_device *d, const char *name)
{
    char options[32];
    snprintf(options, sizeof options, "-DVW=%u -DVW_VECTORS", lanes_of(d));
    return clrt__kernel(d, "unary", options, name);
}

clrt_status clrt__run_unary(clrt_device *d, const char *name, size_t n, int nargs,
                            const clrt__karg *args)
{
    cl_kernel k = clrt__unary_kernel(d, name);
    return k ? clrt__launch_1d(d, k, clrt__ceil_div(n, lanes_of(d)), nargs, args)
             : clrt_last_status();
}
