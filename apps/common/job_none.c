/* --distributed in a build without MPI (libclrt_mpi not built): a clear
 * refusal. */
#include "app.h"

int app_job_begin(int *argc, char ***argv, const char *prog, app_job *job)
{
    (void)argc, (void)argv, (void)job;
    fprintf(stderr,
            "%s: --distributed: this %s was built without MPI; install "
            "libopenmpi-dev and configure with -DCLRT_MPI=ON\n",
            prog, prog);
    return 1;
}

void app_job_abort(const app_job *job, int rc) { (void)job, (void)rc; }

void app_job_end(app_job *job) { (void)job; }
