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
#include <clrt/api.h>
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

/* Checks that every process of w has the same n items (names[i] =
 * values[i], strings, compared whole): collective, every process calls it
 * with the same n, in the same order as its other collective calls. On a
 * difference every process returns CLRT_EINVAL with one message: `what`,
 * the first rank that differs, the first item it differs in, its value and
 * rank 0's (each quoted up to 159 characters). A NULL world or one
 * process: CLRT_OK. n is at most 64. clrt_trainer_new uses it for the
 * model, data, options and optimizer, and each epoch for the epoch number
 * and the learning rate; a program uses it for its own options. */
CLRT_API clrt_status clrt_collective_agree(const clrt_collective *w, int n,
                                           const char *const *names, const char *const *values,
                                           const char *what);

#ifdef __cplusplus
}
#endif
#endif
