/* common.cl — prepended to every kernel family. OpenCL C 1.2 only. */
#ifndef T
#define T float
#endif
