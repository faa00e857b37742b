/* clrt/mpi.h — libclrt_mpi, clrt's optional distributed part: a
 * clrt_collective (clrt/collective.h) over an MPI communicator, for
 * clrt_train_config.world. Built when OpenMPI's development files are
 * found (-DCLRT_MPI=ON|OFF|AUTO); link clrt::clrt_mpi (CMake,
 * find_package(clrt COMPONENTS mpi)) or `pkg-config clrt-mpi`.
 *
 *   MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
 *   clrt_collective *world = clrt_mpi_collective(MPI_COMM_WORLD);
 *   cfg.world = world;                  // every rank: the same model, seed, data
 *   trainer = clrt_trainer_new(model, opt, train, test, &cfg);
 *   ...
 *   clrt_mpi_collective_free(world);
 *   MPI_Finalize();
 *
 * The sums are MPI_Allreduce (MPI_SUM, in place) and the broadcast
 * MPI_Bcast, on a duplicate of the communicator whose errors return
 * (MPI_ERRORS_RETURN): an MPI failure is a CLRT_ECOMM with MPI's message,
 * never an abort by the library. Calls come from the thread that trains;
 * MPI_THREAD_FUNNELED is enough when only that thread calls MPI.
 *
 * Ownership: the caller owns what clrt_mpi_collective returns and frees it
 * with clrt_mpi_collective_free (collective over the communicator, like
 * MPI_Comm_free) after the trainers that use it. */
#ifndef CLRT_MPI_H
#define CLRT_MPI_H
#include <clrt/collective.h>
#include <mpi.h>
#ifdef __cplusplus
extern "C" {
#endif

/* The group of comm's processes, rank and size as in comm. MPI must be
 * initialised. NULL + error (CLRT_ESTATE before MPI_Init, CLRT_ECOMM). */
CLRT_API clrt_collective *clrt_mpi_collective(MPI_Comm comm);
CLRT_API void clrt_mpi_collective_free(clrt_collective *c); /* NULL: no-op */

/* This process's rank among comm's processes on the same host (for
 * picking a local device: gpu:local_rank), or -1 + error. Collective. */
CLRT_API int clrt_mpi_local_rank(MPI_Comm comm);

#ifdef __cplusplus
}
#endif
#endif
