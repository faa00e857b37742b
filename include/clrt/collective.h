/* clrt/collective.h — what training across several processes needs from
 * their communication: sums and a broadcast over a fixed group of
 * processes, the "world". The core library only calls these; it never
 * links a transport. clrt/mpi.h (the optional libclrt_mpi) makes one from
 * an MPI communicator; a test or another transport can fill one in too.
 *
 * Every call is collective: each process of the group makes the same calls
 * in the same order, with the same counts, from the one thread that trains.
 * A process that stops making them (it failed, or exited) leaves the others
 * waiting inside the transport, so a program that gets an error in a
 * distributed run must end the whole job (MPI_Abort), as clrt-cnn does.
 *
 * Ownership: the caller owns the struct and ctx; clrt borrows them for as
 * long as a trainer given them lives. */
#ifndef CLRT_COLLECTIVE_H
#define CLRT_COLLECTIVE_H
#include <clrt/error.h>
#include <stddef.h>
#include <stdint.h>
#ifdef __cplusplus
extern "C" {
#endif

typedef struct clrt_collective {
    int rank; /* this process, 0 .. size-1 */
    int size; /* processes in the group, >= 1 */
    void *ctx;
    /* In place, on host memory: buf[i] becomes the sum of buf[i] over the
     * group, on every process. */
    clrt_status (*sum_f32)(void *ctx, float *buf, int64_t n);
    clrt_status (*sum_f64)(void *ctx, double *buf, int64_t n);
    /* Process root's `bytes` bytes at buf to every process's buf. */
    clrt_status (*broadcast)(void *ctx, void *buf, size_t bytes, int root);
} clrt_collective;

#ifdef __cplusplus
}
#endif
#endif
