/* The one place that includes the OpenCL headers, pinned to 1.2 APIs so
 * the library runs on NVIDIA's driver as well as on OpenCL 3.0 ones. */
#ifndef CLRT_CL_H
#define CLRT_CL_H
#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>
#endif
