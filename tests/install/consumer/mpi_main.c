/* An outside program using the installed distributed part: one sum over
 * the processes of MPI_COMM_WORLD (run alone: one process). */
#include <clrt/mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    clrt_collective *world = clrt_mpi_collective(MPI_COMM_WORLD);
    float v[2] = {1.5f, 2.5f};
    int ok = world && world->sum_f32(world->ctx, v, 2) == CLRT_OK;
    if (ok)
        printf("clrt-mpi: rank %d of %d, sum %g %g\n", world->rank, world->size, v[0], v[1]);
    else
        fprintf(stderr, "clrt-mpi: %s\n", clrt_last_error());
    clrt_mpi_collective_free(world);
    MPI_Finalize();
    return ok ? 0 : 1;
}
