/* clrt-cnn --distributed: the MPI job around one training run. Every rank
 * trains on its own devices; rank 0 prints (the others' stdout goes to
 * /dev/null, their errors still to stderr). */
#include "../cnn.h"

#include <clrt/mpi.h>

int cnn_dist_begin(int *argc, char ***argv, cnn_options *o)
{
    int provided = 0, size = 1;
    if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
        fprintf(stderr, "clrt-cnn: --distributed: MPI_Init_thread failed\n");
        return 1;
    }
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_rank(MPI_COMM_WORLD, &o->rank);
    o->local_rank = clrt_mpi_local_rank(MPI_COMM_WORLD);
    o->world = o->local_rank >= 0 ? clrt_mpi_collective(MPI_COMM_WORLD) : NULL;
    if (!o->world) {
        fprintf(stderr, "clrt-cnn (rank %d of %d): %s\n", o->rank, size, clrt_last_error());
        MPI_Abort(MPI_COMM_WORLD, 1);
        return 1;
    }
    if (o->rank > 0 && !freopen("/dev/null", "w", stdout))
        fprintf(stderr, "clrt-cnn (rank %d): cannot silence stdout\n", o->rank);
    printf("distributed: %d processes (MPI)\n", size);
    return 0;
}

void cnn_dist_abort(const cnn_options *o, int rc)
{
    fprintf(stderr, "clrt-cnn: rank %d of %d failed (its error is above); ending the job\n",
            o->rank, o->world->size);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, rc);
}

void cnn_dist_end(cnn_options *o)
{
    clrt_mpi_collective_free(o->world);
    o->world = NULL;
    MPI_Finalize();
}
