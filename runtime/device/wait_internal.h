/* Waiting for the device without spinning a core: the one way the host
 * waits for queued work (reads to the host, the batch stream's staging
 * buffers, clrt_device_synchronize).
 *
 * Why not clWaitForEvents or clFinish: NVIDIA's driver and PoCL's CPU driver
 * spin a host core in them, and on a CPU device that core is one the kernels
 * need. Why a flush first: OpenCL only promises that queued commands start
 * after a flush, a finish, a wait or a blocking call; Oclgrind (and NVIDIA's
 * driver, for commands still batched on the host) start nothing before. */
#ifndef CLRT_WAIT_INTERNAL_H
#define CLRT_WAIT_INTERNAL_H

#include "runtime/device/device_internal.h"

/* Waits until ev has completed. Flushes q (the queue ev's command is on; may
 * be NULL when the caller has flushed it); with no estimate (expect_s 0),
 * polls between sched_yield calls for up to 50 us first; sleeps about expect_s (the
 * caller's estimate of the time left; 0 when it has none), then polls the
 * event's status with sleeps that grow with the time waited past the
 * estimate (20 us up to 1 ms, at most an eighth of it), so the host
 * oversleeps by a small fraction of its misestimate. Does not release ev. CLRT_OK, or an
 * error naming `what` and the command's failure (a negative status). */
clrt_status clrt__wait_event(cl_command_queue q, cl_event ev, double expect_s, const char *what);

/* The one clFinish, for a CPU device whose buffers live in host memory
 * (clrt__device_host_addressable), before a blocking host copy there: the
 * copy is a memcpy on the calling thread, and PoCL's finish returns at once
 * on an idle queue and otherwise waits on a condition variable, where a
 * marker and clrt__wait_event cost a worker wake-up, 50-300 us per copy
 * (clrt-bench transfer). Never on a GPU: NVIDIA's driver spins in it. */
clrt_status clrt__finish_host_queue(clrt_device *d);

/* Waits until every command enqueued so far on d's queues (the compute
 * queue and the copy queue, if made) has finished: a marker on each, then
 * clrt__wait_event. Fails, too, once d has lost work (below). */
clrt_status clrt__device_drain(clrt_device *d);

/* Work that was enqueued and reported done but did not run (a native
 * command that found its buffers moved): recorded from the driver's thread
 * with a message; from then on every wait on d fails with it, as a CUDA
 * context's sticky errors do, since results that depend on the lost work
 * are wrong. clrt__device_lost: CLRT_OK, or that error (message set). */
void clrt__device_lose_work(clrt_device *d, const char *why);
clrt_status clrt__device_lost(clrt_device *d);

#endif
