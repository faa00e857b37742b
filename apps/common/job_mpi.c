/* --distributed: the MPI job around one training run. Every rank trains on
 * its own devices; rank 0 prints (the others' stdout goes to /dev/null,
 * their errors still to stderr). */
#include "app.h"

#include <clrt/mpi.h>

int app_job_begin(int *argc, char ***argv, const char *prog, app_job *job)
{
    int provided = 0;
    *job = (app_job){.size = 1, .prog = prog};
    if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
        fprintf(stderr, "%s: --distributed: MPI_Init_thread failed\n", prog);
        return 1;
    }
    MPI_Comm_size(MPI_COMM_WORLD, &job->size);
    MPI_Comm_rank(MPI_COMM_WORLD, &job->rank);
    job->local_rank = clrt_mpi_local_rank(MPI_COMM_WORLD);
    job->world = job->local_rank >= 0 ? clrt_mpi_collective(MPI_COMM_WORLD) : NULL;
    if (!job->world) {
        fprintf(stderr, "%s (rank %d of %d): %s\n", prog, job->rank, job->size, clrt_last_error());
        MPI_Abort(MPI_COMM_WORLD, 1);
        return 1;
    }
    if (job->rank > 0 && !freopen("/dev/null", "w", stdout))
        fprintf(stderr, "%s (rank %d): cannot silence stdout\n", prog, job->rank);
    printf("distributed: %d processes (MPI)\n", job->size);
    return 0;
}

void app_job_abort(const app_job *job, int rc)
{
    fprintf(stderr, "%s: rank %d of %d failed (its error is above); ending the job\n", job->prog,
            job->rank, job->size);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, rc);
}

void app_job_end(app_job *job)
{
    clrt_mpi_collective_free(job->world);
    job->world = NULL;
    MPI_Finalize();
}
